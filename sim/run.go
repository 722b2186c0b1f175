package sim

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/p4rcm/p4rcm/sim/event"
	"github.com/p4rcm/p4rcm/sim/partition"
	"github.com/p4rcm/p4rcm/sim/topo"
)

// A run with several parts is a conservative parallel simulation. Every
// interaction between two nodes travels on a link, so nothing a part does
// at time t reaches another part before t plus the shortest delay of a
// link between parts (the lookahead). The parts therefore run in windows:
// from the earliest event pending anywhere, each part runs its own events
// up to one lookahead later, on its own thread, while the frames it sends
// to other parts wait in its outbox; between windows the parts take the
// frames sent to them. A window also ends where something must see every
// part at once: a sample, the deadlock check, StopAt, the last flow's
// completion.
//
// The results are the same, byte for byte, for any number of parts,
// because each node sees the same events in the same order: events are
// ordered by time and then by a key that names the event (package event),
// not by when or in which queue they were scheduled; every random draw
// comes from a stream of its own switch or port; and what is global (the
// flows' starts, samples, counters, the end) is done per host, between
// windows, or summed.
//
// The end needs care: a run ends with the picosecond its last flow
// completes in, and a part must not run past it. A flow completes when
// the ACK covering its last byte reaches its sender, and the sender's
// switch sends that ACK at least a host link's delay earlier: the part
// announces the completion then (part.watch), windows are no longer than
// a host link's delay, and so every completion is known before the window
// it falls in starts. Once every flow's completion is announced the last
// window ends at the last of them.

// minLookahead is the shortest window worth running in parallel: links
// shorter than this are not cut between parts.
const minLookahead = 100 * event.Nanosecond

// stallLimit ends a run in which flows are pending but no data packet has
// been sent for this long: a deadlock, which is reported as a fault.
const stallLimit = 200 * event.Millisecond

// stallCheck is how often the run looks for a stall: on a grid of
// simulated time, so that every split of the network looks at the same
// moments.
const stallCheck = event.Millisecond

// progressEvery is how many events a run executes between calls of
// Config.Progress.
const progressEvery = 1 << 16

// split divides the network into at most threads parts.
func (n *Network) split(threads int) {
	t := n.cfg.Topology
	n.plan = partition.Split(t, threads, minLookahead)
	if n.plan.Parts > 1 {
		hostDelay := maxTime
		for _, l := range t.Links {
			if t.Nodes[l.A].Kind == topo.Host || t.Nodes[l.B].Kind == topo.Host {
				hostDelay = min(hostDelay, l.Delay)
			}
		}
		n.window = min(n.plan.Lookahead, hostDelay)
		if n.window < minLookahead {
			n.plan = partition.Split(t, 1, minLookahead)
			n.plan.Note = fmt.Sprintf("host links of %s are too short for parallel windows (at least %s)",
				topo.FormatDelay(hostDelay), topo.FormatDelay(minLookahead))
			n.window = 0
		}
	}
	n.parts = make([]*part, n.plan.Parts)
	for i := range n.parts {
		n.parts[i] = newPart(n, i, n.plan.Parts)
	}
}

// watchEnds has the ports facing hosts announce completions when the
// network has several parts.
func (n *Network) watchEnds() {
	if len(n.parts) == 1 {
		return
	}
	for _, ports := range n.ports {
		for i := range ports {
			p := &ports[i]
			p.watch = p.peerHost != nil
		}
	}
}

// Threads is the number of parts the network runs in, one thread each:
// Config.Threads or fewer (ThreadsNote says why).
func (n *Network) Threads() int { return len(n.parts) }

// ThreadsNote says why the network runs in fewer parts than
// Config.Threads asked for; empty if it does not.
func (n *Network) ThreadsNote() string { return n.plan.Note }

// ParallelStats describes how a run went in parallel: how the work fell
// into windows and parts, for a model of the speed-up on more cores.
type ParallelStats struct {
	Parts int `json:"parts"`
	// Weight is each part's share of the ports' capacity, which the split
	// balances.
	Weight []float64 `json:"weight"`
	// Cut is the number of links between parts; Lookahead the longest a
	// window may be, ps.
	Cut       int   `json:"cut_links"`
	Lookahead int64 `json:"lookahead_ps"`
	// Windows is the number of windows run.
	Windows int64 `json:"windows"`
	// Events is the events each part ran; Critical sums, over windows,
	// the events of the part that ran most in each: with a core per part
	// and nothing else, the run takes Critical events' time plus the
	// windows' synchronisation.
	Events   []uint64 `json:"events"`
	Critical uint64   `json:"critical_events"`
	// Crossings is the frames sent from one part to another.
	Crossings int64 `json:"crossings"`
	// Busy is the wall time the parts spent running their windows, summed
	// over parts; CriticalBusy sums, over windows, the longest any part
	// took. On a machine with a core per part and nothing else to run,
	// CriticalBusy is the run's length less the windows' meetings; where
	// the system shares the cores with other work, it grows by the time
	// the parts were put aside.
	Busy         time.Duration `json:"busy_ns"`
	CriticalBusy time.Duration `json:"critical_busy_ns"`
	// Wait is the wall time the first part's thread spent waiting for the
	// others at the ends of windows.
	Wait time.Duration `json:"wait_ns"`
	// OneThread is the windows run with every part on one thread
	// (Config.Adapt).
	OneThread int64 `json:"one_thread_windows"`
}

// ParallelStats returns the run's figures; zero with one part.
func (n *Network) ParallelStats() ParallelStats { return n.stats }

// Run simulates until every flow completes (or StopAt) and returns the
// results.
func Run(cfg Config) (*Results, error) {
	n, err := New(cfg)
	if err != nil {
		return nil, err
	}
	n.Run()
	return n.Results(), nil
}

// Run runs the simulation.
func (n *Network) Run() {
	for _, h := range n.hosts {
		if h != nil {
			h.scheduleStart()
		}
	}
	n.startSamplers()
	n.nextCheck = stallCheck
	total := len(n.flows)
	switch {
	case total == 0 && n.cfg.StopAt == 0:
	case len(n.parts) == 1:
		n.runSerial()
	default:
		n.runParallel()
	}
	for _, pt := range n.parts {
		if pt.bad != "" {
			n.faults = append(n.faults, pt.bad)
		}
	}
	if n.cfg.Progress != nil {
		done, _, _ := n.count()
		n.cfg.Progress(n.end, done, total)
	}
}

// runSerial runs a network of one part on the calling goroutine.
func (n *Network) runSerial() {
	pt := n.parts[0]
	q := &pt.q
	total := len(n.flows)
	for {
		stop := n.nextStop()
		for {
			q.RunThrough(stop, progressEvery)
			if pt.done == total && n.cfg.StopAt == 0 {
				// The last flow completed: the rest of its picosecond.
				q.RunThrough(q.Now(), math.MaxUint64)
				n.end = q.Now()
				return
			}
			if at, ok := q.Peek(); !ok || at > stop {
				break
			}
			if n.cfg.Progress != nil {
				n.cfg.Progress(q.Now(), pt.done, total)
			}
		}
		if n.pause(stop) {
			return
		}
	}
}

// nextStop is when the run must next see every part at once: the next
// sample, deadlock check or StopAt.
func (n *Network) nextStop() int64 {
	t := n.nextCheck
	for _, s := range n.samplers {
		t = min(t, s.next)
	}
	if n.cfg.StopAt > 0 {
		t = min(t, n.cfg.StopAt)
	}
	return t
}

// count sums the parts' completed and started flows and data packets.
func (n *Network) count() (done, started int, data int64) {
	for _, pt := range n.parts {
		done += pt.done
		started += pt.started
		data += pt.dataPackets
	}
	return done, started, data
}

// idle reports whether nothing at all is pending: no event, no frame
// between parts.
func (n *Network) idle() bool {
	for _, pt := range n.parts {
		if pt.q.Len() > 0 {
			return false
		}
		for _, l := range pt.out {
			for _, c := range l {
				if len(c) > 0 {
					return false
				}
			}
		}
	}
	return true
}

// pause runs between windows at time at, with every event up to at run
// in every part: it takes the samples due and looks for a stall, and
// reports whether the run ends at at.
func (n *Network) pause(at int64) bool {
	total := len(n.flows)
	done, started, data := n.count()
	stop := n.cfg.StopAt
	if stop == 0 && done == total {
		n.end = at
		return true
	}
	if stop == 0 && n.idle() {
		for _, pt := range n.parts {
			n.end = max(n.end, pt.q.Now())
		}
		n.faults = append(n.faults, fmt.Sprintf("event queue ran dry at %d ps with %d of %d flows incomplete", n.end, total-done, total))
		return true
	}
	for _, s := range n.samplers {
		switch {
		case done == total:
			s.next = maxTime // sampling ends with the last flow
		case s.next == at:
			s.take(n, at)
		}
	}
	if at == n.nextCheck {
		n.nextCheck += stallCheck
		if data != n.lastData {
			n.lastData, n.lastChange = data, at
		} else if at-n.lastChange > stallLimit && started == total && done < total {
			n.faults = append(n.faults, fmt.Sprintf("no data sent for %d ms at %d ps with %d flows incomplete: deadlock", stallLimit/event.Millisecond, at, total-done))
			n.end = at
			return true
		}
	}
	if stop > 0 && at >= stop {
		n.end = stop
		return true
	}
	return false
}

// runParallel runs the parts in windows, each on its own goroutine.
func (n *Network) runParallel() {
	r := newRunner(n)
	defer r.close()
	total := len(n.flows)
	st := &n.stats
	st.Parts, st.Weight, st.Cut, st.Lookahead = len(n.parts), n.plan.Weight, n.plan.Cut, n.window
	st.Events = make([]uint64, len(n.parts))
	endAt := maxTime // the last completion, once every flow's is announced
	announced, lastEnd := 0, int64(0)
	nextProgress := uint64(progressEvery)
	for _, pt := range n.parts {
		if at, ok := pt.q.Peek(); ok {
			pt.next = at
		}
	}
	var pace *pacer
	if n.cfg.Adapt {
		pace = newPacer(paceNow())
	}
	for w := int64(0); ; w++ {
		end := n.nextStop()
		if t := n.earliest(); t < maxTime {
			end = min(end, t+n.window-1)
		}
		end = min(end, endAt)
		if pace != nil {
			r.alone = pace.oneThread
		}
		r.run(w, end)
		if r.alone {
			st.OneThread++
		}
		var most uint64
		var ran uint64
		var longest time.Duration
		for _, pt := range n.parts {
			st.Busy += pt.busy
			longest = max(longest, pt.busy)
			announced += pt.announced
			lastEnd = max(lastEnd, pt.lastEnd)
			pt.announced = 0
			st.Events[pt.id] += pt.ran
			ran += pt.ran
			most = max(most, pt.ran)
			st.Crossings += pt.crossed
			pt.crossed = 0
		}
		if pace != nil {
			pace.ran(ran, paceNow())
		}
		st.Windows++
		st.Critical += most
		st.CriticalBusy += longest
		if announced == total && n.cfg.StopAt == 0 {
			endAt = lastEnd
		}
		if end == endAt {
			if done, _, _ := n.count(); done != total {
				n.faults = append(n.faults, fmt.Sprintf("simulator fault: %d of %d flows complete at the announced end %d ps", done, total, end))
			}
			n.end = end
			return
		}
		if n.pause(end) {
			return
		}
		if n.cfg.Progress != nil {
			var ev uint64
			for _, pt := range n.parts {
				ev += pt.q.Executed
			}
			if ev >= nextProgress {
				nextProgress = ev + progressEvery
				done, _, _ := n.count()
				n.cfg.Progress(end, done, total)
			}
		}
	}
}

// earliest is the time of the earliest event pending in any part, or of
// a frame on its way between parts.
func (n *Network) earliest() int64 {
	t := maxTime
	for _, pt := range n.parts {
		t = min(t, pt.next, pt.sentMin)
	}
	return t
}

// runWindow runs the part's window w, to end: first the frames the others
// sent it in the window before, then its events.
func (pt *part) runWindow(w, end int64) {
	start := time.Now()
	defer func() { pt.busy = time.Since(start) }()
	pt.win = w
	pt.sentMin = maxTime
	if w > 0 {
		pt.receive(w - 1)
	}
	before := pt.q.Executed
	pt.q.RunThrough(end, math.MaxUint64)
	pt.ran = pt.q.Executed - before
	pt.next = maxTime
	if at, ok := pt.q.Peek(); ok {
		pt.next = at
	}
}

// pacer decides, for a run with Config.Adapt, whether the parts run
// on threads of their own or all on one. Which is faster depends less on
// the run than on the machine: on some two-core machines two threads
// that pass frames between them take twice as long per event as one,
// while two separate processes each run at full speed; and on any machine
// other work can take a core at any time. So it measures both in turn, a
// trial of trialTime each compared by wall time per event, and keeps the
// faster for a while: keepTime, doubled each time the trials agree with
// the last, up to maxKeep. One thread must win by oneThreadMargin, since
// trials a few windows apart see somewhat different traffic.
type pacer struct {
	oneThread bool
	// phase is trialThreads, trialOne or keeping.
	phase    int
	since    time.Time
	events   uint64
	perEvent [2]float64 // ns per event in the trials, by phase
	// kept is the way the last trials chose, keep how long it holds.
	kept bool
	keep time.Duration
}

const (
	trialThreads = iota
	trialOne
	keeping
)

const (
	trialTime       = 50 * time.Millisecond
	keepTime        = 2 * time.Second
	maxKeep         = 16 * time.Second
	oneThreadMargin = 0.97
)

// paceNow is the pacer's clock; a test runs it faster.
var paceNow = time.Now

func newPacer(now time.Time) *pacer { return &pacer{since: now, keep: keepTime} }

// ran takes the events of a window that ended at now.
func (p *pacer) ran(events uint64, now time.Time) {
	p.events += events
	d := now.Sub(p.since)
	switch p.phase {
	case trialThreads, trialOne:
		if d < trialTime {
			return
		}
		p.perEvent[p.phase] = float64(d) / float64(max(p.events, 1))
		p.phase++
		if p.phase == trialOne {
			p.oneThread = true
			break
		}
		one := p.perEvent[trialOne] < oneThreadMargin*p.perEvent[trialThreads]
		if one == p.kept {
			p.keep = min(2*p.keep, maxKeep)
		} else {
			p.keep = keepTime
		}
		p.oneThread, p.kept = one, one
	default:
		if d < p.keep {
			return
		}
		p.phase, p.oneThread = trialThreads, false
	}
	p.since, p.events = now, 0
}

// runner runs the parts' windows: the first part on the calling
// goroutine, each other on one of its own.
type runner struct {
	parts []*part
	// The window to run, written before the parts are let go.
	win, end int64
	quit     bool
	start    []gate // per part (the first unused): a window to run
	// alone runs the next window's parts one after the other on the
	// calling goroutine, leaving the others waiting.
	alone    bool
	left     atomic.Int32
	done     gate // the last part to finish lets the first know
	doneSeen uint64
	wg       sync.WaitGroup
	wait     *time.Duration
}

func newRunner(n *Network) *runner {
	r := &runner{parts: n.parts, start: make([]gate, len(n.parts)), wait: &n.stats.Wait}
	r.done.init()
	for i := 1; i < len(n.parts); i++ {
		r.start[i].init()
		r.wg.Add(1)
		go r.work(n.parts[i])
	}
	return r
}

func (r *runner) work(pt *part) {
	defer r.wg.Done()
	g := &r.start[pt.id]
	for seen := uint64(0); ; seen++ {
		g.wait(seen)
		if r.quit {
			return
		}
		pt.runWindow(r.win, r.end)
		if r.left.Add(-1) == 0 {
			r.done.signal()
		}
	}
}

// run runs window w to end in every part and returns when all are done.
func (r *runner) run(w, end int64) {
	if r.alone {
		for _, pt := range r.parts {
			pt.runWindow(w, end)
		}
		return
	}
	r.win, r.end = w, end
	r.left.Store(int32(len(r.parts) - 1))
	for i := 1; i < len(r.parts); i++ {
		r.start[i].signal()
	}
	r.parts[0].runWindow(w, end)
	t := time.Now()
	r.done.wait(r.doneSeen)
	r.doneSeen++
	*r.wait += time.Since(t)
}

func (r *runner) close() {
	r.quit = true
	for i := 1; i < len(r.parts); i++ {
		r.start[i].signal()
	}
	r.wg.Wait()
}

// gate lets a goroutine wait for another's signal. A part that finishes
// its window first usually waits microseconds for the others, less than
// it takes to wake a sleeping thread: so it spins, for up to spinFor.
// But where the machine's cores are busy with other work, a part waits
// for one that the system has put aside, and spinning only takes a core
// from it: so a gate whose recent waits have mostly been long sleeps at
// once, and spins again when they are short (the time to wake included).
type gate struct {
	signals atomic.Uint64
	mu      sync.Mutex
	cond    sync.Cond
	// short has a bit for each of the waiter's last 16 waits, set if it
	// ended within spinFor.
	short uint16
}

func (g *gate) init() {
	g.cond.L = &g.mu
	g.short = 0xffff
}

// spinFor is how long a gate spins before it sleeps. A window of the
// benchmark lasts about half a millisecond, and the part that finishes
// first waits for the other by a share of it that varies from window to
// window; waking a thread that went to sleep costs tens of microseconds
// here (a futex in a virtual machine). Spinning up to 50 us, two
// threads ran the benchmark 1.61x as fast as one on this class of
// machine; up to 300 us, 1.84x (BENCHMARKS.md). On a busy machine the
// waits are longer than either, and a gate sleeps at once (short).
const spinFor = 300 * time.Microsecond

// gateHold, if set, runs in signal between counting the signal and
// waking the waiter: a test widens the gap with it.
var gateHold func(*gate)

func (g *gate) signal() {
	g.signals.Add(1)
	if gateHold != nil {
		gateHold(g)
	}
	g.mu.Lock()
	g.cond.Broadcast()
	g.mu.Unlock()
}

// wait returns once more than seen signals have come.
func (g *gate) wait(seen uint64) {
	if g.signals.Load() > seen {
		g.short = g.short<<1 | 1
		return
	}
	start := time.Now()
	if bits.OnesCount16(g.short) >= 8 {
		for i := 1; ; i++ {
			if g.signals.Load() > seen {
				g.short = g.short<<1 | 1
				return
			}
			if i&255 == 0 {
				if time.Since(start) > spinFor {
					break
				}
				runtime.Gosched()
			}
		}
	}
	g.mu.Lock()
	for g.signals.Load() <= seen {
		g.cond.Wait()
	}
	g.mu.Unlock()
	g.short <<= 1
	if time.Since(start) <= spinFor {
		g.short |= 1
	}
}

// MinParallelHosts is the smallest network DefaultThreads gives more than
// one thread: in smaller ones a window holds too few events to outweigh
// the threads' meeting at its end (BENCHMARKS.md).
const MinParallelHosts = 48

// DefaultThreads is how many threads a run of cfg gets when none are
// asked for, on a machine with cores cores to give it: one per core when
// the network is large enough to gain from them, else one. New may still
// split the network into fewer parts (Network.ThreadsNote).
func DefaultThreads(cfg Config, cores int) int {
	if cores < 2 || cfg.Topology == nil {
		return 1
	}
	hosts := 0
	for _, nd := range cfg.Topology.Nodes {
		if nd.Kind == topo.Host {
			hosts++
		}
	}
	if hosts < MinParallelHosts {
		return 1
	}
	return cores
}
