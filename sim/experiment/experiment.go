// Package experiment compares congestion-control schemes on one scenario:
// it runs the simulator once per (scheme, seed), in parallel, and sets the
// schemes side by side by flow completion time per flow-size class (the
// RCM paper's mice, medium and elephant flows) and by goodput per flow
// class, against a baseline scheme. It writes the comparison as CSV, JSON,
// plots (PNG and SVG) and a self-contained HTML page, beside each run's own
// report (sim/report).
//
// Scheme names are opaque: each is handed to the scenario as
// Set("scheme", name), and a scheme the simulator does not know fails its
// runs with the scenario's message while the others complete.
//
// The same Spec gives the same comparison whatever the parallelism: every
// run works on its own copy of the scenario and its own simulator, and
// results are kept in (scheme, seed) order, not in completion order. Only
// wall times differ from one execution to the next.
package experiment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/report"
	"github.com/p4rcm/p4rcm/sim/scenario"
)

// DefaultBaseline is the scheme the others are compared with when it is
// among the schemes and Spec.Baseline is empty: DCQCN with PFC is what
// lossless fabrics run today.
const DefaultBaseline = "dcqcn"

// Spec says what to run.
type Spec struct {
	// Scenario is the scenario, loaded and overridden by the caller. Run
	// does not modify it: each run works on its own copy, with the scheme
	// and seed set as if by Set("scheme", ...) and Set("seed", ...).
	Scenario *scenario.Scenario
	// Schemes are the schemes to compare, in the order to report them.
	// Names must be unique and usable in a file name (letters, digits,
	// '.', '_', '-'), since each run gets a directory "<scheme>-seed<N>".
	Schemes []string
	// Seeds are the seeds to run each scheme with; empty means the
	// scenario's own seed. They are reported in ascending order.
	Seeds []uint64
	// Baseline is the scheme the changes are relative to: empty means
	// DefaultBaseline if it is among Schemes, else the first scheme.
	Baseline string
	// Jobs is how many runs go at once; 0 means runtime.NumCPU().
	Jobs int
	// Runner runs one configuration (sim.Run if nil): p4ctl emulate
	// compare gives the emulation's, so that emulated runs are compared
	// and reported as simulated ones are.
	Runner func(ctx context.Context, cfg sim.Config) (*sim.Results, error)
	// Progress, if set, is called after each run ends and, while runs are
	// under way, every ProgressInterval. Calls come one at a time, from
	// the goroutine that called Run.
	Progress func(Progress)
}

// ProgressInterval is how often Spec.Progress hears of the runs in flight.
const ProgressInterval = 250 * time.Millisecond

// Progress is how far an experiment has gone.
type Progress struct {
	RunsEnded, Runs int
	// FlowsDone counts the completed flows of all runs, ended or under
	// way; Flows is the flows of all runs, where runs not yet built are
	// taken to have as many as the first one built (0 until one is).
	FlowsDone, Flows int
}

// RunResult is one simulation of the experiment.
type RunResult struct {
	Scheme string `json:"scheme"`
	Seed   uint64 `json:"seed"`
	// Dir is the run's output directory under the experiment's, empty
	// when the run produced no results to write.
	Dir string `json:"dir,omitempty"`
	// Hosts and Flows size the run's network and workload.
	Hosts int `json:"hosts"`
	Flows int `json:"flows"`
	// WallSeconds is the time the simulation took (sim.Run alone).
	WallSeconds float64 `json:"wall_seconds"`
	// Error says why the run failed: it could not be built or run, or it
	// ran with faults (which invalidate it). Empty for a good run.
	Error string `json:"error,omitempty"`
	// Summary is report.Summarize of the run's results, absent when it
	// has none.
	Summary *report.Summary `json:"summary,omitempty"`

	// Results are the simulator's raw results (nil if it did not run),
	// and RateInterval its rate sampling interval in picoseconds; they
	// are left out of the JSON, which would otherwise hold every flow.
	Results      *sim.Results `json:"-"`
	RateInterval int64        `json:"-"`
}

// OK tells whether the run counts in the comparison: it ran, and without
// faults.
func (r *RunResult) OK() bool { return r.Error == "" && r.Results != nil }

// Name is how messages refer to the run: "dcqcn seed 1".
func (r *RunResult) Name() string { return fmt.Sprintf("%s seed %d", r.Scheme, r.Seed) }

// Result is an experiment's outcome.
type Result struct {
	Scenario    string   `json:"scenario"`
	Description string   `json:"description"`
	Schemes     []string `json:"schemes"`
	Seeds       []uint64 `json:"seeds"`
	Baseline    string   `json:"baseline"`
	// Runs are in (scheme as in Schemes, seed ascending) order.
	Runs []RunResult `json:"runs"`
	// SizeClasses compares the schemes per flow-size class (SizeClasses
	// order, then scheme order); FlowClasses per flow class label (by
	// name, then scheme order), empty when no flow has a class.
	SizeClasses []Row `json:"size_classes"`
	FlowClasses []Row `json:"flow_classes"`
	// WallSeconds is the whole experiment's time.
	WallSeconds float64 `json:"wall_seconds"`
}

// Failed lists the runs that failed, in run order.
func (r *Result) Failed() []*RunResult {
	var out []*RunResult
	for i := range r.Runs {
		if !r.Runs[i].OK() {
			out = append(out, &r.Runs[i])
		}
	}
	return out
}

// Err summarises the failed runs as one error (nil if none failed), so a
// caller can report them after writing the others' results.
func (r *Result) Err() error {
	failed := r.Failed()
	if len(failed) == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d runs failed; %s: %s", len(failed), len(r.Runs), failed[0].Name(), failed[0].Error)
}

// schemeName is what a scheme may be called: it names directories and
// files, so no separators and no leading dot.
var schemeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// CheckScheme reports whether name can be a scheme of an experiment (see
// Spec.Schemes); whether the simulator knows it is found out by running.
func CheckScheme(name string) error {
	if !schemeName.MatchString(name) {
		return fmt.Errorf("scheme %q: want letters, digits, '.', '_' or '-' (at most 64, not starting with '.', '_' or '-')", name)
	}
	return nil
}

// runPlan is a checked Spec with its defaults resolved.
type runPlan struct {
	schemes  []string
	seeds    []uint64 // ascending
	baseline string
	jobs     int
	src      *scenario.Scenario // the caller's; each run works on a Clone
}

// plan checks spec and resolves its defaults, without the scenario.
func plan(spec Spec) (*runPlan, error) {
	if spec.Scenario == nil {
		return nil, errors.New("experiment: no scenario")
	}
	if len(spec.Schemes) == 0 {
		return nil, errors.New("experiment: no schemes")
	}
	for i, s := range spec.Schemes {
		if err := CheckScheme(s); err != nil {
			return nil, fmt.Errorf("experiment: %w", err)
		}
		if slices.Contains(spec.Schemes[:i], s) {
			return nil, fmt.Errorf("experiment: scheme %q given twice", s)
		}
	}
	p := &runPlan{schemes: slices.Clone(spec.Schemes), seeds: slices.Clone(spec.Seeds), baseline: spec.Baseline, jobs: spec.Jobs}
	if len(p.seeds) == 0 {
		seed := spec.Scenario.Seed
		if seed == 0 {
			seed = scenario.DefaultSeed
		}
		p.seeds = []uint64{seed}
	}
	slices.Sort(p.seeds)
	for i, s := range p.seeds {
		if s == 0 {
			return nil, errors.New("experiment: seed 0 is the scenario's default seed; give it as 1")
		}
		if i > 0 && p.seeds[i-1] == s {
			return nil, fmt.Errorf("experiment: seed %d given twice", s)
		}
	}
	switch {
	case p.baseline == "" && slices.Contains(p.schemes, DefaultBaseline):
		p.baseline = DefaultBaseline
	case p.baseline == "":
		p.baseline = p.schemes[0]
	case !slices.Contains(p.schemes, p.baseline):
		return nil, fmt.Errorf("experiment: baseline %q is not among the schemes %s", p.baseline, strings.Join(p.schemes, ", "))
	}
	if p.jobs < 0 {
		return nil, fmt.Errorf("experiment: jobs must not be negative, got %d", p.jobs)
	}
	if p.jobs == 0 {
		p.jobs = runtime.NumCPU()
	}
	return p, nil
}

// Check reports what would stop Run before any simulation: a spec it
// cannot run, or a scenario that does not build (say, an unknown workload
// CDF), which would fail every run the same way. It builds a copy of the
// scenario once with scenario.DefaultScheme, which every simulator knows,
// and the first seed, so that a scheme the simulator does not know still
// fails only its own runs.
func Check(spec Spec) error {
	_, err := check(spec)
	return err
}

// check is Check, returning the plan.
func check(spec Spec) (*runPlan, error) {
	p, err := plan(spec)
	if err != nil {
		return nil, err
	}
	p.src = spec.Scenario
	s, err := p.src.Clone()
	if err == nil {
		err = s.Set("scheme", scenario.DefaultScheme)
	}
	if err == nil {
		err = s.Set("seed", strconv.FormatUint(p.seeds[0], 10))
	}
	if err == nil {
		_, err = s.Build()
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Run runs every (scheme, seed) of spec, at most spec.Jobs at a time, and
// compares the schemes. A run that fails (it cannot be built, the
// simulator returns an error or panics, or the run has faults) is
// recorded with its error in the Result and left out of the comparison;
// the other runs still complete, and Result.Err reports the failures. The
// error Run returns is Check's: for a spec it cannot run at all.
//
// If ctx is cancelled, runs not yet started fail with ctx's error and Run
// returns the partial Result with that error; a simulation under way runs
// to its end, since the simulator cannot be interrupted.
func Run(ctx context.Context, spec Spec) (*Result, error) {
	start := time.Now()
	p, err := check(spec)
	if err != nil {
		return nil, err
	}
	res := &Result{Scenario: spec.Scenario.Name, Description: spec.Scenario.Description,
		Schemes: p.schemes, Seeds: p.seeds, Baseline: p.baseline}
	for _, sc := range p.schemes {
		for _, seed := range p.seeds {
			res.Runs = append(res.Runs, RunResult{Scheme: sc, Seed: seed})
		}
	}
	total := len(res.Runs)
	jobs := min(p.jobs, total)

	// Workers take run indexes and fill in their own element of res.Runs
	// and of flows; nothing else is shared between them.
	flows := make([]runFlows, total)
	next := make(chan int)
	done := make(chan int)
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := &res.Runs[i]
				if err := ctx.Err(); err != nil {
					r.Error = err.Error()
				} else {
					runOne(ctx, p.src, spec.Runner, r, &flows[i])
				}
				done <- i
			}
		}()
	}
	go func() {
		for i := range total {
			next <- i
		}
		close(next)
		wg.Wait()
		close(done)
	}()
	ended := 0
	tick := time.NewTicker(ProgressInterval)
	defer tick.Stop()
	report := func() {
		if spec.Progress != nil {
			spec.Progress(progressOf(flows, ended))
		}
	}
	for running := true; running; {
		select {
		case _, ok := <-done:
			if !ok {
				running = false
				continue
			}
			ended++
			report()
		case <-tick.C:
			if ended < total {
				report()
			}
		}
	}
	res.Compare()
	res.WallSeconds = time.Since(start).Seconds()
	return res, ctx.Err()
}

// runFlows is one run's flows, total and completed, written by its
// worker and read by Run's goroutine for Progress.
type runFlows struct {
	total, done atomic.Int64
}

// progressOf sums the runs' flows.
func progressOf(flows []runFlows, ended int) Progress {
	p := Progress{RunsEnded: ended, Runs: len(flows)}
	var first int
	for i := range flows {
		if n := int(flows[i].total.Load()); n > 0 && first == 0 {
			first = n
		}
	}
	for i := range flows {
		n := int(flows[i].total.Load())
		if n == 0 {
			n = first
		}
		p.Flows += n
		p.FlowsDone += int(flows[i].done.Load())
	}
	return p
}

// runOne builds and simulates one run on its own copy of the scenario,
// keeping its flow counts in f.
func runOne(ctx context.Context, src *scenario.Scenario, runner func(context.Context, sim.Config) (*sim.Results, error), r *RunResult, f *runFlows) {
	defer func() {
		if p := recover(); p != nil {
			r.Error = fmt.Sprintf("the simulator panicked: %v", p)
			r.Results, r.Summary, r.Dir = nil, nil, ""
		}
	}()
	fail := func(err error) { r.Error = err.Error() }
	s, err := src.Clone()
	if err != nil {
		fail(err)
		return
	}
	if err := s.Set("scheme", r.Scheme); err != nil {
		fail(err)
		return
	}
	if err := s.Set("seed", strconv.FormatUint(r.Seed, 10)); err != nil {
		fail(err)
		return
	}
	cfg, err := s.Build()
	if err != nil {
		fail(err)
		return
	}
	r.Hosts, r.Flows, r.RateInterval = len(cfg.Topology.Hosts()), len(cfg.Flows), cfg.RateSampling.Interval
	f.total.Store(int64(len(cfg.Flows)))
	cfg.Progress = func(_ int64, done, _ int) { f.done.Store(int64(done)) }
	if runner == nil {
		runner = func(_ context.Context, cfg sim.Config) (*sim.Results, error) { return sim.Run(cfg) }
	}
	start := time.Now()
	out, err := runner(ctx, cfg)
	r.WallSeconds = time.Since(start).Seconds()
	if err != nil {
		fail(err)
		return
	}
	f.done.Store(int64(out.Completed))
	sum := report.Summarize(out, report.SummaryOptions{})
	r.Results, r.Summary, r.Dir = out, &sum, RunDir(r.Scheme, r.Seed)
	if len(out.Faults) > 0 {
		fail(fmt.Errorf("the run has %d fault(s): %s", len(out.Faults), out.Faults[0]))
	}
}

// RunDir is the name of a run's directory under the experiment's output
// directory.
func RunDir(scheme string, seed uint64) string { return fmt.Sprintf("%s-seed%d", scheme, seed) }

// runOrder sorts runs by scheme position in schemes, then seed.
func runOrder(schemes []string) func(a, b RunResult) int {
	return func(a, b RunResult) int {
		return cmp.Or(cmp.Compare(slices.Index(schemes, a.Scheme), slices.Index(schemes, b.Scheme)), cmp.Compare(a.Seed, b.Seed))
	}
}
