package p4rt_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/p4rcm/p4rcm/p4rt"
)

// frozenClientEnv makes the test binary a controller (frozenClient)
// for TestFrozenPrimary, which then stops it.
const frozenClientEnv = "P4RT_TEST_FROZEN_CLIENT"

// frozenClient becomes primary of device 1 at addr with election ID 10,
// says so on stdout, and waits to be stopped.
func frozenClient(addr string) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	s, err := p4v1.NewP4RuntimeClient(conn).StreamChannel(context.Background())
	if err == nil {
		err = s.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{
			Arbitration: &p4v1.MasterArbitrationUpdate{DeviceId: device, ElectionId: &p4v1.Uint128{Low: 10}}}})
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
	select {}
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
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(self, "-test.run", "^$")
	child.Env = append(os.Environ(), frozenClientEnv+"="+conn.Target())
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		child.Process.Kill() // by PID; SIGKILL ends a stopped process too
		child.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "primary" {
		t.Fatalf("the controller to freeze: %q, %v", line, err)
	}
	backup := connect(t, c, 5)
	if code, e := backup.arbitration(); code != codes.AlreadyExists || e != 10 {
		t.Fatalf("backup: %v %d, want AlreadyExists 10", code, e)
	}
	if err := syscall.Kill(child.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	// Twice the bound before giving up: the pings' timers run late on a
	// loaded machine; the demotion itself must come within the bound
	// and a scheduling margin of one keepalive time.
	m := backup.next(func(m *p4v1.StreamMessageResponse) bool { return m.GetArbitration() != nil }, 2*bound+cfg.KeepaliveTime)
	took := time.Since(frozen)
	if m == nil {
		t.Fatalf("no arbitration notice %v after the primary froze (keepalive %v + %v)", took, cfg.KeepaliveTime, cfg.KeepaliveTimeout)
	}
	if code := codes.Code(m.GetArbitration().GetStatus().GetCode()); code != codes.NotFound {
		t.Fatalf("after the primary froze: %v, want NotFound", code)
	}
	t.Logf("frozen primary demoted after %v (keepalive time %v + timeout %v)", took.Round(time.Millisecond), cfg.KeepaliveTime, cfg.KeepaliveTimeout)
	if took > bound+cfg.KeepaliveTime {
		t.Errorf("demoted %v after it froze, past keepalive time + timeout (%v) and a margin of %v", took, bound, cfg.KeepaliveTime)
	}
	backup.arbitrate(11)
	if code, _ := backup.arbitration(); code != codes.OK {
		t.Errorf("the backup taking over with 11: %v, want OK", code)
	}
}
