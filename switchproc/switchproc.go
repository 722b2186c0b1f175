// Package switchproc runs software switch processes for tests, the
// emulation and users: BMv2's simple_switch_grpc, the P4Runtime-enabled
// switch, or p4rcm's own Go target, p4switch, which takes the same
// command line. It starts a switch with the command line the p4lang
// tutorials use, waits until its P4Runtime (gRPC) port accepts
// connections, sets queue rates and depths (through simple_switch_CLI on
// BMv2, through p4switch's control socket on the Go target), and stops
// it by PID.
//
// BMv2 is in no package registry; build it from p4lang/behavioral-model
// with PI support (configure --with-pi, then targets/simple_switch_grpc)
// and put simple_switch_grpc and simple_switch_CLI on the PATH.
package switchproc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Binaries are the programs this package runs, looked up on the PATH.
const (
	SwitchBinary = "simple_switch_grpc"
	CLIBinary    = "simple_switch_CLI"
	// GoSwitchBinary is p4rcm's own target (cmd/p4switch), which takes
	// simple_switch_grpc's command line.
	GoSwitchBinary = "p4switch"
)

// Target says which program runs a switch.
type Target string

const (
	// TargetBMv2 is BMv2's simple_switch_grpc, the default.
	TargetBMv2 Target = "bmv2"
	// TargetGo is p4rcm's Go target, p4switch: the same command line,
	// the same P4Runtime service; queue rates and depths go through its
	// control socket instead of simple_switch_CLI.
	TargetGo Target = "go"
)

// DefaultQueueRate is the egress queue rate, in packets per second, an
// emulated fabric gives every switch port on target t unless told
// otherwise: the emulated link rate (at 1500-byte frames, 140 packets per
// second is 1.7 Mb/s, 8,000 is 96 Mb/s). It is sized so that the busiest
// switch of a 4:1 incast, four ports sending into one at this rate, is
// offered at most half the rate the target forwards with rcm.p4 loaded
// on a 2-core machine (BenchmarkRig in internal/switchbench, whose
// incast-load metric is that share). BMv2 1.15.5 built by p4/README.md's
// steps forwarded today's rcm.p4 at 3,312 to 3,876 packets per second on
// 2026-11-27 (incast-load 0.14-0.17), and at 1,157 to 1,219 in issue
// 33's measurement on another build and machine (200 packets per
// second, the default sized for November's first program, made that
// 0.66-0.76): 140 keeps the slower at 0.46-0.48. The Go target forwards
// it at over 100,000. The other half is for the host agents, the other
// switches and slower machines. Above it, BMv2's input queues overflow
// in the kernel before the program sees a packet: losses PFC cannot
// prevent.
func (t Target) DefaultQueueRate() float64 {
	if t == TargetGo {
		return 8_000
	}
	return 140
}

// FreePort is a TCP port on 127.0.0.1 that nothing listens on now: for
// a switch's P4Runtime or Thrift server when the caller has none in mind.
func FreePort() (int, error) {
	ports, err := FreePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// FreeSwitchPorts are a P4Runtime and a Thrift port for one switch,
// distinct (BMv2 listens on both).
func FreeSwitchPorts() (grpc, thrift int, err error) {
	ports, err := FreePorts(2)
	if err != nil {
		return 0, 0, err
	}
	return ports[0], ports[1], nil
}

// FreePorts are n distinct TCP ports on 127.0.0.1 that nothing listens
// on now. Taken one by one, the kernel may hand out a port it just
// handed out (each is free again once its probe closes), and two
// switches of one fabric would then be given the same address.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("no free port: %w", err)
		}
		// Held until every port is chosen, so none is chosen twice.
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// maxSocketPath is the longest path a Unix socket takes on Linux
// (sun_path's 108 bytes, less the terminating NUL).
const maxSocketPath = 107

// ErrNotInstalled says a BMv2 program is not on the PATH.
var ErrNotInstalled = errors.New("not installed")

// Config is one switch's command line.
type Config struct {
	// Name labels the switch in messages and names its log file.
	Name string
	// DeviceID is the P4Runtime device ID.
	DeviceID uint64
	// Ports maps BMv2 port numbers to interface names (-i N@IFACE).
	Ports map[int]string
	// GRPCAddr is where the P4Runtime server listens, e.g.
	// "127.0.0.1:50051".
	GRPCAddr string
	// ThriftPort is the Thrift runtime port simple_switch_CLI talks to.
	ThriftPort int
	// CPUPort is the port that carries PacketIn/PacketOut to the
	// controller; 0 means none.
	CPUPort int
	// PriorityQueues is the number of strict-priority queues per egress
	// port (0: one queue). Priority 0 is the lowest.
	PriorityQueues int
	// JSON is the compiled program; empty starts the switch without one
	// (--no-p4), for the controller to push over P4Runtime.
	JSON string
	// LogDir, if set, receives <Name>.txt, the switch's log at
	// LogLevel ("info" if empty; "debug" and "trace" follow each packet
	// through the tables), and <Name>.out, the output of the process.
	// PcapDir, if set, receives one pcap file per port and direction.
	LogDir   string
	LogLevel string
	PcapDir  string
	// Target picks the program (TargetBMv2 if empty); Binary, if set, is
	// its path instead of the PATH's, and BinaryArgs come before the
	// switch's own arguments: for a program that runs the switch as one
	// of its commands ('p4ctl p4switch').
	Target     Target
	Binary     string
	BinaryArgs []string
	// Control is the Go target's control socket (Start picks one).
	Control string
	// TLS, if set, serves P4Runtime over TLS.
	TLS *ServerTLS
	// GoMaxProcs, when positive, is the Go target's GOMAXPROCS: how
	// many threads run its goroutines at once (a group's is its first
	// switch's). Zero leaves Go's default, one per core.
	GoMaxProcs int
}

// ServerTLS are simple_switch_grpc's TLS options: the switch's
// certificate and key and, for mutual TLS, the CA that signs the
// controllers'; Policy (the Go target's own) names the identities that
// may be primary.
type ServerTLS struct {
	CACert, Cert, Key string
	ClientAuth        bool
	Policy            string
}

// Args is the switch's command line after the program name: BMv2's own
// options first, then, after "--", simple_switch_grpc's.
func (c Config) Args() []string {
	var a []string
	ports := make([]int, 0, len(c.Ports))
	for p := range c.Ports {
		ports = append(ports, p)
	}
	sort.Ints(ports)
	for _, p := range ports {
		a = append(a, "-i", fmt.Sprintf("%d@%s", p, c.Ports[p]))
	}
	a = append(a, "--device-id", strconv.FormatUint(c.DeviceID, 10))
	a = append(a, "--thrift-port", strconv.Itoa(c.ThriftPort))
	if c.PcapDir != "" {
		a = append(a, "--pcap", c.PcapDir)
	}
	if c.LogDir != "" {
		level := c.LogLevel
		if level == "" {
			level = "info"
		}
		// BMv2 adds ".txt" to the name.
		a = append(a, "--log-file", filepath.Join(c.LogDir, c.Name), "--log-level", level, "--log-flush")
	}
	if c.Target == TargetGo && c.Control != "" {
		a = append(a, "--control", c.Control)
	}
	if c.JSON == "" {
		a = append(a, "--no-p4")
	} else {
		a = append(a, c.JSON)
	}
	a = append(a, "--", "--grpc-server-addr", c.GRPCAddr)
	if c.CPUPort != 0 {
		a = append(a, "--cpu-port", strconv.Itoa(c.CPUPort))
	}
	if c.PriorityQueues > 0 {
		a = append(a, "--priority-queues", strconv.Itoa(c.PriorityQueues))
	}
	if t := c.TLS; t != nil {
		a = append(a, "--grpc-server-ssl", "--grpc-server-cert", t.Cert, "--grpc-server-key", t.Key)
		if t.CACert != "" {
			a = append(a, "--grpc-server-cacert", t.CACert)
		}
		if t.ClientAuth {
			a = append(a, "--grpc-server-with-client-auth")
		}
		if t.Policy != "" && c.Target == TargetGo {
			a = append(a, "--grpc-server-policy", t.Policy)
		}
	}
	return a
}

func (c Config) check() error {
	switch {
	case c.Name == "":
		return errors.New("the switch needs a Name")
	case c.GRPCAddr == "":
		return fmt.Errorf("switch %s: no GRPCAddr", c.Name)
	case c.ThriftPort <= 0 || c.ThriftPort > 65535:
		return fmt.Errorf("switch %s: ThriftPort %d is not a port", c.Name, c.ThriftPort)
	case c.PriorityQueues < 0:
		return fmt.Errorf("switch %s: PriorityQueues %d is negative", c.Name, c.PriorityQueues)
	case c.Target != "" && c.Target != TargetBMv2 && c.Target != TargetGo:
		return fmt.Errorf("switch %s: target %q: want %q or %q", c.Name, c.Target, TargetBMv2, TargetGo)
	case c.GoMaxProcs < 0 || c.GoMaxProcs > 0 && c.Target != TargetGo:
		return fmt.Errorf("switch %s: GoMaxProcs %d: want a positive number, for the Go target only", c.Name, c.GoMaxProcs)
	}
	for p, ifc := range c.Ports {
		if p < 0 || ifc == "" {
			return fmt.Errorf("switch %s: port %d@%q", c.Name, p, ifc)
		}
	}
	return nil
}

// Switch is a running simple_switch_grpc, or one switch of a p4switch
// process that runs several (StartGroup).
type Switch struct {
	cfg Config
	*proc
}

// proc is a switch process: one switch's, or a group's.
type proc struct {
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited
	waitErr error
	out     *os.File // the process's stdout and stderr, when LogDir is set
	ctlDir  string   // the control sockets' directory, if Start made it
	// starter is the write end of the pipe a Go target watches
	// (--exit-with-fd): held until the process ends, closed by the
	// kernel if this one ends first.
	starter *os.File
}

// starterFD is the descriptor the Go target gets its end of the starter
// pipe as: the first of exec.Cmd's ExtraFiles.
const starterFD = 3

// start starts cmd. A Go target (watch) first gets the read end of a pipe
// whose write end s keeps: the switch stops when it reads end of file, so
// it does not outlive this process however this one ends (a test binary
// or an emulation killed with SIGKILL, or with SIGTERM before its
// cleanups). The flag goes after the binary's own leading arguments
// (binaryArgs: 'p4ctl p4switch'); this process closes its copy of the
// read end once the switch has its own. A Go target runs with
// goMaxProcs as its GOMAXPROCS when that is positive.
func (s *proc) start(cmd *exec.Cmd, watch bool, binaryArgs, goMaxProcs int) error {
	if watch && goMaxProcs > 0 {
		// The last of a name in Env is the one the process sees.
		cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(goMaxProcs))
	}
	if watch {
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		cmd.ExtraFiles = []*os.File{r}
		cmd.Args = slices.Insert(cmd.Args, 1+binaryArgs, "--exit-with-fd", strconv.Itoa(starterFD))
		s.starter = w
	}
	err := cmd.Start()
	for _, f := range cmd.ExtraFiles {
		f.Close()
	}
	return err
}

// Lookup finds a BMv2 program on the PATH, with an error that says what
// to install when it is missing.
func Lookup(name string) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		how := "build p4lang/behavioral-model with PI support and put it on the PATH"
		if name == GoSwitchBinary {
			how = "go install github.com/p4rcm/p4rcm/cmd/p4switch, or go build it and put it on the PATH"
		}
		return "", fmt.Errorf("%s %w (%s)", name, ErrNotInstalled, how)
	}
	return path, nil
}

// Start starts the switch and waits, until ctx ends, for its P4Runtime
// port to accept connections. If the process exits first, the error
// carries the end of its output.
func Start(ctx context.Context, c Config) (*Switch, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	bin := c.Binary
	if bin == "" {
		name := SwitchBinary
		if c.Target == TargetGo {
			name = GoSwitchBinary
		}
		var err error
		if bin, err = Lookup(name); err != nil {
			return nil, err
		}
	}
	s := &Switch{proc: &proc{done: make(chan struct{})}}
	if c.Target == TargetGo && c.Control == "" {
		dir, err := os.MkdirTemp("", "p4switch-"+c.Name)
		if err == nil && len(filepath.Join(dir, "control.sock")) > maxSocketPath {
			// A long TMPDIR leaves no room for the socket's name, which
			// the switch could then not listen on: /tmp has it.
			os.Remove(dir)
			dir, err = os.MkdirTemp("/tmp", "p4switch-"+c.Name)
		}
		if err != nil {
			return nil, fmt.Errorf("switch %s: %w", c.Name, err)
		}
		c.Control, s.ctlDir = filepath.Join(dir, "control.sock"), dir
	}
	s.cfg = c
	var err error
	s.cmd = exec.Command(bin, append(slices.Clip(c.BinaryArgs), c.Args()...)...)
	// Its own process group, so that stopping it reaches no one else.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var tail bytes.Buffer
	if c.LogDir != "" {
		if err := os.MkdirAll(c.LogDir, 0o755); err != nil {
			return nil, fmt.Errorf("switch %s: %w", c.Name, err)
		}
		if s.out, err = os.Create(filepath.Join(c.LogDir, c.Name+".out")); err != nil {
			return nil, fmt.Errorf("switch %s: %w", c.Name, err)
		}
		s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	} else {
		s.cmd.Stdout, s.cmd.Stderr = &tail, &tail
	}
	if c.PcapDir != "" {
		if err := os.MkdirAll(c.PcapDir, 0o755); err != nil {
			return nil, fmt.Errorf("switch %s: %w", c.Name, err)
		}
	}
	if err = s.start(s.cmd, c.Target == TargetGo, len(c.BinaryArgs), c.GoMaxProcs); err != nil {
		s.closeFiles()
		if s.ctlDir != "" {
			os.RemoveAll(s.ctlDir)
		}
		return nil, fmt.Errorf("switch %s: %w", c.Name, err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		s.closeFiles()
		if s.ctlDir != "" {
			os.RemoveAll(s.ctlDir)
		}
		close(s.done)
	}()
	for {
		conn, err := net.DialTimeout("tcp", c.GRPCAddr, 100*time.Millisecond)
		if err == nil {
			conn.Close()
			return s, nil
		}
		select {
		case <-s.done:
			out := tail.String()
			if c.LogDir != "" {
				b, _ := os.ReadFile(filepath.Join(c.LogDir, c.Name+".out"))
				out = string(b)
			}
			return nil, fmt.Errorf("switch %s: exited before its gRPC port %s opened (%v): %s", c.Name, c.GRPCAddr, s.waitErr, lastLines(out, 5))
		case <-ctx.Done():
			s.Stop()
			return nil, fmt.Errorf("switch %s: gRPC port %s not open: %w", c.Name, c.GRPCAddr, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// closeFiles closes what this process held open for the switch: its
// output file and its end of the starter pipe.
func (s *proc) closeFiles() {
	if s.out != nil {
		s.out.Close()
	}
	if s.starter != nil {
		s.starter.Close()
	}
}

// PID is the switch's process ID (a group's switches share one).
func (s *Switch) PID() int { return s.cmd.Process.Pid }

// Config is the switch's command line.
func (s *Switch) Config() Config { return s.cfg }

// Stop ends the switch and whatever it started: SIGTERM to its process
// group, SIGKILL to what is left after two seconds. It returns once the
// group is gone, and is safe to call more than once. A switch of a group
// (StartGroup) shares its process: stopping one stops them all.
func (s *Switch) Stop() error { return s.proc.stop(s.cfg.Name) }

func (s *proc) stop(name string) error {
	pgid := s.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.After(2 * time.Second)
	select {
	case <-s.done:
	case <-deadline:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-s.done
	}
	// Children of the switch may outlive it by a moment.
	for i := 0; syscall.Kill(-pgid, 0) == nil; i++ {
		if i == 40 {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		if i == 100 {
			return fmt.Errorf("switch %s: process group %d survived SIGKILL", name, pgid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// SetQueueRate sets the rate of port's egress queues, packets per second
// (simple_switch_CLI set_queue_rate): how congestion is made to appear.
func (s *Switch) SetQueueRate(port, pps int) error {
	return s.tm(fmt.Sprintf("set_queue_rate %d %d", pps, port))
}

// SetPortRate makes port a link of bps bits per second shared by its
// priority queues (p4switch's set_port_rate). Only the Go target has it:
// BMv2's queue rates count packets, one rate per priority queue.
func (s *Switch) SetPortRate(port int, bps float64) error {
	if s.cfg.Target != TargetGo {
		return fmt.Errorf("switch %s: port rates in bits per second are the Go target's; BMv2 paces each queue in packets (SetQueueRate)", s.cfg.Name)
	}
	return s.tm(fmt.Sprintf("set_port_rate %.0f %d", bps, port))
}

// SetPortDelay gives port's link a propagation delay (p4switch's
// set_port_delay; the Go target only: BMv2 hands frames to the interface
// at once).
func (s *Switch) SetPortDelay(port int, d time.Duration) error {
	if s.cfg.Target != TargetGo {
		return fmt.Errorf("switch %s: a link delay is the Go target's; BMv2 has none", s.cfg.Name)
	}
	return s.tm(fmt.Sprintf("set_port_delay %s %d", d, port))
}

// SetRecirculationRate bounds how many recirculated packets per second
// come back to ingress (p4switch's set_recirculation_rate; the Go
// target only: BMv2 recirculates as fast as it runs).
func (s *Switch) SetRecirculationRate(pps float64) error {
	if s.cfg.Target != TargetGo {
		return fmt.Errorf("switch %s: a recirculation rate is the Go target's; BMv2 has none", s.cfg.Name)
	}
	return s.tm(fmt.Sprintf("set_recirculation_rate %.0f", pps))
}

// SetQueueDepth sets the depth of port's egress queues, packets
// (simple_switch_CLI set_queue_depth).
func (s *Switch) SetQueueDepth(port, packets int) error {
	return s.tm(fmt.Sprintf("set_queue_depth %d %d", packets, port))
}

// tm sends a traffic-manager command: through simple_switch_CLI to BMv2,
// through the control socket to the Go target.
func (s *Switch) tm(command string) error {
	if s.cfg.Target != TargetGo {
		return s.CLI(command)
	}
	conn, err := net.DialTimeout("unix", s.cfg.Control, 2*time.Second)
	if err != nil {
		return fmt.Errorf("switch %s: control socket: %w", s.cfg.Name, err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintln(conn, command); err != nil {
		return fmt.Errorf("switch %s: control socket: %w", s.cfg.Name, err)
	}
	answer, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return fmt.Errorf("switch %s: control socket: %w", s.cfg.Name, err)
	}
	if answer = strings.TrimSpace(answer); answer != "ok" {
		return fmt.Errorf("switch %s: %s: %s", s.cfg.Name, command, answer)
	}
	return nil
}

// CLI runs simple_switch_CLI commands, one per line, against the switch's
// Thrift port, and fails if the CLI reports an error.
func (s *Switch) CLI(commands ...string) error {
	_, err := s.CLIOutput(commands...)
	return err
}

// CLIOutput runs simple_switch_CLI commands like CLI and returns what
// the CLI printed (counter and register reads). The Go target serves no
// Thrift: use P4Runtime, or SetQueueRate and SetQueueDepth.
func (s *Switch) CLIOutput(commands ...string) (string, error) {
	if s.cfg.Target == TargetGo {
		return "", fmt.Errorf("switch %s: the Go target has no Thrift CLI (%s)", s.cfg.Name, strings.Join(commands, "; "))
	}
	bin, err := Lookup(CLIBinary)
	if err != nil {
		return "", err
	}
	cmd := exec.Command(bin, "--thrift-port", strconv.Itoa(s.cfg.ThriftPort))
	cmd.Stdin = strings.NewReader(strings.Join(commands, "\n") + "\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("switch %s: %s: %w: %s", s.cfg.Name, CLIBinary, err, lastLines(string(out), 5))
	}
	// The CLI reports a bad command on its output and still exits 0.
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "Error") || strings.Contains(line, "Invalid") || strings.Contains(line, "Unknown syntax") {
			return "", fmt.Errorf("switch %s: %s %q: %s", s.cfg.Name, CLIBinary, strings.Join(commands, "; "), strings.TrimSpace(line))
		}
	}
	return string(out), nil
}

// lastLines is the last n non-empty lines of s, joined by " | ".
func lastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 0 {
		return "no output"
	}
	return strings.Join(lines, " | ")
}

// Process is the running switch's process, for measuring its CPU time.
func (s *Switch) Process() *os.Process { return s.cmd.Process }
