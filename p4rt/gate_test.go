package p4rt_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
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

// procMemory is a process's resident memory now and at its peak
// (VmRSS, VmHWM), in bytes.
func procMemory(t testing.TB, pid int) (rss, peak int64) {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		if k != "VmRSS" && k != "VmHWM" {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		if err != nil {
			t.Fatalf("/proc/%d/status %s: %v", pid, k, err)
		}
		if k == "VmRSS" {
			rss = kb << 10
		} else {
			peak = kb << 10
		}
	}
	return rss, peak
}

// bigPipeline is a pipeline request of about size bytes (the JSON padded
// with spaces) with no election ID.
func bigPipeline(p program, size int) *p4v1.SetForwardingPipelineConfigRequest {
	return &p4v1.SetForwardingPipelineConfigRequest{DeviceId: device, Action: p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT,
		Config: &p4v1.ForwardingPipelineConfig{P4Info: p.info, P4DeviceConfig: paddedJSON(p.json, size)}}
}

// Four 64 MiB pipelines at once, each from a connection that holds no
// primary's stream (no election ID, as an intruder sends them), are
// refused at their headers with PERMISSION_DENIED: the switch process's
// resident memory never grows by more than a few MB, where reading and
// decoding them before the check took it up by hundreds. The primary's
// own 64 MiB pipeline is then taken.
func TestRefusedPushesCostNothing(t *testing.T) {
	c, sw := startTargetSwitch(t, switchproc.TargetGo)
	pid := sw.PID()
	ct := connect(t, c, 1)
	if code, _ := ct.arbitration(); code != codes.OK {
		t.Fatalf("arbitration: %v", code)
	}
	p := loadProgram(t, "tables")
	req := bigPipeline(p, 64<<20)
	start, _ := procMemory(t, pid)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			conn, err := grpc.NewClient(sw.Config().GRPCAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				errs[i] = err
				return
			}
			defer conn.Close()
			_, errs[i] = p4v1.NewP4RuntimeClient(conn).SetForwardingPipelineConfig(context.Background(), req)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if status.Code(err) != codes.PermissionDenied {
			t.Errorf("push %d of 4, no election ID: %v, want PermissionDenied", i+1, err)
		}
	}
	rss, peak := procMemory(t, pid)
	t.Logf("switch resident memory: %d MB before the pushes, %d MB after, %d MB at its peak", start>>20, rss>>20, peak>>20)
	if peak-start > 32<<20 {
		t.Errorf("four refused 64 MiB pushes took the switch's resident memory from %d MB to a peak of %d MB, want within 32 MB", start>>20, peak>>20)
	}
	req.ElectionId = ct.election
	if _, err := c.SetForwardingPipelineConfig(context.Background(), req); err != nil {
		t.Errorf("the primary's 64 MiB pipeline: %v", err)
	}
}

// The bytes of requests in flight are bounded: each Write or pipeline
// reserves the largest request there may be before it is read. With room
// for two, two Writes held open by the primary (headers sent, no body)
// keep a third waiting, which goes through once one of them ends.
func TestRequestsInFlightBounded(t *testing.T) {
	p := loadProgram(t, "tables")
	_, c, conn := serveWith(t, p4rt.Config{DeviceID: device, MaxRecvMsgSize: 4 << 20, MaxRequestBytes: 8 << 20})
	ct := connect(t, c, 1)
	if code, _ := ct.arbitration(); code != codes.OK {
		t.Fatalf("arbitration: %v", code)
	}
	setPipeline(t, c, ct, p, 1)
	var held []context.CancelFunc
	for range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		if _, err := conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true}, "/p4.v1.P4Runtime/Write"); err != nil {
			t.Fatal(err)
		}
		held = append(held, cancel)
	}
	time.Sleep(200 * time.Millisecond) // the two reach their handlers
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	_, err := c.Write(ctx, &p4v1.WriteRequest{DeviceId: device, ElectionId: ct.election, Updates: []*p4v1.Update{ins(exactEntry(t, p, 1))}})
	cancel()
	if err == nil {
		t.Errorf("a third Write beside two held open, with room for two: taken, want it kept waiting")
	}
	held[0]()
	if got := write(t, c, ct, ins(exactEntry(t, p, 2))); got[0] != codes.OK {
		t.Errorf("the Write once one of the two ended: %v, want OK", got)
	}
}
