package switchproc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for simple_switch_grpc when
// BMV2_STANDIN is set (see standIn).
func TestMain(m *testing.M) {
	if os.Getenv("BMV2_STANDIN") != "" {
		standIn(os.Args[1:])
		return
	}
	os.Exit(m.Run())
}

// standIn behaves as a switch would for the launcher: after half a second
// it opens the port given by --grpc-server-addr, starts a child process,
// and waits to be stopped.
func standIn(args []string) {
	var addr string
	for i, a := range args {
		if a == "--grpc-server-addr" && i+1 < len(args) {
			addr = args[i+1]
		}
	}
	time.Sleep(500 * time.Millisecond)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		os.Exit(3)
	}
	defer l.Close()
	if err := exec.Command("sleep", "60").Start(); err != nil {
		os.Exit(4)
	}
	time.Sleep(time.Minute) // until stopped
}

func TestArgsAsTheTutorials(t *testing.T) {
	c := Config{Name: "s1", DeviceID: 3, Ports: map[int]string{2: "s1-eth2", 1: "s1-eth1"},
		GRPCAddr: "127.0.0.1:50051", ThriftPort: 9090, CPUPort: 255, PriorityQueues: 8,
		JSON: "build/rcm.json", LogDir: "logs", PcapDir: "pcaps"}
	want := "-i 1@s1-eth1 -i 2@s1-eth2 --device-id 3 --thrift-port 9090 --pcap pcaps " +
		"--log-file logs/s1 --log-level info --log-flush build/rcm.json " +
		"-- --grpc-server-addr 127.0.0.1:50051 --cpu-port 255 --priority-queues 8"
	if got := strings.Join(c.Args(), " "); got != want {
		t.Errorf("args\n%s\nwant\n%s", got, want)
	}
	c = Config{Name: "s2", GRPCAddr: "127.0.0.1:50052", ThriftPort: 9091}
	if got := strings.Join(c.Args(), " "); got != "--device-id 0 --thrift-port 9091 --no-p4 -- --grpc-server-addr 127.0.0.1:50052" {
		t.Errorf("minimal args: %s", got)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{GRPCAddr: "127.0.0.1:1", ThriftPort: 9090},
		{Name: "s", ThriftPort: 9090},
		{Name: "s", GRPCAddr: "127.0.0.1:1", ThriftPort: 70000},
		{Name: "s", GRPCAddr: "127.0.0.1:1", ThriftPort: 9090, Ports: map[int]string{1: ""}},
		{Name: "s", GRPCAddr: "127.0.0.1:1", ThriftPort: 9090, GoMaxProcs: 1},
		{Name: "s", GRPCAddr: "127.0.0.1:1", ThriftPort: 9090, GoMaxProcs: -1, Target: TargetGo},
	} {
		if _, err := Start(context.Background(), c); err == nil || errors.Is(err, ErrNotInstalled) {
			t.Errorf("%+v: error %v, want one about the configuration", c, err)
		}
	}
}

func TestMissingBinarySaysWhatToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Start(context.Background(), Config{Name: "s1", GRPCAddr: "127.0.0.1:1", ThriftPort: 9090})
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), SwitchBinary) || !strings.Contains(err.Error(), "behavioral-model") {
		t.Errorf("error %v; want one naming %s and where it comes from", err, SwitchBinary)
	}
}

// freeAddr is a loopback TCP address nothing listens on, and its port.
func freeAddr(t *testing.T) (string, int) {
	t.Helper()
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", port), port
}

// stub puts on the PATH a program named simple_switch_grpc running the
// given shell script (the launcher's handling of its child is under test
// here; the real switch is in TestRealSwitch).
func stub(t *testing.T, script string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, SwitchBinary), []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
}

func TestStartReportsAnEarlyExit(t *testing.T) {
	stub(t, `echo "Invalid options: bad port" >&2; exit 1`)
	addr, _ := freeAddr(t)
	_, err := Start(context.Background(), Config{Name: "s1", GRPCAddr: addr, ThriftPort: 9090})
	if err == nil || !strings.Contains(err.Error(), "exited before its gRPC port") || !strings.Contains(err.Error(), "Invalid options: bad port") {
		t.Errorf("error %v; want the exit and the program's last words", err)
	}
}

func TestStartWaitsForThePortAndStopEndsTheProcessGroup(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	stub(t, `BMV2_STANDIN=1 exec "`+self+`" "$@"`)
	addr, _ := freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := Start(ctx, Config{Name: "s1", GRPCAddr: addr, ThriftPort: 9090})
	if err != nil {
		t.Fatal(err)
	}
	// The stand-in opens its port half a second in: Start must have
	// waited for it.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("port not open after Start: %v", err)
	}
	conn.Close()
	pid := s.PID()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d still there after Stop (%v)", pid, err)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestStartGivesUpWithTheContext(t *testing.T) {
	stub(t, `exec sleep 60`)
	addr, _ := freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := Start(ctx, Config{Name: "s1", GRPCAddr: addr, ThriftPort: 9090})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want the context's deadline", err)
	}
}

// TestRealSwitch runs BMv2 itself when it is installed: no program, no
// ports; the P4Runtime port opens, the Thrift CLI sets a queue, Stop ends
// it.
func TestRealSwitch(t *testing.T) {
	for _, b := range []string{SwitchBinary, CLIBinary} {
		if _, err := Lookup(b); err != nil {
			t.Skipf("skipping: %v", err)
		}
	}
	port, thrift, err := FreeSwitchPorts()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Start(ctx, Config{Name: "s1", GRPCAddr: addr, ThriftPort: thrift, PriorityQueues: 8, LogDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	// The Thrift server may come up a moment after the gRPC one.
	var cliErr error
	for i := 0; i < 50; i++ {
		if cliErr = s.SetQueueDepth(1, 64); cliErr == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if cliErr != nil {
		t.Fatalf("set_queue_depth: %v", cliErr)
	}
	if err := s.SetQueueRate(1, 1000); err != nil {
		t.Errorf("set_queue_rate: %v", err)
	}
	if err := s.CLI("no_such_command"); err == nil {
		t.Error("a bad CLI command was not reported")
	}
	pid := s.PID()
	s.Stop()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("switch %d still running after Stop", pid)
	}
}

// FreePorts never gives a port twice: 200 ports for a fabric's switches
// are 200 distinct ports. (Probed one at a time, each freed before the
// next, the kernel handed two of a k=4 fat tree's 40 the same port.)
func TestFreePortsDistinct(t *testing.T) {
	const n = 200
	ports, err := FreePorts(n)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] {
			t.Fatalf("port %d given twice among %d", p, n)
		}
		seen[p] = true
	}
	if len(seen) != n {
		t.Errorf("%d ports, want %d", len(seen), n)
	}
}
