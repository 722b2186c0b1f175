// Package experiment runs parameter studies of congestion-control
// schemes: one scenario, optionally swept over the cartesian product of
// some of its values (the points), every scheme run with every seed (and,
// on emulated runs, repeated) at every point, in parallel. At each point
// it sets the schemes side by side by flow completion time per flow-size
// class (the RCM paper's mice, medium and elephant flows) and by goodput
// per flow class, against a baseline scheme, with confidence intervals
// over the runs and paired significance tests (package stats); across
// points it draws each metric against the swept value. It writes CSV,
// JSON, plots (PNG and SVG) and self-contained HTML pages beside each
// run's own report (sim/report).
//
// Every run has a stable index, so that a study can be cut into shards
// run on different machines (Spec.Shard, WriteShard) and merged
// (Merge) into exactly what one machine would have written.
//
// Scheme names are opaque: each is handed to the scenario as
// Set("scheme", name), and a scheme the simulator does not know fails its
// runs with the scenario's message while the others complete.
//
// The same Spec gives the same study whatever the parallelism or the
// sharding: every run works on its own copy of the scenario and its own
// simulator, and results are kept in index order, not in completion
// order. Only wall times differ from one execution to the next.
package experiment

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	"github.com/p4rcm/p4rcm/stats"
)

// DefaultBaseline is the scheme the others are compared with when it is
// among the schemes and Spec.Baseline is empty: DCQCN with PFC is what
// lossless fabrics run today.
const DefaultBaseline = "dcqcn"

// Spec says what to run.
type Spec struct {
	// Scenario is the scenario, loaded and overridden by the caller. Run
	// does not modify it: each run works on its own copy, with the swept
	// values, the scheme and the seed set as if by Set.
	Scenario *scenario.Scenario
	// Vary are the swept values; their cartesian product, the first path
	// varying slowest, gives the study's points. None: one point, the
	// scenario as it is.
	Vary []Vary
	// Schemes are the schemes to compare, in the order to report them:
	// the simulator's schemes and the names of Variants. Names must be
	// unique and usable in a file name (letters, digits, '.', '_', '-'),
	// since each run gets a directory "<scheme>-seed<N>".
	Schemes []string
	// Variants are schemes run with scenario values of their own, each
	// compared under its name: an ablation ("rcm without SAR") or a
	// tuning beside the schemes. Each must be named in Schemes.
	Variants []Variant
	// Seeds are the seeds to run each scheme with; empty means the
	// scenario's own seed. They are reported in ascending order.
	Seeds []uint64
	// Repeat runs each (point, scheme, seed) this many times, 0 meaning
	// once. The simulator gives the same results every time, so repeats
	// are for emulated runs, where the machine is the noise.
	Repeat int
	// Baseline is the scheme the changes are relative to: empty means
	// DefaultBaseline if it is among Schemes, else the first scheme.
	Baseline string
	// Level is the confidence level of intervals and tests, 0 meaning
	// stats.DefaultLevel (95%).
	Level float64
	// Jobs is how many runs go at once; 0 means runtime.NumCPU().
	Jobs int
	// Threads is how many threads each simulated run gets (sim.Config's
	// Threads); 0 shares the cores among the runs that go at once: each
	// gets runtime.NumCPU() / min(Jobs, runs), if its network is large
	// enough to gain from more than one (sim.DefaultThreads), free to take
	// them on one where that is faster (sim.Config.Adapt). The results do
	// not depend on it.
	Threads int
	// Shard, if Count is set, runs only the shard's share of the runs
	// (see Shard); the Study then holds those runs and no comparison, to
	// be written with WriteShard and merged with the others.
	Shard Shard
	// Version is the program's version, recorded in shards: shards of
	// different versions are not merged.
	Version string
	// Runner runs one configuration (sim.Run if nil): p4ctl emulate
	// compare gives the emulation's, so that emulated runs are compared
	// and reported as simulated ones are; Emulated says so, for the
	// report (on real packets the machine, not the seed, is the noise,
	// and repetitions, not seeds, give intervals).
	Runner   func(ctx context.Context, cfg sim.Config) (*sim.Results, error)
	Emulated bool
	// Progress, if set, is called after each run ends and, while runs are
	// under way, every ProgressInterval. Calls come one at a time, from
	// the goroutine that called Run.
	Progress func(Progress)
}

// Variant is a scheme run with some scenario values of its own, compared
// under its own name.
type Variant struct {
	Name   string       `json:"name"`
	Scheme string       `json:"scheme"`
	Set    []Assignment `json:"set"`
}

// ParseVariant reads "NAME=SCHEME,PATH=VALUE,...", for instance
// "no-sar=rcm,rcm.sar=false".
func ParseVariant(s string) (Variant, error) {
	name, rest, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	parts := strings.Split(rest, ",")
	v := Variant{Name: name, Scheme: strings.TrimSpace(parts[0])}
	if !ok || name == "" || v.Scheme == "" || strings.Contains(v.Scheme, "=") {
		return Variant{}, fmt.Errorf("%q: want NAME=SCHEME,PATH=VALUE,..., e.g. no-sar=rcm,rcm.sar=false", s)
	}
	if err := CheckScheme(name); err != nil {
		return Variant{}, fmt.Errorf("%q: %w", s, err)
	}
	for _, kv := range parts[1:] {
		path, value, ok := strings.Cut(kv, "=")
		path = strings.TrimSpace(path)
		if !ok || path == "" {
			return Variant{}, fmt.Errorf("%q: %q is not PATH=VALUE", s, strings.TrimSpace(kv))
		}
		v.Set = append(v.Set, Assignment{Path: path, Value: strings.TrimSpace(value)})
	}
	return v, nil
}

// Shard is the part Index (0 <= Index < Count) of a study cut into Count
// parts: the runs whose indexes fall in the Index-th of Count contiguous,
// near-equal blocks. Consecutive indexes are the schemes and seeds of one
// point, so every part gets a fair mix of fast and slow schemes.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// String is "i/N", the form --shard takes.
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// ParseShard reads "i/N" with 0 <= i < N.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	switch {
	case !ok || err1 != nil || err2 != nil:
		return Shard{}, fmt.Errorf("%q: want INDEX/COUNT, e.g. 0/4 for the first of four shards", s)
	case n < 1:
		return Shard{}, fmt.Errorf("%q: the count of shards must be at least 1", s)
	case i < 0 || i >= n:
		return Shard{}, fmt.Errorf("%q: the index must be from 0 to %d", s, n-1)
	}
	return Shard{Index: i, Count: n}, nil
}

// runs are the indexes [lo, hi) of the shard in a study of total runs.
func (s Shard) runs(total int) (lo, hi int) {
	if s.Count == 0 {
		return 0, total
	}
	return s.Index * total / s.Count, (s.Index + 1) * total / s.Count
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

// RunResult is one run of the study.
type RunResult struct {
	// Index is the run's place in the study, stable for a given study:
	// points in order, then seeds, repetitions and schemes, the scheme
	// varying fastest (so that the schemes of one seed run side by side).
	Index  int    `json:"index"`
	Scheme string `json:"scheme"`
	Seed   uint64 `json:"seed"`
	// Rep is the repetition, from 1, when the study repeats runs; 0
	// otherwise.
	Rep int `json:"rep,omitempty"`
	// Dir is the run's output directory under its point's, empty when the
	// run produced no results to write.
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

// Name is how messages refer to the run: "dcqcn seed 1", "rcm seed 2 rep 3".
func (r *RunResult) Name() string {
	if r.Rep > 0 {
		return fmt.Sprintf("%s seed %d rep %d", r.Scheme, r.Seed, r.Rep)
	}
	return fmt.Sprintf("%s seed %d", r.Scheme, r.Seed)
}

// pairKey is what pairs a scheme's run with the baseline's: the same seed
// (the same flows) and, when runs are repeated, the same repetition (run
// side by side in time).
type pairKey struct {
	seed uint64
	rep  int
}

// About says what a study is: what decides its results (the scenario,
// the sweep, the schemes and variants, the seeds and repetitions, the
// baseline, the confidence level) and the program that ran it.
type About struct {
	Scenario    string    `json:"scenario"`
	Description string    `json:"description"`
	Vary        []Vary    `json:"vary"`
	Schemes     []string  `json:"schemes"`
	Variants    []Variant `json:"variants,omitempty"`
	Seeds       []uint64  `json:"seeds"`
	Repeat      int       `json:"repeat,omitempty"`
	// Emulated says the runs were on real packets (Spec.Emulated).
	Emulated bool   `json:"emulated,omitempty"`
	Baseline string `json:"baseline"`
	// Level is the confidence level of the intervals and tests.
	Level float64 `json:"confidence"`
	// ID identifies the study: a hash of the scenario (with every
	// override), the sweep, the schemes and variants, the seeds, the
	// repetitions, the baseline and the level. Shards of one study share
	// it.
	ID      string `json:"id"`
	Version string `json:"version,omitempty"`
}

// Result is the comparison at one point of a study: today's experiment
// when the study sweeps nothing.
type Result struct {
	About
	// Point are the swept values of this point, none without a sweep.
	Point []Assignment `json:"point,omitempty"`
	// Runs are in (scheme as in Schemes, seed ascending, repetition)
	// order.
	Runs []RunResult `json:"runs"`
	// SizeClasses compares the schemes per flow-size class (SizeClasses
	// order, then scheme order); FlowClasses per flow class label (by
	// name, then scheme order), empty when no flow has a class.
	SizeClasses []Row `json:"size_classes"`
	FlowClasses []Row `json:"flow_classes"`
	// WallSeconds is the whole experiment's time.
	WallSeconds float64 `json:"wall_seconds"`
	// ReportSeconds is the part of WallSeconds spent comparing, plotting
	// and writing, not running (see Study.AddReportTime).
	ReportSeconds float64 `json:"-"`
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
	where := ""
	if len(r.Point) > 0 {
		where = " at " + PointName(r.Point)
	}
	return fmt.Errorf("%d of %d runs failed%s; %s: %s", len(failed), len(r.Runs), where, failed[0].Name(), failed[0].Error)
}

// Study is a whole parameter study: the comparison at each point.
type Study struct {
	About
	// Points are the points in order; each holds its runs.
	Points []*Result `json:"-"`
	// Shard is set for a part of the study run by Spec.Shard.
	Shard *Shard `json:"shard,omitempty"`
	// WallSeconds is the time the study took.
	WallSeconds float64 `json:"wall_seconds"`
	// ReportSeconds is the part of WallSeconds spent comparing, plotting
	// and writing, not running.
	ReportSeconds float64 `json:"-"`
}

// AddReportTime counts d, spent comparing, plotting or writing the study,
// in its wall time and its report time (and its points').
func (s *Study) AddReportTime(d time.Duration) {
	s.WallSeconds += d.Seconds()
	s.ReportSeconds += d.Seconds()
	for _, p := range s.Points {
		p.WallSeconds, p.ReportSeconds = s.WallSeconds, s.ReportSeconds
	}
}

// Swept tells whether the study sweeps values, and so has a directory
// per point.
func (s *Study) Swept() bool { return len(s.Vary) > 0 }

// Runs is the number of runs of the whole study.
func (s *Study) Runs() int {
	return len(points(s.Vary)) * len(s.Schemes) * len(s.Seeds) * max(1, s.Repeat)
}

// Failed lists the runs that failed, by point in order.
func (s *Study) Failed() []*RunResult {
	var out []*RunResult
	for _, p := range s.Points {
		out = append(out, p.Failed()...)
	}
	return out
}

// Err summarises the failed runs of all points as one error, nil if none
// failed.
func (s *Study) Err() error {
	var errs []error
	n := 0
	for _, p := range s.Points {
		n += len(p.Runs)
		if err := p.Err(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) <= 1 || len(s.Points) == 1 {
		return errors.Join(errs...)
	}
	return fmt.Errorf("%d of %d runs failed; first %w", len(s.Failed()), n, errs[0])
}

// Compare (re)computes every point's comparison (Result.Compare).
func (s *Study) Compare() {
	for _, p := range s.Points {
		p.Compare()
	}
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

// maxRuns bounds a study, which a few long sweeps would otherwise make
// too large to list, let alone run.
const maxRuns = 1_000_000

// runPlan is a checked Spec with its defaults resolved.
type runPlan struct {
	vary     []Vary
	points   [][]Assignment
	schemes  []string
	variants map[string]Variant
	seeds    []uint64 // ascending
	repeat   int      // at least 1
	baseline string
	level    float64
	jobs     int
	threads  int
	shard    Shard
	emulated bool
	src      *scenario.Scenario // the caller's; each run works on a Clone
}

// plan checks spec and resolves its defaults, without building the
// scenario.
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
	p := &runPlan{vary: slices.Clone(spec.Vary), schemes: slices.Clone(spec.Schemes), seeds: slices.Clone(spec.Seeds),
		repeat: max(1, spec.Repeat), baseline: spec.Baseline, level: spec.Level, jobs: spec.Jobs, threads: spec.Threads, shard: spec.Shard,
		emulated: spec.Emulated,
		src:      spec.Scenario, variants: map[string]Variant{}}
	for _, v := range spec.Variants {
		if _, ok := p.variants[v.Name]; ok {
			return nil, fmt.Errorf("experiment: variant %q given twice", v.Name)
		}
		if !slices.Contains(p.schemes, v.Name) {
			return nil, fmt.Errorf("experiment: variant %q is not among the schemes %s", v.Name, strings.Join(p.schemes, ", "))
		}
		for _, a := range v.Set {
			switch {
			case a.Path == "scheme" || a.Path == "seed":
				return nil, fmt.Errorf("experiment: variant %s sets %s; a variant's scheme is its own (%s) and runs every seed", v.Name, a.Path, v.Scheme)
			case slices.ContainsFunc(spec.Vary, func(w Vary) bool { return w.Path == a.Path }):
				return nil, fmt.Errorf("experiment: variant %s sets %s, which --vary sweeps; drop one", v.Name, a.Path)
			}
		}
		p.variants[v.Name] = v
	}
	for i, v := range p.vary {
		if len(v.Values) == 0 {
			return nil, fmt.Errorf("experiment: --vary %s: no values", v.Path)
		}
		if slices.ContainsFunc(p.vary[:i], func(w Vary) bool { return w.Path == v.Path }) {
			return nil, fmt.Errorf("experiment: --vary %s given twice; list its values in one: %s=a,b,c", v.Path, v.Path)
		}
		if by := spec.Scenario.SetBy(v.Path); by != "" {
			return nil, fmt.Errorf("experiment: %s and --vary %s both set %s; drop one", by, v.Path, v.Path)
		}
	}
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
	if p.level == 0 {
		p.level = stats.DefaultLevel
	}
	if !(p.level > 0 && p.level < 1) {
		return nil, fmt.Errorf("experiment: confidence level %v: want a fraction between 0 and 1, such as 0.95", p.level)
	}
	if spec.Repeat < 0 {
		return nil, fmt.Errorf("experiment: repetitions must not be negative, got %d", spec.Repeat)
	}
	if p.jobs < 0 {
		return nil, fmt.Errorf("experiment: jobs must not be negative, got %d", p.jobs)
	}
	if p.jobs == 0 {
		p.jobs = runtime.NumCPU()
	}
	if p.threads < 0 {
		return nil, fmt.Errorf("experiment: threads must not be negative, got %d", p.threads)
	}
	// The product's size, checked before it is made.
	total := len(p.schemes) * len(p.seeds) * p.repeat
	for _, v := range p.vary {
		if total > maxRuns/len(v.Values) {
			return nil, fmt.Errorf("experiment: the study has over %d runs; sweep fewer values", maxRuns)
		}
		total *= len(v.Values)
	}
	if s := p.shard; s.Count > 0 {
		if s.Index < 0 || s.Index >= s.Count {
			return nil, fmt.Errorf("experiment: shard %s: the index must be from 0 to %d", s, s.Count-1)
		}
		if s.Count > total {
			return nil, fmt.Errorf("experiment: shard %s: the study has %d runs, so at most %d shards", s, total, total)
		}
	}
	p.points = points(p.vary)
	return p, nil
}

// total is the number of runs of the whole study.
func (p *runPlan) total() int { return len(p.points) * len(p.seeds) * p.repeat * len(p.schemes) }

// run is the run of index i: its point, seed, repetition (0 without
// repeats) and scheme.
func (p *runPlan) run(i int) (point int, r RunResult) {
	ns := len(p.schemes)
	r.Index = i
	r.Scheme = p.schemes[i%ns]
	i /= ns
	if p.repeat > 1 {
		r.Rep = i%p.repeat + 1
	}
	i /= p.repeat
	r.Seed = p.seeds[i%len(p.seeds)]
	return i / len(p.seeds), r
}

// pointScenario is a copy of the caller's scenario with point i's values
// set, each as if by --vary.
func (p *runPlan) pointScenario(i int) (*scenario.Scenario, error) {
	s, err := p.src.Clone()
	if err != nil {
		return nil, err
	}
	for _, a := range p.points[i] {
		if err := s.SetFrom("--vary "+a.Path+"="+a.Value, a.Path, a.Value); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// id is the study's identity (Study.ID): a hash of what decides its
// results, the scenario as YAML with every override applied.
func (p *runPlan) id() (string, error) {
	yaml, err := p.src.Canonical()
	if err != nil {
		return "", err
	}
	data, err := json.Marshal(struct {
		Scenario string    `json:"scenario"`
		Vary     []Vary    `json:"vary"`
		Schemes  []string  `json:"schemes"`
		Variants []Variant `json:"variants"`
		Seeds    []uint64  `json:"seeds"`
		Repeat   int       `json:"repeat"`
		Baseline string    `json:"baseline"`
		Level    float64   `json:"level"`
	}{string(yaml), p.vary, p.schemes, p.variantList(), p.seeds, p.repeat, p.baseline, p.level})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16]), nil
}

// variantList is the variants in the order of the schemes.
func (p *runPlan) variantList() []Variant {
	var out []Variant
	for _, s := range p.schemes {
		if v, ok := p.variants[s]; ok {
			out = append(out, v)
		}
	}
	return out
}

// runScenario is the scenario of one run: the point's, under a scheme or
// a variant, with a seed.
func (p *runPlan) runScenario(point int, scheme string, seed uint64) (*scenario.Scenario, error) {
	s, err := p.pointScenario(point)
	if err != nil {
		return nil, err
	}
	v, isVariant := p.variants[scheme]
	if isVariant {
		scheme = v.Scheme
	}
	if err := s.Set("scheme", scheme); err != nil {
		return nil, err
	}
	for _, a := range v.Set {
		if err := s.SetFrom(fmt.Sprintf("--variant %s: %s=%s", v.Name, a.Path, a.Value), a.Path, a.Value); err != nil {
			return nil, err
		}
	}
	if err := s.Set("seed", strconv.FormatUint(seed, 10)); err != nil {
		return nil, err
	}
	return s, nil
}

// newStudy is the study of p, with every point's Result and no runs.
func (p *runPlan) newStudy(version string) (*Study, error) {
	id, err := p.id()
	if err != nil {
		return nil, err
	}
	repeat := p.repeat
	if repeat == 1 {
		repeat = 0
	}
	st, err := studyOf(About{ID: id, Version: version, Scenario: p.src.Name, Description: p.src.Description,
		Vary: p.vary, Schemes: p.schemes, Variants: p.variantList(), Seeds: p.seeds, Repeat: repeat, Baseline: p.baseline,
		Level: p.level, Emulated: p.emulated})
	if err != nil {
		return nil, err
	}
	if p.shard.Count > 0 {
		sh := p.shard
		st.Shard = &sh
	}
	return st, nil
}

// Check reports what would stop Run before any simulation: a spec it
// cannot run, or a point whose scenario does not build (a swept value the
// scenario refuses, an unknown workload CDF), which would fail every run
// of it the same way. It builds each point once with
// scenario.DefaultScheme, which every simulator knows, and the first
// seed, so that a scheme the simulator does not know still fails only its
// own runs.
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
	for i := range p.points {
		s, err := p.pointScenario(i)
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
			return nil, pointErr(p.points[i], err)
		}
	}
	// A variant's own values are checked once, at the first point.
	for _, v := range p.variantList() {
		s, err := p.runScenario(0, v.Name, p.seeds[0])
		if err == nil {
			_, err = s.Build()
		}
		if err != nil {
			return nil, pointErr(p.points[0], fmt.Errorf("variant %s: %w", v.Name, err))
		}
	}
	return p, nil
}

// pointErr names the point an error is about, if the study sweeps.
func pointErr(pt []Assignment, err error) error {
	if len(pt) == 0 {
		return err
	}
	return fmt.Errorf("point %s: %w", PointName(pt), err)
}

// Config is one point's scenario built under one scheme.
type Config struct {
	Point  []Assignment
	Scheme string
	Config sim.Config
}

// Configs builds every point under every scheme with the first seed, so
// that a caller that knows its schemes can check their own parameters
// (rcm:, say) and size the largest run before anything runs. An error
// names the point and the scheme.
func Configs(spec Spec) ([]Config, error) {
	p, err := check(spec)
	if err != nil {
		return nil, err
	}
	var out []Config
	for i, pt := range p.points {
		for _, sc := range p.schemes {
			s, err := p.runScenario(i, sc, p.seeds[0])
			var cfg sim.Config
			if err == nil {
				cfg, err = s.Build()
			}
			if err != nil {
				return nil, pointErr(pt, fmt.Errorf("%s: %w", sc, err))
			}
			out = append(out, Config{Point: pt, Scheme: sc, Config: cfg})
		}
	}
	return out, nil
}

// PlannedRun is a run of the study as --list-runs shows it.
type PlannedRun struct {
	Index  int          `json:"index"`
	Point  []Assignment `json:"point,omitempty"`
	Scheme string       `json:"scheme"`
	Seed   uint64       `json:"seed"`
	Rep    int          `json:"rep,omitempty"`
	// Shard is the shard the run falls in, when the spec cuts the study.
	Shard *int `json:"shard,omitempty"`
}

// Plan lists the study's runs in index order, those of spec.Shard only
// when it is set, and the study's ID; nothing is built or run.
func Plan(spec Spec) ([]PlannedRun, string, error) {
	p, err := plan(spec)
	if err != nil {
		return nil, "", err
	}
	id, err := p.id()
	if err != nil {
		return nil, "", err
	}
	lo, hi := p.shard.runs(p.total())
	var out []PlannedRun
	for i := lo; i < hi; i++ {
		pt, r := p.run(i)
		out = append(out, PlannedRun{Index: i, Point: p.points[pt], Scheme: r.Scheme, Seed: r.Seed, Rep: r.Rep})
	}
	return out, id, nil
}

// Run runs the study's runs (those of spec.Shard, when set), at most
// spec.Jobs at a time, and compares the schemes at each point (not for a
// shard, whose comparison comes with Merge). A run that fails (it cannot
// be built, the simulator returns an error or panics, or the run has
// faults) is recorded with its error in its point's Result and left out
// of the comparison; the other runs still complete, and Study.Err reports
// the failures. The error Run returns is Check's: for a spec it cannot
// run at all.
//
// If ctx is cancelled, runs not yet started fail with ctx's error and Run
// returns the partial Study with that error; a simulation under way runs
// to its end, since the simulator cannot be interrupted.
func Run(ctx context.Context, spec Spec) (*Study, error) {
	start := time.Now()
	p, err := check(spec)
	if err != nil {
		return nil, err
	}
	st, err := p.newStudy(spec.Version)
	if err != nil {
		return nil, err
	}
	lo, hi := p.shard.runs(p.total())
	type job struct {
		point int
		run   RunResult
	}
	jobs := make([]job, 0, hi-lo)
	for i := lo; i < hi; i++ {
		pt, r := p.run(i)
		jobs = append(jobs, job{pt, r})
	}
	total := len(jobs)
	workers := min(p.jobs, total)
	cores := max(1, runtime.NumCPU()/max(workers, 1)) // each run's share

	// Workers take job indexes and fill in their own job and flows
	// element; nothing else is shared between them.
	flows := make([]runFlows, total)
	next := make(chan int)
	done := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				j := &jobs[i]
				if err := ctx.Err(); err != nil {
					j.run.Error = err.Error()
				} else {
					runOne(ctx, p, j.point, cores, spec.Runner, &j.run, &flows[i])
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
	for _, j := range jobs {
		st.Points[j.point].Runs = append(st.Points[j.point].Runs, j.run)
	}
	for _, pt := range st.Points {
		slices.SortFunc(pt.Runs, runOrder(pt.Schemes))
	}
	st.WallSeconds = time.Since(start).Seconds()
	if st.Shard == nil {
		compare := time.Now()
		st.Compare()
		st.AddReportTime(time.Since(compare))
	} else {
		st.AddReportTime(0)
	}
	return st, ctx.Err()
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

// runOne builds and simulates one run on its own copy of the scenario at
// its point, keeping its flow counts in f.
func runOne(ctx context.Context, p *runPlan, point, cores int, runner func(context.Context, sim.Config) (*sim.Results, error), r *RunResult, f *runFlows) {
	defer func() {
		if p := recover(); p != nil {
			r.Error = fmt.Sprintf("the simulator panicked: %v", p)
			r.Results, r.Summary, r.Dir = nil, nil, ""
		}
	}()
	fail := func(err error) { r.Error = err.Error() }
	s, err := p.runScenario(point, r.Scheme, r.Seed)
	if err != nil {
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
	cfg.Threads = p.threads
	if cfg.Threads == 0 {
		cfg.Threads = sim.DefaultThreads(cfg, cores)
		cfg.Adapt = cfg.Threads > 1
	}
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
	r.setResults(out)
}

// setResults keeps a run's results, its summary and its directory, and
// fails it if the results have faults.
func (r *RunResult) setResults(out *sim.Results) {
	sum := report.Summarize(out, report.SummaryOptions{})
	r.Results, r.Summary, r.Dir = out, &sum, RunDir(r.Scheme, r.Seed, r.Rep)
	if len(out.Faults) > 0 && r.Error == "" {
		r.Error = fmt.Sprintf("the run has %d fault(s): %s", len(out.Faults), out.Faults[0])
	}
}

// RunDir is the name of a run's directory under its point's output
// directory: "dcqcn-seed1", or "dcqcn-seed1-rep2" when runs repeat.
func RunDir(scheme string, seed uint64, rep int) string {
	if rep > 0 {
		return fmt.Sprintf("%s-seed%d-rep%d", scheme, seed, rep)
	}
	return fmt.Sprintf("%s-seed%d", scheme, seed)
}

// runOrder sorts runs by scheme position in schemes, then seed, then
// repetition.
func runOrder(schemes []string) func(a, b RunResult) int {
	return func(a, b RunResult) int {
		return cmp.Or(cmp.Compare(slices.Index(schemes, a.Scheme), slices.Index(schemes, b.Scheme)),
			cmp.Compare(a.Seed, b.Seed), cmp.Compare(a.Rep, b.Rep))
	}
}
