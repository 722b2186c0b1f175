package p4rt_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/p4rcm/p4rcm/internal/p4switchbin"
	"github.com/p4rcm/p4rcm/internal/race"
	"github.com/p4rcm/p4rcm/switchproc"
)

// A hostile local user and a certificate the policy does not name, all
// at once against a p4switch process serving mutual TLS with a policy:
// 100 sockets that connect and send nothing, 40 follower streams of the
// unnamed identity, and four 200 MiB pipelines pushed by it without an
// election ID. Meanwhile the controller the policy names connects
// afresh, arbitrates and writes within a second, and the switch's
// resident memory stays within 100 MB of where it started.
func TestHostileProbe(t *testing.T) {
	if race.Enabled {
		t.Skip("800 MB of pushes: runs in make test's pass without -race")
	}
	bin, err := p4switchbin.Path()
	if err != nil {
		t.Fatal(err)
	}
	l := newLab(t)
	dir := t.TempDir()
	sf, err := l.ca.WriteFiles(dir, "switch", l.server)
	if err != nil {
		t.Fatal(err)
	}
	free, err := switchproc.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	cfg := switchproc.Config{Name: "p4rt-probe", DeviceID: device, Target: switchproc.TargetGo, Binary: bin, ThriftPort: free[1],
		GRPCAddr: fmt.Sprintf("127.0.0.1:%d", free[0]), LogDir: dir,
		TLS: &switchproc.ServerTLS{CACert: sf.CACert, Cert: sf.Cert, Key: sf.Key, ClientAuth: true, Policy: writePolicy(t, "cn:ctl")}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sw, err := switchproc.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sw.Stop() })
	addr := cfg.GRPCAddr
	p := loadProgram(t, "tables")
	ctlCert := l.client(t, "ctl")
	first, _ := dialTLS(t, addr, l.pool(), ctlCert)
	ct := connect(t, first, 1)
	if code, _ := ct.arbitration(); code != codes.OK {
		t.Fatalf("the named controller: %v", code)
	}
	setPipeline(t, first, ct, p, 1)
	ct.cancel() // it leaves; it comes back during the probe
	start, _ := procMemory(t, sw.PID())

	silentSockets(t, addr, 100)
	intruder, _ := dialTLS(t, addr, l.pool(), l.client(t, "intruder"))
	followers := 0
	for range 40 {
		f := openStream(t, intruder)
		f.send(nil)
		if err := streamEnd(t, f); status.Code(err) == codes.PermissionDenied {
			followers++
		}
	}
	// Marshalled once, before the probe: four goroutines marshalling 200
	// MiB each would take this process's cores from the named
	// controller's handshake, which a hostile client in a process of its
	// own does not.
	push, err := proto.Marshal(bigPipeline(p, 200<<20))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	pushErrs := make([]error, 4)
	for i := range pushErrs {
		wg.Go(func() {
			_, conn := dialTLS(t, addr, l.pool(), l.client(t, "intruder"))
			pushErrs[i] = conn.Invoke(context.Background(), "/p4.v1.P4Runtime/SetForwardingPipelineConfig",
				marshalled(push), new(p4v1.SetForwardingPipelineConfigResponse), grpc.ForceCodecV2(marshalledCodec{}))
		})
	}
	// The named controller comes back while the pushes are under way.
	time.Sleep(50 * time.Millisecond)
	began := time.Now()
	c, _ := dialTLS(t, addr, l.pool(), ctlCert)
	back := connect(t, c, 2)
	code, _ := back.arbitration()
	got := write(t, c, back, ins(exactEntry(t, p, 1)))
	took := time.Since(began)
	wg.Wait()

	rss, peak := procMemory(t, sw.PID())
	t.Logf("switch resident memory: %d MB before the probe, %d MB after, %d MB at its peak; the named controller arbitrated and wrote in %v",
		start>>20, rss>>20, peak>>20, took.Round(time.Millisecond))
	if followers != 40 {
		t.Errorf("%d of 40 follower streams of the unnamed identity refused, want all", followers)
	}
	for i, err := range pushErrs {
		if status.Code(err) != codes.PermissionDenied {
			t.Errorf("unauthorised push %d of 4: %v, want PermissionDenied", i+1, err)
		}
	}
	if code != codes.OK || got[0] != codes.OK {
		t.Errorf("the named controller during the probe: arbitration %v, write %v, want OK and OK", code, got)
	}
	if took > time.Second {
		t.Errorf("the named controller took %v to arbitrate and write, want within 1 s", took)
	}
	if peak-start > 100<<20 {
		t.Errorf("the switch's resident memory went from %d MB to a peak of %d MB, want within 100 MB", start>>20, peak>>20)
	}
	if got := readAll(t, c, entity(&p4v1.TableEntry{TableId: id(t, p.info, "IngressT.exact_t")})); len(got) != 1 {
		t.Errorf("%d entries read back, want the one written", len(got))
	}
}

// marshalled is a request's protobuf bytes, which marshalledCodec sends
// as they are.
type marshalled []byte

// marshalledCodec is gRPC's protobuf codec but for marshalled requests.
type marshalledCodec struct{}

func (marshalledCodec) Marshal(v any) (mem.BufferSlice, error) {
	if b, ok := v.(marshalled); ok {
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	b, err := proto.Marshal(v.(proto.Message))
	return mem.BufferSlice{mem.SliceBuffer(b)}, err
}

func (marshalledCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return proto.Unmarshal(data.Materialize(), v.(proto.Message))
}

func (marshalledCodec) Name() string { return "proto" }
