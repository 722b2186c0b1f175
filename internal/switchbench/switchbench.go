//go:build linux

// Package switchbench measures a software switch on real packets: the
// highest rate it forwards with under 0.1% loss between two network
// namespaces, the CPU it spends per packet, and its latency when idle.
// The same rig measures p4rcm's Go target (p4switch), BMv2's
// simple_switch_grpc where it is installed, a bare veth pair (no switch),
// and a relay that copies frames between two packet sockets with no
// pipeline, the ceiling of any user-space switch on AF_PACKET, in one run:
// in the rig's own process ("relay"), and in a process of its own
// ("relay-process"), as every switch runs; each relay on recvmmsg and
// sendmmsg, and on mapped rings ("relay-ring", "relay-process-ring"), as
// the Go target runs on either (afpacket.IO).
package switchbench

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/p4rcm/p4rcm/afpacket"
	"github.com/p4rcm/p4rcm/internal/proccpu"
	"github.com/p4rcm/p4rcm/netlab"
	"github.com/p4rcm/p4rcm/switchproc"
	"github.com/p4rcm/p4rcm/v1model"
)

// Options set what is measured.
type Options struct {
	// Targets: "veth" (no switch), "relay" (packet sockets, no
	// pipeline, a thread of the rig's process), "relay-process" (the
	// same in a process of its own: the program running the rig, which
	// must call RelayMain first thing), "go" (p4switch, its ports as it
	// opens them by default), "bmv2" (simple_switch_grpc). The relays
	// move frames by recvmmsg and sendmmsg; "relay-ring" and
	// "relay-process-ring" are the same on mapped rings
	// (afpacket.Ring). "go-IO" is p4switch with --port-io IO
	// (go-mmsg, go-ring, go-ring-v3). The rig's own sender and receiver
	// open their ports as afpacket does by default, whatever the
	// target.
	Targets []string
	// Sizes are frame lengths in bytes (without the FCS veths do not
	// carry).
	Sizes []int
	// Trial is how long each offered rate is held.
	Trial time.Duration
	// MaxLoss is the loss a rate may have and count as forwarded.
	MaxLoss float64
	// P4Switch is the p4switch binary; JSON the program (rcm.json) and
	// Entries its table entries, a runtime file's text (RCMEntries when
	// empty).
	P4Switch string
	JSON     string
	Entries  string
	// P4SwitchArgs are more flags for p4switch (--busy-poll).
	P4SwitchArgs []string
	// Log receives a line per trial, if set.
	Log func(string)
}

// Result is one target at one frame size.
type Result struct {
	Target string
	Size   int
	// PPS is the highest received rate with loss at most MaxLoss.
	PPS  float64
	Loss float64
	// CPUPerPacket is the switch's CPU time (user and system) per
	// forwarded packet at that rate: its process's, the relay's thread's;
	// 0 for veth.
	CPUPerPacket time.Duration
	// Latency through the idle path: median and 99th percentile of 1,000
	// frames at 1,000 packets per second.
	P50, P99 time.Duration
}

// Run measures every target at every size.
func Run(ctx context.Context, o Options) ([]Result, error) {
	if o.Trial == 0 {
		o.Trial = time.Second
	}
	if o.MaxLoss == 0 {
		o.MaxLoss = 0.001
	}
	if o.Log == nil {
		o.Log = func(string) {}
	}
	var out []Result
	for _, target := range o.Targets {
		for _, size := range o.Sizes {
			if size < 64 || size > 9000 {
				return nil, fmt.Errorf("frame size %d: want 64 to 9000 bytes", size)
			}
			r, err := measure(ctx, o, target, size)
			if err != nil {
				return nil, fmt.Errorf("%s, %d-byte frames: %w", target, size, err)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// rig is one target between a sender and a receiver.
type rig struct {
	lab    *netlab.Lab
	tx, rx *afpacket.Port
	// stat is the /proc stat file of the switch's process or thread,
	// whose CPU time is measured; empty for veth.
	stat     string
	stop     func()
	received atomic.Uint64
	trial    atomic.Uint32
	lat      chan time.Duration
	output   []string // what the switch printed
}

func measure(ctx context.Context, o Options, target string, size int) (Result, error) {
	r, err := newRig(ctx, o, target)
	if err != nil {
		return Result{}, err
	}
	defer r.close()
	res := Result{Target: target, Size: size}
	try := func(pps float64) (got, loss float64, cpu time.Duration, err error) {
		return r.offer(ctx, o, size, pps)
	}
	// Double until loss, then halve the interval six times.
	good, bad := 0.0, 0.0
	for pps := 1_000.0; pps <= 8_000_000; pps *= 2 {
		got, loss, cpu, err := try(pps)
		if err != nil {
			return res, err
		}
		o.Log(fmt.Sprintf("%s %dB offered %.0f/s: received %.0f/s, loss %.3f%%", target, size, pps, got, 100*loss))
		if loss > o.MaxLoss {
			bad = pps
			break
		}
		good = pps
		res.PPS, res.Loss, res.CPUPerPacket = got, loss, cpu
	}
	if good == 0 {
		return res, fmt.Errorf("lost more than %.1f%% even at 1,000 packets per second", 100*o.MaxLoss)
	}
	for i := 0; i < 6 && bad > 0; i++ {
		mid := (good + bad) / 2
		got, loss, cpu, err := try(mid)
		if err != nil {
			return res, err
		}
		o.Log(fmt.Sprintf("%s %dB offered %.0f/s: received %.0f/s, loss %.3f%%", target, size, mid, got, 100*loss))
		if loss > o.MaxLoss {
			bad = mid
		} else {
			good = mid
			if got > res.PPS {
				res.PPS, res.Loss, res.CPUPerPacket = got, loss, cpu
			}
		}
	}
	res.P50, res.P99, err = r.latency(ctx, size)
	return res, err
}

const magic = 0x70347263 // "p4rc"

func newRig(ctx context.Context, o Options, target string) (*rig, error) {
	if err := netlab.Available(); err != nil {
		return nil, err
	}
	lab, err := netlab.New("swb")
	if err != nil {
		return nil, err
	}
	r := &rig{lab: lab, stop: func() {}, lat: make(chan time.Duration, 4096)}
	fail := func(err error) (*rig, error) {
		r.close()
		return nil, err
	}
	h1, err := lab.Host("h1")
	if err != nil {
		return fail(err)
	}
	l1, err := lab.Link(h1, "eth0", nil)
	if err != nil {
		return fail(err)
	}
	if err := h1.Do(func() error { r.tx, err = afpacket.Open("eth0"); return err }); err != nil {
		return fail(err)
	}
	if target == "veth" {
		// The receiver sits on the other end of the sender's veth.
		if r.rx, err = afpacket.Open(l1.SwitchIf); err != nil {
			return fail(err)
		}
	} else {
		h2, err := lab.Host("h2")
		if err != nil {
			return fail(err)
		}
		l2, err := lab.Link(h2, "eth0", nil)
		if err != nil {
			return fail(err)
		}
		if err := h2.Do(func() error { r.rx, err = afpacket.Open("eth0"); return err }); err != nil {
			return fail(err)
		}
		ports := map[int]string{1: l1.SwitchIf, 2: l2.SwitchIf}
		switch target {
		case "relay", "relay-ring":
			err = r.startRelay(ports, relayIO(target))
		case "relay-process", "relay-process-ring":
			err = r.startRelayProcess(ctx, ports, relayIO(target))
		case "go":
			err = r.startGo(ctx, o, ports, "")
		case "bmv2":
			err = r.startBMv2(ctx, o, ports)
		default:
			io, isGo := strings.CutPrefix(target, "go-")
			if _, err = afpacket.ParseIO(io); !isGo || err != nil {
				err = fmt.Errorf("unknown target %q: want veth, relay, relay-ring, relay-process, relay-process-ring, go, go-IO (IO one of p4switch's --port-io) or bmv2", target)
				break
			}
			err = r.startGo(ctx, o, ports, io)
		}
		if err != nil {
			return fail(err)
		}
	}
	go r.receive()
	return r, nil
}

// RCMEntries configures rcm.p4 as the benchmark runs it: a handful of routes,
// and on both ports PFC, RED/ECN and RCM, with thresholds that a queue of
// a few frames does not reach.
const RCMEntries = `{"table_entries": [
 {"table": "RcmIngress.ipv4_lpm", "match": {"hdr.ipv4.dst_addr": ["10.0.0.1", 32]}, "action_name": "RcmIngress.set_nexthop",
  "action_params": {"port": 1, "src_mac": "02:00:00:00:01:01", "dst_mac": "02:00:00:00:00:01"}},
 {"table": "RcmIngress.ipv4_lpm", "match": {"hdr.ipv4.dst_addr": ["10.0.0.2", 32]}, "action_name": "RcmIngress.set_nexthop",
  "action_params": {"port": 2, "src_mac": "02:00:00:00:01:02", "dst_mac": "02:00:00:00:00:02"}},
 {"table": "RcmIngress.ipv4_lpm", "match": {"hdr.ipv4.dst_addr": ["10.0.1.0", 24]}, "action_name": "RcmIngress.set_nexthop",
  "action_params": {"port": 2, "src_mac": "02:00:00:00:01:02", "dst_mac": "02:00:00:00:00:02"}},
 {"table": "RcmIngress.ipv4_lpm", "match": {"hdr.ipv4.dst_addr": ["10.0.2.0", 24]}, "action_name": "RcmIngress.set_nexthop",
  "action_params": {"port": 1, "src_mac": "02:00:00:00:01:01", "dst_mac": "02:00:00:00:00:01"}},
 {"table": "RcmIngress.ipv4_lpm", "match": {"hdr.ipv4.dst_addr": ["10.1.0.0", 16]}, "action_name": "RcmIngress.set_nexthop",
  "action_params": {"port": 2, "src_mac": "02:00:00:00:01:02", "dst_mac": "02:00:00:00:00:02"}},
 {"table": "RcmIngress.ingress_port_config", "match": {"standard_metadata.ingress_port": 1}, "action_name": "RcmIngress.set_port",
  "action_params": {"mac": "02:00:00:00:01:01", "xoff_bytes": 1000000, "xon_bytes": 500000, "pause_quanta": 65535, "quantum_ns": 5,
   "pfc_priority": 3, "cn_enabled": 0, "cn_interval_ns": 1000000, "cn_ingress_bytes": 0, "cn_hold_ns": 1000000}},
 {"table": "RcmIngress.ingress_port_config", "match": {"standard_metadata.ingress_port": 2}, "action_name": "RcmIngress.set_port",
  "action_params": {"mac": "02:00:00:00:01:02", "xoff_bytes": 1000000, "xon_bytes": 500000, "pause_quanta": 65535, "quantum_ns": 5,
   "pfc_priority": 3, "cn_enabled": 0, "cn_interval_ns": 1000000, "cn_ingress_bytes": 0, "cn_hold_ns": 1000000}},
 {"table": "RcmIngress.rcm_config", "match": {"standard_metadata.egress_spec": 2}, "action_name": "RcmIngress.set_rcm",
  "action_params": {"sample_every": 10, "qeq_bytes": 1000000, "wq_shift": 1, "fb_shift": 8, "cam_min_hits": 3,
   "window_bytes": 100000, "window_ns": 0, "high_priority": 0, "low_priority": 0}},
 {"table": "RcmEgress.red_config", "match": {"standard_metadata.egress_port": 2}, "action_name": "RcmEgress.set_red",
  "action_params": {"kmin_bytes": 1000000, "kmax_bytes": 2000000, "pmax_slope": 0, "wred_k_bytes": 0, "buf_max_bytes": 0}}
]}`

// L3Entries gives the plain router (p4/testdata/l3.p4) RCMEntries's
// routes: the baseline runs the same lookups without RCM, PFC and RED.
const L3Entries = `{"table_entries": [
 {"table": "L3Ingress.ipv4_lpm", "match": {"hdr.ipv4.dst_addr": ["10.0.0.1", 32]}, "action_name": "L3Ingress.set_nexthop",
  "action_params": {"port": 1, "src_mac": "02:00:00:00:01:01", "dst_mac": "02:00:00:00:00:01"}},
 {"table": "L3Ingress.ipv4_lpm", "match": {"hdr.ipv4.dst_addr": ["10.0.0.2", 32]}, "action_name": "L3Ingress.set_nexthop",
  "action_params": {"port": 2, "src_mac": "02:00:00:00:01:02", "dst_mac": "02:00:00:00:00:02"}},
 {"table": "L3Ingress.ipv4_lpm", "match": {"hdr.ipv4.dst_addr": ["10.0.1.0", 24]}, "action_name": "L3Ingress.set_nexthop",
  "action_params": {"port": 2, "src_mac": "02:00:00:00:01:02", "dst_mac": "02:00:00:00:00:02"}},
 {"table": "L3Ingress.ipv4_lpm", "match": {"hdr.ipv4.dst_addr": ["10.0.2.0", 24]}, "action_name": "L3Ingress.set_nexthop",
  "action_params": {"port": 1, "src_mac": "02:00:00:00:01:01", "dst_mac": "02:00:00:00:00:01"}},
 {"table": "L3Ingress.ipv4_lpm", "match": {"hdr.ipv4.dst_addr": ["10.1.0.0", 16]}, "action_name": "L3Ingress.set_nexthop",
  "action_params": {"port": 2, "src_mac": "02:00:00:00:01:02", "dst_mac": "02:00:00:00:00:02"}}
]}`

// entries is the runtime file the switch is programmed with.
func (o Options) entries() string {
	if o.Entries == "" {
		return RCMEntries
	}
	return o.Entries
}

// relayIO is how the relay target moves frames: "-ring" ones on rings,
// the others as every user-space switch did before rings.
func relayIO(target string) afpacket.IO {
	if strings.HasSuffix(target, "-ring") {
		return afpacket.Ring
	}
	return afpacket.Mmsg
}

// startGo starts p4switch, with --port-io io unless io is empty.
func (r *rig) startGo(ctx context.Context, o Options, ports map[int]string, io string) error {
	dir, err := os.MkdirTemp("", "switchbench")
	if err != nil {
		return err
	}
	entries := filepath.Join(dir, "entries.json")
	if err := os.WriteFile(entries, []byte(o.entries()), 0o644); err != nil {
		return err
	}
	args := append([]string{"-i", "1@" + ports[1], "-i", "2@" + ports[2], o.JSON, "--entries", entries}, o.P4SwitchArgs...)
	if io != "" {
		args = append(args, "--port-io", io)
	}
	ready := func(line string) bool { return strings.Contains(line, "running") }
	return r.startProcess(ctx, "p4switch", exec.Command(o.P4Switch, args...), ready, func() { os.RemoveAll(dir) })
}

// startProcess starts cmd as the switch under test and waits until a line
// of its output passes ready. r.stop then interrupts it (killing it if it
// has not ended within 5 s) and calls cleanup; its output lines are kept
// in r.output, and its CPU is read from r.stat.
func (r *rig) startProcess(ctx context.Context, name string, cmd *exec.Cmd, ready func(line string) bool, cleanup func()) error {
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	r.stat = fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid)
	exited := make(chan struct{})
	r.stop = func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		cleanup()
	}
	started := make(chan bool, 1)
	go func() {
		said := false
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if !said && ready(sc.Text()) {
				said = true
				started <- true
			}
			r.output = append(r.output, sc.Text())
		}
		cmd.Wait()
		close(exited)
		if !said {
			started <- false
		}
	}()
	select {
	case ok := <-started:
		if !ok {
			return fmt.Errorf("%s exited: %s", name, stderr.String())
		}
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s did not start within 10 s", name)
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// startRelay copies every frame from port 1 to port 2 in the rig's own
// process, on a thread of its own: what a user-space switch built on packet
// sockets does with no pipeline and no queues, and so the most any such
// switch forwards on this rig, with the sender and the receiver on the same
// cores. Its ports move frames by io.
func (r *rig) startRelay(ports map[int]string, io afpacket.IO) error {
	in, err := afpacket.Open(ports[1], afpacket.WithIO(io))
	if err != nil {
		return err
	}
	out, err := afpacket.Open(ports[2], afpacket.WithIO(io))
	if err != nil {
		in.Close()
		return err
	}
	tid := make(chan int)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// One thread, so that its CPU time is the relay's alone.
		runtime.LockOSThread()
		tid <- unix.Gettid()
		for {
			fs, err := in.Recv()
			if err != nil {
				return
			}
			if out.Send(fs...) != nil {
				return
			}
		}
	}()
	r.stat = fmt.Sprintf("/proc/self/task/%d/stat", <-tid)
	r.stop = func() {
		in.Close()
		out.Close()
		<-done
	}
	return nil
}

// RelayEnv, set to "IN,OUT,IO" (two interfaces and an afpacket.IO by
// name), makes RelayMain run the relay of the "relay-process" targets in
// the calling process.
const RelayEnv = "P4RCM_SWITCHBENCH_RELAY"

// RelayMain is the "relay-process" targets' process: when RelayEnv is
// set it relays frames from its first interface to its second until it
// is killed and returns true; otherwise it returns false at once. A
// program that runs the rig with those targets (its test binary) calls
// it first thing in main or TestMain.
func RelayMain() bool {
	v := os.Getenv(RelayEnv)
	if v == "" {
		return false
	}
	names := strings.Split(v, ",")
	var io afpacket.IO
	var err error
	if len(names) == 3 {
		io, err = afpacket.ParseIO(names[2])
	}
	if len(names) != 3 || err != nil {
		fmt.Fprintf(os.Stderr, "%s=%q: want IN,OUT,IO (%v)\n", RelayEnv, v, err)
		os.Exit(2)
	}
	in, err := afpacket.Open(names[0], afpacket.WithIO(io))
	if err == nil {
		var out *afpacket.Port
		if out, err = afpacket.Open(names[1], afpacket.WithIO(io)); err == nil {
			fmt.Println("relaying")
			for {
				fs, err := in.Recv()
				if err != nil {
					break
				}
				if err := out.Send(fs...); err != nil {
					break
				}
			}
		}
	}
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
	return true
}

// startRelayProcess runs the relay in a process of its own (this
// program, through RelayMain), measured as a switch process is.
func (r *rig) startRelayProcess(ctx context.Context, ports map[int]string, io afpacket.IO) error {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), RelayEnv+"="+ports[1]+","+ports[2]+","+io.String())
	return r.startProcess(ctx, "relay process", cmd, func(line string) bool { return line == "relaying" }, func() {})
}

func (r *rig) startBMv2(ctx context.Context, o Options, ports map[int]string) error {
	free, err := switchproc.FreePorts(2)
	if err != nil {
		return err
	}
	grpcPort, thrift := free[0], free[1]
	abs, err := filepath.Abs(o.JSON)
	if err != nil {
		return err
	}
	sw, err := switchproc.Start(ctx, switchproc.Config{Name: "bench", DeviceID: 1, Ports: ports,
		GRPCAddr: fmt.Sprintf("127.0.0.1:%d", grpcPort), ThriftPort: thrift, JSON: abs})
	if err != nil {
		return err
	}
	r.stop = func() { sw.Stop() }
	r.stat = fmt.Sprintf("/proc/%d/stat", sw.Process().Pid)
	gosw, err := v1model.Load(o.JSON, v1model.Config{})
	if err != nil {
		return err
	}
	rt, err := v1model.ParseRuntime([]byte(o.entries()))
	if err != nil {
		return err
	}
	cmds, err := gosw.CLICommands(rt)
	if err != nil {
		return err
	}
	return sw.CLI(cmds...)
}

func (r *rig) close() {
	r.stop()
	if r.tx != nil {
		r.tx.Close()
	}
	if r.rx != nil {
		r.rx.Close()
	}
	r.lab.Close()
}

// frame builds a UDP frame to 10.0.0.2 carrying the magic, the trial, a
// sequence number and the send time.
func frame(size int, trial uint32, seq uint64) []byte {
	f := make([]byte, size)
	copy(f, []byte{2, 0, 0, 0, 1, 1, 2, 0, 0, 0, 0, 1, 0x08, 0x00})
	ip := f[14:34]
	ip[0], ip[8], ip[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(ip[2:], uint16(size-14))
	copy(ip[12:], []byte{10, 0, 0, 1, 10, 0, 0, 2})
	binary.BigEndian.PutUint16(ip[10:], ipChecksum(ip))
	udp := f[34:42]
	binary.BigEndian.PutUint16(udp[0:], 5000)
	binary.BigEndian.PutUint16(udp[2:], 5001)
	binary.BigEndian.PutUint16(udp[4:], uint16(size-34))
	binary.BigEndian.PutUint32(f[42:], magic)
	binary.BigEndian.PutUint32(f[46:], trial)
	binary.BigEndian.PutUint64(f[50:], seq)
	return f
}

func ipChecksum(h []byte) uint16 {
	var s uint32
	for i := 0; i < len(h); i += 2 {
		s += uint32(h[i])<<8 | uint32(h[i+1])
	}
	for s > 0xffff {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

// receive counts the frames of the current trial and times the latency
// probes.
func (r *rig) receive() {
	for {
		fs, err := r.rx.Recv()
		if err != nil {
			return
		}
		now := time.Now().UnixNano()
		for _, f := range fs {
			if len(f) < 58 || binary.BigEndian.Uint32(f[42:]) != magic {
				continue
			}
			trial := binary.BigEndian.Uint32(f[46:])
			if trial != r.trial.Load() {
				continue
			}
			r.received.Add(1)
			if trial&(1<<31) != 0 {
				sent := int64(binary.BigEndian.Uint64(f[50:]))
				select {
				case r.lat <- time.Duration(now - sent):
				default:
				}
			}
		}
	}
}

// offer offers pps for o.Trial and returns the rate received, the loss
// and the switch's CPU time per packet.
func (r *rig) offer(ctx context.Context, o Options, size int, pps float64) (float64, float64, time.Duration, error) {
	id := r.trial.Add(1) &^ (1 << 31)
	r.trial.Store(id)
	r.received.Store(0)
	cpu0 := proccpu.Stat(r.stat)
	// Batches of frames every interval: as many as 200 us at this rate.
	batch := int(min(max(pps*200e-6, 1), afpacket.Batch))
	interval := time.Duration(float64(batch) / pps * float64(time.Second))
	frames := make([][]byte, batch)
	for i := range frames {
		frames[i] = frame(size, id, 0)
	}
	start := time.Now()
	sent := uint64(0)
	for next := start; time.Since(start) < o.Trial; next = next.Add(interval) {
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		for _, f := range frames {
			binary.BigEndian.PutUint64(f[50:], sent)
			sent++
		}
		if err := r.tx.Send(frames...); err != nil {
			return 0, 0, 0, err
		}
		if ctx.Err() != nil {
			return 0, 0, 0, ctx.Err()
		}
	}
	elapsed := time.Since(start)
	time.Sleep(200 * time.Millisecond) // stragglers
	got := r.received.Load()
	cpu := proccpu.Stat(r.stat) - cpu0
	loss := 1 - float64(got)/float64(sent)
	var perPacket time.Duration
	if got > 0 && r.stat != "" {
		perPacket = cpu / time.Duration(got)
	}
	return float64(got) / elapsed.Seconds(), max(loss, 0), perPacket, nil
}

// latency sends 1,000 frames a millisecond apart and returns the median
// and 99th percentile of their one-way delay.
func (r *rig) latency(ctx context.Context, size int) (time.Duration, time.Duration, error) {
	id := (r.trial.Add(1) + 1) | 1<<31
	r.trial.Store(id)
	for len(r.lat) > 0 {
		<-r.lat
	}
	f := frame(size, id, 0)
	for range 1000 {
		binary.BigEndian.PutUint64(f[50:], uint64(time.Now().UnixNano()))
		if err := r.tx.Send(f); err != nil {
			return 0, 0, err
		}
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
	time.Sleep(100 * time.Millisecond)
	var ds []time.Duration
	for len(r.lat) > 0 {
		ds = append(ds, <-r.lat)
	}
	if len(ds) < 900 {
		return 0, 0, fmt.Errorf("latency: %d of 1,000 probes came through", len(ds))
	}
	slices.Sort(ds)
	return ds[len(ds)/2], ds[len(ds)*99/100], nil
}
