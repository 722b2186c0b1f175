package sim

import (
	"runtime"
	"testing"

	"github.com/p4rcm/p4rcm/dcqcn"
	"github.com/p4rcm/p4rcm/sim/topo"
	"github.com/p4rcm/p4rcm/sim/workload"
)

// TestMemoryEstimate keeps EstimateMemory's figures honest. They estimate
// peak resident memory, which Go's collector (GOGC=100) lets run up to
// about twice the live heap; so the live heap after a run (a k=16 fat
// tree, 1,024 hosts, 20,000 flows; the network and its results) must lie
// between a third and two thirds of the estimate. A port or a flow that
// grows or shrinks much fails it.
func TestMemoryEstimate(t *testing.T) {
	tp, err := topo.FatTree(topo.FatTreeOptions{K: 16, HostRate: 100e9, Delay: us})
	if err != nil {
		t.Fatal(err)
	}
	hosts := tp.Hosts()
	flows := make([]workload.Flow, 20_000)
	for i := range flows {
		flows[i] = workload.Flow{ID: i, Src: hosts[i%len(hosts)], Dst: hosts[(i*7+1)%len(hosts)], Size: 10_000, Start: int64(i) * us, Priority: 3}
	}
	for _, threads := range []int{1, 4} {
		cfg := Config{Seed: 1, Topology: tp, Flows: flows, MTU: 1000, AckInterval: 1, CC: "dcqcn",
			DCQCN: dcqcn.Mellanox(), PFC: true, Buffer: 32e6, PFCXOFF: 50e3, RTO: ms, Threads: threads}
		est := EstimateMemory(cfg)
		if want := int64(memBase + (threads-1)*memPerThread); est.Base != want {
			t.Errorf("%d threads: base %d, want %d", threads, est.Base, want)
		}

		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		n, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		n.Run()
		r := n.Results()
		if r.Completed != len(flows) || n.Threads() != threads {
			t.Fatalf("%d of %d flows completed on %d threads", r.Completed, len(flows), n.Threads())
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(n)
		runtime.KeepAlive(r)
		heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		parts := est.Ports + est.Routes + est.Flows
		perThread := int64(threads-1) * memPerThread
		t.Logf("%d threads: live heap after the run %.1f MB; estimate %.1f MB (ports %.1f, routes %.1f, flows %.1f, threads %.1f)",
			threads, float64(heap)/1e6, float64(parts+perThread)/1e6, float64(est.Ports)/1e6, float64(est.Routes)/1e6, float64(est.Flows)/1e6, float64(perThread)/1e6)
		if heap < parts/3 || heap > parts*2/3+perThread {
			t.Errorf("%d threads: live heap %d B outside [estimate/3, 2 estimate/3 + threads] = [%d, %d]", threads, heap, parts/3, parts*2/3+perThread)
		}
	}
}

// BenchmarkNewFatTree48 builds the network of a k=48 fat tree (27,648
// hosts, 2,880 switches): routes, forwarding tables, switches and ports,
// the work before the first event of a large run.
func BenchmarkNewFatTree48(b *testing.B) {
	tp, err := topo.FatTree(topo.FatTreeOptions{K: 48, HostRate: 100e9, Delay: us})
	if err != nil {
		b.Fatal(err)
	}
	hosts := tp.Hosts()
	cfg := Config{Seed: 1, Topology: tp, Flows: []workload.Flow{{Src: hosts[0], Dst: hosts[1], Size: 1000, Priority: 3}},
		MTU: 1000, AckInterval: 1, CC: "dcqcn", DCQCN: dcqcn.Mellanox(), PFC: true, Buffer: 32e6, PFCXOFF: 50e3, RTO: ms}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(cfg); err != nil {
			b.Fatal(err)
		}
	}
}
