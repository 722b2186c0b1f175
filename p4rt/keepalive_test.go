package p4rt_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/p4rcm/p4rcm/p4rt"
	"github.com/p4rcm/p4rcm/switchproc"
)

// frozenClientEnv makes the test binary a controller (frozenClient)
// for TestFrozenPrimary, which then stops it.
const frozenClientEnv = "P4RT_TEST_FROZEN_CLIENT"

// frozenClient becomes primary of device 1 at addr with election ID 10,
// says so on stdout, and then, for each line "push N" on stdin, sets
// tables.p4 padded to N MiB as the pipeline and answers "ok" or the
// error; "push N pause" stops sending 8 MiB into the request, says
// "midway", and goes on at a line "go". It runs until it is stopped.
func frozenClient(addr string) {
	lines := make(chan string)
	go func() {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			lines <- in.Text()
		}
	}()
	paused := &pausingConn{resume: lines}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, "tcp", addr)
			paused.Conn = c
			return paused, err
		}))
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	c := p4v1.NewP4RuntimeClient(conn)
	s, err := c.StreamChannel(context.Background())
	election := &p4v1.Uint128{Low: 10}
	if err == nil {
		err = s.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{
			Arbitration: &p4v1.MasterArbitrationUpdate{DeviceId: device, ElectionId: election}}})
	}
	var m *p4v1.StreamMessageResponse
	if err == nil {
		m, err = s.Recv()
	}
	if err != nil || m.GetArbitration().GetStatus().GetCode() != 0 {
		fmt.Println("not primary:", m, err)
		os.Exit(1)
	}
	fmt.Println("primary")
	p, err := readProgram("tables")
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	for line := range lines {
		var mib int
		if _, err := fmt.Sscanf(line, "push %d", &mib); err != nil {
			continue
		}
		if strings.HasSuffix(line, " pause") {
			paused.arm(8 << 20)
		}
		req := bigPipeline(p, mib<<20)
		req.ElectionId = election
		start := time.Now()
		if _, err := c.SetForwardingPipelineConfig(context.Background(), req); err != nil {
			fmt.Println(status.Code(err), status.Convert(err).Message())
			continue
		}
		fmt.Println("ok", time.Since(start).Round(time.Millisecond))
	}
	select {}
}

// pausingConn is the controller's connection, which, armed, stops
// writing once it has written that many bytes more, says "midway", and
// goes on when a line comes on resume.
type pausingConn struct {
	net.Conn
	resume <-chan string
	left   atomic.Int64 // bytes to write before pausing; 0: not armed
}

func (c *pausingConn) arm(n int64) { c.left.Store(n) }

func (c *pausingConn) Write(b []byte) (int, error) {
	if left := c.left.Load(); left > 0 && c.left.Add(-int64(len(b))) <= 0 {
		fmt.Println("midway")
		<-c.resume
	}
	return c.Conn.Write(b)
}

// controllerProcess is the test binary started as frozenClient, primary
// at addr: its process, its stdin and its lines.
type controllerProcess struct {
	cmd   *exec.Cmd
	in    io.Writer
	lines *bufio.Scanner
}

func startController(t *testing.T, addr string) *controllerProcess {
	t.Helper()
	return startNicedController(t, addr, 0)
}

// startNicedController is startController at niceness nice.
func startNicedController(t *testing.T, addr string, nice int) *controllerProcess {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("nice", "-n", strconv.Itoa(nice), self, "-test.run", "^$")
	cmd.Env = append(os.Environ(), frozenClientEnv+"="+addr)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill() // by PID; SIGKILL ends a stopped process too
		cmd.Wait()
	})
	c := &controllerProcess{cmd: cmd, in: in, lines: bufio.NewScanner(out)}
	if line := c.line(); line != "primary" {
		t.Fatalf("the controller: %q", line)
	}
	return c
}

func (c *controllerProcess) line() string {
	if !c.lines.Scan() {
		return "(no more output)"
	}
	return strings.TrimSpace(c.lines.Text())
}

func (c *controllerProcess) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(c.cmd.Process.Pid, sig); err != nil {
		t.Fatal(err)
	}
}

// A primary whose process is frozen (SIGSTOP: its TCP connection stays
// open, the kernel still acknowledges) stops answering the server's
// keepalive pings: the server drops its connection within the
// keepalive time and timeout after its last frame, the backups hear
// that there is no primary (NOT_FOUND), and one takes over.
func TestFrozenPrimary(t *testing.T) {
	cfg := p4rt.Config{DeviceID: device, KeepaliveTime: time.Second, KeepaliveTimeout: time.Second}
	bound := cfg.KeepaliveTime + cfg.KeepaliveTimeout
	_, c, conn := serveWith(t, cfg)
	ctl := startController(t, conn.Target())
	backup := connect(t, c, 5)
	if code, e := backup.arbitration(); code != codes.AlreadyExists || e != 10 {
		t.Fatalf("backup: %v %d, want AlreadyExists 10", code, e)
	}
	ctl.signal(t, syscall.SIGSTOP)
	frozen := time.Now()
	took := waitDemoted(t, backup, frozen, 2*bound+cfg.KeepaliveTime)
	t.Logf("frozen primary demoted after %v (keepalive time %v + timeout %v)", took.Round(time.Millisecond), cfg.KeepaliveTime, cfg.KeepaliveTimeout)
	if took > bound+cfg.KeepaliveTime {
		t.Errorf("demoted %v after it froze, past keepalive time + timeout (%v) and a margin of %v", took, bound, cfg.KeepaliveTime)
	}
	backup.arbitrate(11)
	if code, _ := backup.arbitration(); code != codes.OK {
		t.Errorf("the backup taking over with 11: %v, want OK", code)
	}
}

// waitDemoted waits, up to within, for backup to hear that there is no
// primary, and says how long after since it came. Twice the bound before
// giving up: the pings' timers run late on a loaded machine; the caller
// holds the demotion itself to the bound and a margin.
func waitDemoted(t *testing.T, backup *controller, since time.Time, within time.Duration) time.Duration {
	t.Helper()
	m := backup.next(func(m *p4v1.StreamMessageResponse) bool { return m.GetArbitration() != nil }, within)
	took := time.Since(since)
	if m == nil {
		t.Fatalf("no arbitration notice %v after the primary froze", took)
	}
	if code := codes.Code(m.GetArbitration().GetStatus().GetCode()); code != codes.NotFound {
		t.Fatalf("after the primary froze: %v, want NotFound", code)
	}
	return took
}

// A primary that stops answering while it pushes a pipeline is busy,
// not frozen: its process stopped 8 MiB into a 64 MiB push for twice the
// keepalive time and timeout (as a controller starved of the CPU on a
// loaded machine is, here made certain), it keeps its connection, and
// the push succeeds once it runs again, where gRPC's keepalive alone
// dropped it (UNAVAILABLE, the stream and the role lost). The same
// controller, idle, stopped, is demoted within the keepalive time and
// timeout. The switch is a p4switch process at its defaults (1 s + 2 s),
// beside CPU load of the test's own at nice 19.
func TestBusyPrimaryKept(t *testing.T) {
	c, sw := startTargetSwitch(t, switchproc.TargetGo)
	burn(t, runtime.NumCPU(), 19, time.Minute)
	bound := p4rt.DefaultKeepaliveTime + p4rt.DefaultKeepaliveTimeout
	ctl := startController(t, sw.Config().GRPCAddr)
	backup := connect(t, c, 5)
	if code, _ := backup.arbitration(); code != codes.AlreadyExists {
		t.Fatalf("backup: %v, want AlreadyExists", code)
	}
	fmt.Fprintln(ctl.in, "push 64 pause")
	if line := ctl.line(); line != "midway" {
		t.Fatalf("the controller: %q", line)
	}
	ctl.signal(t, syscall.SIGSTOP)
	time.Sleep(2 * bound)
	ctl.signal(t, syscall.SIGCONT)
	fmt.Fprintln(ctl.in, "go")
	if line := ctl.line(); !strings.HasPrefix(line, "ok") {
		t.Fatalf("the push of a primary stopped %v in its midst: %s, want ok", 2*bound, line)
	}
	if m := backup.next(func(m *p4v1.StreamMessageResponse) bool { return m.GetArbitration() != nil }, 0); m != nil {
		t.Errorf("the backup heard %v during the push", m)
	}
	ctl.signal(t, syscall.SIGSTOP)
	took := waitDemoted(t, backup, time.Now(), 2*bound+time.Second)
	t.Logf("idle and stopped, the primary was demoted after %v (keepalive time %v + timeout %v)", took.Round(time.Millisecond), p4rt.DefaultKeepaliveTime, p4rt.DefaultKeepaliveTimeout)
	if took > bound+time.Second {
		t.Errorf("demoted %v after it froze, past keepalive time + timeout (%v) and a margin of 1s", took, bound)
	}
}

// burnEnv makes the test binary a CPU burner (burner) for the duration
// it names.
const burnEnv = "P4RT_TEST_BURN"

// burner spins until its time is up.
func burner(d string) {
	dur, _ := time.ParseDuration(d)
	for end := time.Now().Add(dur); time.Now().Before(end); {
	}
}

// burn starts n CPU burners at niceness nice for the rest of the test,
// at most d: load of the test's own.
func burn(t *testing.T, n, nice int, d time.Duration) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		cmd := exec.Command("nice", "-n", strconv.Itoa(nice), self, "-test.run", "^$")
		cmd.Env = append(os.Environ(), burnEnv+"="+d.String())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
	}
}

// loadEnv runs TestPushesUnderLoad, a measurement too long for make test:
// P4RT_LOAD_TEST=PUSHES,MIB,PUSHER_NICE,BURNER_NICE, say 10,255,0,19 for
// ten pushes of 255 MiB by a controller at nice 0 beside 2 burners a
// core at nice 19 (the machine's builds), or 3,255,19,0 for a controller
// starved of the CPU. P4RT_LOAD_SWITCH names another p4switch binary to
// measure (an older build, say).
const loadEnv = "P4RT_LOAD_TEST"

// Pushes of a large pipeline by a controller on a loaded machine, each
// counted a success or not, and then how long the switch takes to
// demote the same controller, idle and frozen, under the same load.
func TestPushesUnderLoad(t *testing.T) {
	spec := os.Getenv(loadEnv)
	if spec == "" {
		t.Skipf("a measurement of minutes: %s=PUSHES,MIB,PUSHER_NICE,BURNER_NICE runs it", loadEnv)
	}
	var pushes, mib, pusherNice, burnerNice int
	if _, err := fmt.Sscanf(spec, "%d,%d,%d,%d", &pushes, &mib, &pusherNice, &burnerNice); err != nil {
		t.Fatalf("%s=%q: want PUSHES,MIB,PUSHER_NICE,BURNER_NICE", loadEnv, spec)
	}
	addr := loadSwitch(t)
	burn(t, 2*runtime.NumCPU(), burnerNice, 30*time.Minute)
	ctl := startNicedController(t, addr, pusherNice)
	ok := 0
	for i := range pushes {
		fmt.Fprintf(ctl.in, "push %d\n", mib)
		line := ctl.line()
		t.Logf("push %d of %d MiB: %s", i+1, mib, line)
		if strings.HasPrefix(line, "ok") {
			ok++
		}
	}
	t.Logf("%d of %d pushes of %d MiB succeeded (controller at nice %d, %d burners at nice %d)", ok, pushes, mib, pusherNice, 2*runtime.NumCPU(), burnerNice)
	backup := connect(t, dial(t, addr), 5)
	if code, _ := backup.arbitration(); code != codes.AlreadyExists {
		t.Fatalf("a backup beside the controller: %v: the controller is primary no longer", code)
	}
	ctl.signal(t, syscall.SIGSTOP)
	took := waitDemoted(t, backup, time.Now(), time.Minute)
	t.Logf("the idle controller, frozen, demoted after %v", took.Round(time.Millisecond))
	if ok != pushes {
		t.Errorf("%d of %d pushes failed", pushes-ok, pushes)
	}
}

// loadSwitch starts the p4switch TestPushesUnderLoad measures, at its
// defaults, and gives its address.
func loadSwitch(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("P4RT_LOAD_SWITCH")
	if bin == "" {
		_, sw := startTargetSwitch(t, switchproc.TargetGo)
		return sw.Config().GRPCAddr
	}
	free, err := switchproc.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	cfg := switchproc.Config{Name: "p4rt-load", DeviceID: device, Target: switchproc.TargetGo, Binary: bin,
		GRPCAddr: fmt.Sprintf("127.0.0.1:%d", free[0]), ThriftPort: free[1]}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sw, err := switchproc.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sw.Stop() })
	return cfg.GRPCAddr
}
