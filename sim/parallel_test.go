package sim

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/p4rcm/p4rcm/dcqcn"
	"github.com/p4rcm/p4rcm/dctcp"
	"github.com/p4rcm/p4rcm/hpcc"
	"github.com/p4rcm/p4rcm/ldcp"
	"github.com/p4rcm/p4rcm/rcm"
	"github.com/p4rcm/p4rcm/sim/topo"
	"github.com/p4rcm/p4rcm/sim/workload"
	"github.com/p4rcm/p4rcm/timely"
)

// crossTraffic is a k = 4 fat tree whose hosts each send a few flows to
// hosts of other pods, starting together (ties everywhere) and in a
// burst, so that frames cross between parts however the tree is split.
func crossTraffic(t *testing.T, cc string) Config {
	t.Helper()
	tp, err := topo.FatTree(topo.FatTreeOptions{K: 4, HostRate: 100e9, Delay: us})
	if err != nil {
		t.Fatal(err)
	}
	var flows []workload.Flow
	for i := 0; i < 16; i++ {
		for j := 1; j <= 3; j++ {
			flows = append(flows, workload.Flow{Src: i, Dst: (i + 4*j + j) % 16, Size: int64(20_000 * (1 + (i+j)%5)),
				Start: int64((i*j)%3) * 2 * us, Priority: 3})
		}
	}
	// An incast onto host 0, to fill queues and trigger PFC and CNs.
	for i := 4; i < 16; i += 2 {
		flows = append(flows, workload.Flow{Src: i, Dst: 0, Size: 300_000, Start: 5 * us, Priority: 3})
	}
	cfg := Config{Seed: 3, Topology: tp, Flows: flows, MTU: 1000, AckInterval: 1, CC: cc, DCQCN: dcqcn.Mellanox(),
		PFC: true, Buffer: 2e6, PFCXOFF: 40e3, RTO: 100 * us, LDCP: ldcp.Draft(),
		HPCC: hpcc.NS3(), TIMELY: timely.NS3(), DCTCP: dctcp.NS3(),
		QueueSampling: QueueSampling{Interval: 3 * us, Max: 2000},
		RateSampling:  RateSampling{Interval: 5 * us},
		CCSampling:    CCSampling{Interval: 7 * us, Flows: []int{0, 5, 50}}}
	switch cc {
	case "rcm":
		p := rcm.Defaults()
		cfg.CC, cfg.RCM = "dcqcn", &p
	case "lossy":
		cfg.CC, cfg.PFC, cfg.QueueLimit = "dcqcn", false, 60e3
	case "hpcc", "dctcp":
		// As the ns-3 simulator runs them: a window, ACKs behind data and
		// held by PFC, so that they cross parts and wait for RESUMEs too.
		cfg.Window, cfg.AckInData, cfg.AckObeysPFC = Window{Enabled: true, Variable: true}, true, true
	}
	return cfg
}

// TestPartsGiveTheSameResults runs small networks split into 1 to 4
// parts, which the race detector also runs, and wants the same results
// from each: every field, every sample.
func TestPartsGiveTheSameResults(t *testing.T) {
	for _, cc := range []string{"dcqcn", "rcm", "ldcp", "ldcp-rate", "lossy", "none", "hpcc", "timely", "dctcp"} {
		t.Run(cc, func(t *testing.T) {
			var first *Results
			for threads := 1; threads <= 4; threads++ {
				cfg := crossTraffic(t, cc)
				cfg.Threads = threads
				n, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				if n.Threads() != threads {
					t.Fatalf("%d threads asked, %d parts: %s", threads, n.Threads(), n.ThreadsNote())
				}
				n.Run()
				r := n.Results()
				if len(r.Faults) > 0 || r.Completed != len(r.Flows) {
					t.Fatalf("%d threads: %d/%d completed, faults %v", threads, r.Completed, len(r.Flows), r.Faults)
				}
				if threads == 1 {
					first = r
					if cc == "lossy" && r.Retransmits == 0 || cc == "rcm" && r.RCM.CNsReceived == 0 || r.HostPauses == 0 && cc != "lossy" {
						t.Errorf("the traffic does not reach what it should: retransmits %d, CNs %d, host pauses %d",
							r.Retransmits, r.RCM.CNsReceived, r.HostPauses)
					}
					continue
				}
				st := n.ParallelStats()
				if st.Crossings == 0 || st.Windows == 0 {
					t.Errorf("%d threads: %d frames crossed in %d windows", threads, st.Crossings, st.Windows)
				}
				if d := diff(first, r); d != "" {
					t.Errorf("%d threads differ from 1: %s", threads, d)
				}
			}
		})
	}
}

// diff names the first field where two results differ.
func diff(a, b *Results) string {
	va, vb := reflect.ValueOf(*a), reflect.ValueOf(*b)
	for i := 0; i < va.NumField(); i++ {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			x, y := fmt.Sprint(va.Field(i).Interface()), fmt.Sprint(vb.Field(i).Interface())
			for j := 0; j < min(len(x), len(y)); j++ {
				if x[j] != y[j] {
					x, y = x[max(0, j-40):min(len(x), j+80)], y[max(0, j-40):min(len(y), j+80)]
					break
				}
			}
			return fmt.Sprintf("%s: %s\nagainst %s", va.Type().Field(i).Name, x, y)
		}
	}
	return ""
}

// TestPartsStopTogether checks the other ends of a run under parts: at
// StopAt with flows pending, and at a deadlock.
func TestPartsStopTogether(t *testing.T) {
	cfg := crossTraffic(t, "dcqcn")
	cfg.StopAt = 23*us + 517
	var first *Results
	for threads := 1; threads <= 3; threads++ {
		cfg.Threads = threads
		r, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if r.End != cfg.StopAt || r.Completed == len(r.Flows) {
			t.Fatalf("%d threads: end %d, %d completed", threads, r.End, r.Completed)
		}
		if first == nil {
			first = r
		} else if d := diff(first, r); d != "" {
			t.Errorf("%d threads differ from 1: %s", threads, d)
		}
	}
}

// TestPartsFallBack checks that a network that cannot be split, or whose
// links are too short for windows, runs in one part and says why.
func TestPartsFallBack(t *testing.T) {
	star, err := topo.Star(topo.StarOptions{N: 4, Rate: 100e9, Delay: us})
	if err != nil {
		t.Fatal(err)
	}
	flows := []workload.Flow{{Src: 0, Dst: 1, Size: 10_000, Priority: 3}}
	cfg := Config{Seed: 1, Topology: star, Flows: flows, MTU: 1000, AckInterval: 1, CC: "none", PFC: true, Buffer: 1e6, PFCXOFF: 40e3, Threads: 2}
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n.Threads() != 1 || n.ThreadsNote() == "" {
		t.Errorf("star: %d parts, note %q", n.Threads(), n.ThreadsNote())
	}
	cfg = crossTraffic(t, "dcqcn")
	cfg.Threads = 2
	for i, l := range cfg.Topology.Links {
		if cfg.Topology.Nodes[l.A].Kind == topo.Host {
			cfg.Topology.Links[i].Delay = 50_000 // 50 ns host links
		}
	}
	n, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n.Threads() != 1 || !strings.Contains(n.ThreadsNote(), "host links") {
		t.Errorf("short host links: %d parts, note %q", n.Threads(), n.ThreadsNote())
	}
	if got := DefaultThreads(cfg, 8); got != 1 {
		t.Errorf("DefaultThreads of 16 hosts on 8 cores: %d", got)
	}
	k6, err := topo.FatTree(topo.FatTreeOptions{K: 6, HostRate: 100e9, Delay: us})
	if err != nil {
		t.Fatal(err)
	}
	for cores, want := range map[int]int{1: 1, 2: 2, 8: 8} {
		if got := DefaultThreads(Config{Topology: k6}, cores); got != want {
			t.Errorf("DefaultThreads of 54 hosts on %d cores: %d, want %d", cores, got, want)
		}
	}
}

// TestCacheLines checks that the per-flow state two threads may write
// side by side (a flow's sender and its neighbour's, a flow's sender and
// receiver) fills whole cache lines.
func TestCacheLines(t *testing.T) {
	for name, size := range map[string]uintptr{
		"flow": unsafe.Sizeof(flow{}), "rxFlow": unsafe.Sizeof(rxFlow{}), "ldcpSender": unsafe.Sizeof(ldcpSender{}),
		"ldcpRateSender": unsafe.Sizeof(ldcpRateSender{}), "ldcpReceiver": unsafe.Sizeof(ldcpReceiver{}),
		"hpccSender": unsafe.Sizeof(hpccSender{}), "timelySender": unsafe.Sizeof(timelySender{}), "dctcpSender": unsafe.Sizeof(dctcpSender{}),
		"fib": unsafe.Sizeof(fib{}),
	} {
		if size%cacheLine != 0 {
			t.Errorf("%s is %d bytes, not whole cache lines", name, size)
		}
	}
	// A port's arrival side and its transmitter in separate lines.
	var p port
	if unsafe.Sizeof(p)%cacheLine != 0 || unsafe.Offsetof(p.peerHost) >= cacheLine || unsafe.Offsetof(p.busyUntil) != cacheLine ||
		unsafe.Offsetof(p.dp) >= 2*cacheLine || unsafe.Offsetof(p.wakeRef) < 2*cacheLine || unsafe.Offsetof(p.rxPart) < 2*cacheLine {
		t.Errorf("port: %d bytes, peerHost at %d, busyUntil at %d, dp at %d", unsafe.Sizeof(p), unsafe.Offsetof(p.peerHost),
			unsafe.Offsetof(p.busyUntil), unsafe.Offsetof(p.dp))
	}
}

// TestStopAfterTheLastFlow runs past the last completion to StopAt with
// samplers on: sampling ends with the last flow, and the run ends at
// StopAt.
func TestStopAfterTheLastFlow(t *testing.T) {
	cfg := crossTraffic(t, "dcqcn")
	cfg.StopAt = 2 * ms
	var first *Results
	for threads := 1; threads <= 2; threads++ {
		cfg.Threads = threads
		r, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if r.End != cfg.StopAt || r.Completed != len(r.Flows) || len(r.RateSamples) == 0 {
			t.Fatalf("%d threads: end %d, %d/%d completed, %d rate samples", threads, r.End, r.Completed, len(r.Flows), len(r.RateSamples))
		}
		if last := r.RateSamples[len(r.RateSamples)-1].Time; last > r.LastFinish+cfg.RateSampling.Interval {
			t.Errorf("%d threads: a rate sample at %d, after the last flow at %d", threads, last, r.LastFinish)
		}
		if first == nil {
			first = r
		} else if d := diff(first, r); d != "" {
			t.Errorf("%d threads differ from 1: %s", threads, d)
		}
	}
}

// TestGateRounds plays a coordinator and a worker meeting at gates for
// many rounds, the worker's waits spinning and sleeping by turns: each
// side must see what the other wrote before its signal. A gate that let
// a wait return on a wake-up meant for the one before (the signal of a
// round the worker saw while spinning, waking it asleep in the next)
// failed this.
func TestGateRounds(t *testing.T) {
	// A pause in the coordinator's signals between counting one and
	// waking the worker, in which the worker starts its next wait.
	var start, done gate
	gateHold = func(g *gate) {
		if g == &start {
			time.Sleep(20 * time.Microsecond)
		}
	}
	defer func() { gateHold = nil }()
	start.init()
	done.init()
	var shared [2]int
	const rounds = 2000
	early := 0 // rounds the worker started before the coordinator's signal
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for r := 0; r < rounds; r++ {
			// Spin in one round, sleep at once in the next.
			start.short = 0xffff * uint16(1-r%2)
			start.wait(uint64(r))
			if shared[0] != r {
				early++
			}
			shared[1] = r
			done.signal()
		}
	}()
	for r := 0; r < rounds; r++ {
		time.Sleep(5 * time.Microsecond) // a worker woken too early sees the round before
		shared[0] = r
		start.signal()
		done.short = 0
		done.wait(uint64(r))
	}
	<-finished
	if early > 0 {
		t.Errorf("the worker started %d of %d rounds before the coordinator's signal", early, rounds)
	}
}

// TestAdaptGivesTheSameResults runs split networks whose pacer's clock
// moves 60 ms a window, so that each trial is a window and the parts
// take turns on one thread and on their own: the results are those of
// one part.
func TestAdaptGivesTheSameResults(t *testing.T) {
	clock := time.Unix(0, 0)
	paceNow = func() time.Time { clock = clock.Add(60 * time.Millisecond); return clock }
	defer func() { paceNow = time.Now }()
	for _, cc := range []string{"dcqcn", "rcm", "hpcc"} {
		cfg := crossTraffic(t, cc)
		first, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, threads := range []int{2, 3} {
			cfg := crossTraffic(t, cc)
			cfg.Threads, cfg.Adapt = threads, true
			n, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			n.Run()
			st := n.ParallelStats()
			if st.OneThread == 0 || st.OneThread == st.Windows {
				t.Errorf("%s, %d threads: %d of %d windows on one thread, want some of each", cc, threads, st.OneThread, st.Windows)
			}
			if d := diff(first, n.Results()); d != "" {
				t.Errorf("%s, %d threads adapting differ from 1: %s", cc, threads, d)
			}
		}
	}
}

// TestPacerKeepsTheFaster feeds the pacer trials of known speed: it
// keeps the faster way, threads unless one thread wins by the margin,
// and trusts a choice the trials repeat for longer.
func TestPacerKeepsTheFaster(t *testing.T) {
	start := time.Unix(0, 0)
	p := newPacer(start)
	now := start
	// trial runs one trial of trialTime at perEvent ns an event and
	// returns the way chosen after it.
	trial := func(perEvent float64) bool {
		now = now.Add(trialTime)
		p.ran(uint64(float64(trialTime)/perEvent), now)
		return p.oneThread
	}
	keep := func() {
		now = now.Add(p.keep)
		p.ran(1000, now)
		if p.phase != trialThreads || p.oneThread {
			t.Fatalf("after keeping: phase %d, one thread %v; want a trial on threads", p.phase, p.oneThread)
		}
	}
	if p.oneThread || !trial(100) {
		t.Fatal("the first trials run threads, then one thread")
	}
	if !trial(50) {
		t.Error("one thread twice as fast: threads kept")
	}
	if p.keep != keepTime {
		t.Errorf("a new choice kept %v, want %v", p.keep, keepTime)
	}
	keep()
	trial(100)
	if !trial(50) || p.keep != 2*keepTime {
		t.Errorf("the same choice again: one thread %v, kept %v; want one thread for %v", p.oneThread, p.keep, 2*keepTime)
	}
	keep()
	trial(100)
	if trial(99) {
		t.Error("one thread 1% faster, within the margin: chose one thread")
	}
	if p.keep != keepTime {
		t.Errorf("a changed choice kept %v, want %v", p.keep, keepTime)
	}
	for i := 0; i < 10; i++ {
		keep()
		trial(50)
		trial(100)
	}
	if p.oneThread || p.keep != maxKeep {
		t.Errorf("threads twice as fast ten times: one thread %v, kept %v; want threads for %v", p.oneThread, p.keep, maxKeep)
	}
}
