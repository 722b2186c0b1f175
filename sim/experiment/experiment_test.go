package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/report"
	"github.com/p4rcm/p4rcm/sim/scenario"
)

// tinyScenario is a 5-host star with flows of every size class and flow
// class, sampled for rates; a run takes milliseconds.
const tinyScenario = `name: tiny
description: five hosts on a star <script>alert(1)</script> & friends
topology: {kind: star, hosts: 5, host_rate: 100G, delay: 1us}
workload:
  kind: flows
  flows:
    - {src: 0, dst: 4, size: 10MB, class: background}
    - {src: 1, dst: 4, size: 2MB, start: 5us, class: background}
    - {src: 2, dst: 4, size: 50KB, start: 10us, class: hot}
    - {src: 3, dst: 4, size: 20KB, start: 12us, class: hot}
    - {src: 2, dst: 3, size: 200KB, start: 20us, class: victim}
    - {src: 0, dst: 1, size: 5KB, start: 30us, class: victim}
output:
  rate_samples: {interval: 20us}
`

func parse(t *testing.T, doc string) *scenario.Scenario {
	t.Helper()
	s, err := scenario.Parse([]byte(doc), "tiny.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// smallDefault is the default preset cut to 100 us of arrivals: a few
// dozen web-search flows on 54 hosts, different for every seed.
func smallDefault(t *testing.T) *scenario.Scenario {
	t.Helper()
	s, err := scenario.LoadPreset("default")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Set("workload.duration", "100us"); err != nil {
		t.Fatal(err)
	}
	return s
}

// run runs a study without sweep and returns its one point.
func run(t *testing.T, spec Spec) *Result {
	t.Helper()
	st, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Points) != 1 {
		t.Fatalf("%d points, want 1", len(st.Points))
	}
	return st.Points[0]
}

func TestCopiesBuildLikeTheOriginal(t *testing.T) {
	rich := `name: rich
seed: 7
stop: 3ms
topology: {kind: leafspine, leaves: 2, spines: 2, hosts_per_leaf: 3, oversubscription: 1.5, host_rate: 25Gbps, delay: 1500ns}
workloads:
  - {kind: poisson, cdf: datamining, load: 0.35, duration: 50us, hosts: [0, 1, 2, 3], priority: 2, class: bg}
  - {kind: incast, senders: [0, 1, 2], receiver: 5, sizes: [1KiB, 30KB, 1.5MB], skew: 2us, class: "007"}
scheme: lossy
dcqcn: {preset: paper, g: 1/16, initial_alpha: 0.5, clamp_target: false, byte_counter: 10MB, f: 5, rai: 40Mbps, min_rate: 100M, kmin: 5KiB, pmax: 0.01}
host: {mtu: 1024, ack_interval: 2, rto: 500us}
switch: {buffer: 9MiB, pfc_xoff: 100KB, pfc_beta_scale: false, lossless: [], headroom: 20KB, pause_quanta: 1000, ecn: {kmin: 5KB, kmax: 200KB, pmax: 0.01, ref_rate: 40G}}
output: {ns3_fct: true, queue_samples: {interval: 10us, max: 50, ports: [[6, 0]]}, rate_samples: {interval: 1ms, flows: [0, 1]}}
`
	type tc struct {
		name string
		s    *scenario.Scenario
	}
	var cases []tc
	for _, p := range scenario.Presets() {
		s, err := scenario.LoadPreset(p.Name)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, tc{"preset " + p.Name, s})
	}
	s := parse(t, rich)
	cases = append(cases, tc{"rich", s})
	o := smallDefault(t)
	for _, kv := range [][2]string{{"switch.buffer", "1.5MB"}, {"dcqcn.timer", "55us"}, {"topology.fabric_rate", "400G"}} {
		if err := o.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	cases = append(cases, tc{"overridden", o})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cp, err := c.s.Clone()
			if err != nil {
				t.Fatal(err)
			}
			want, err := c.s.Build()
			if err != nil {
				t.Fatal(err)
			}
			got, err := cp.Build()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Error("the copy builds a different configuration")
			}
		})
	}
}

func TestRunLeavesTheScenarioAlone(t *testing.T) {
	s := parse(t, tinyScenario)
	before, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	run(t, Spec{Scenario: s, Schemes: []string{"pfc", "lossy"}, Seeds: []uint64{4, 5}, Jobs: 2})
	after, err := s.Build()
	if err != nil || !reflect.DeepEqual(before, after) || s.Scheme != "" || s.Seed != 0 {
		t.Errorf("Run changed the caller's scenario (%v)", err)
	}
}

// readTree reads every regular file under dir, keyed by relative path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestParallelAndSequentialRunsAgree(t *testing.T) {
	tests := []struct {
		name string
		s    func(*testing.T) *scenario.Scenario
	}{
		{"star", func(t *testing.T) *scenario.Scenario { return parse(t, tinyScenario) }},
		{"default 100us", smallDefault},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var trees []map[string][]byte
			for _, jobs := range []int{1, 6} {
				r := run(t, Spec{Scenario: tt.s(t), Schemes: []string{"dcqcn", "pfc", "lossy", "rcm"}, Seeds: []uint64{1, 2}, Jobs: jobs})
				if err := r.Err(); err != nil {
					t.Fatal(err)
				}
				dir := t.TempDir()
				if _, err := WritePointDir(dir, r); err != nil {
					t.Fatal(err)
				}
				trees = append(trees, readTree(t, dir))
			}
			seq, par := trees[0], trees[1]
			var compared []string
			for name, data := range seq {
				if name == ComparisonCSVFile || filepath.Base(name) == report.FlowsFile {
					if !bytes.Equal(data, par[name]) {
						t.Errorf("%s differs between 1 job and 6", name)
					}
					compared = append(compared, name)
				}
			}
			if len(compared) != 9 {
				t.Errorf("compared %v, want comparison.csv and 8 flows.csv", compared)
			}
		})
	}
}

func TestSeedsChangeTheWorkload(t *testing.T) {
	r := run(t, Spec{Scenario: smallDefault(t), Schemes: []string{"dcqcn"}, Seeds: []uint64{1, 2}, Jobs: 2})
	a, b := r.Runs[0].Results.Flows, r.Runs[1].Results.Flows
	if len(a) == len(b) && reflect.DeepEqual(a, b) {
		t.Error("seeds 1 and 2 ran the same flows")
	}
}

func TestRunOrder(t *testing.T) {
	tests := []struct {
		name      string
		schemes   []string
		seeds     []uint64
		jobs      int
		wantOrder []string
		baseline  string
	}{
		{"seeds sorted", []string{"pfc", "dcqcn"}, []uint64{3, 1, 2}, 6,
			[]string{"pfc seed 1", "pfc seed 2", "pfc seed 3", "dcqcn seed 1", "dcqcn seed 2", "dcqcn seed 3"}, "dcqcn"},
		{"default seed", []string{"lossy", "pfc"}, nil, 0, []string{"lossy seed 1", "pfc seed 1"}, "lossy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			var last Progress
			r := run(t, Spec{Scenario: parse(t, tinyScenario), Schemes: tt.schemes, Seeds: tt.seeds, Jobs: tt.jobs,
				Progress: func(p Progress) {
					if p.RunsEnded > last.RunsEnded {
						calls++
					}
					if p.RunsEnded != calls || p.Runs != len(tt.wantOrder) || p.FlowsDone < last.FlowsDone || p.FlowsDone > p.Flows {
						t.Errorf("progress %+v at run end %d, after %+v", p, calls, last)
					}
					last = p
				}})
			if flows := r.Runs[0].Flows * len(r.Runs); last.Flows != flows || last.FlowsDone != flows {
				t.Errorf("last progress %+v; want all %d flows of the runs done", last, flows)
			}
			var got []string
			for _, run := range r.Runs {
				got = append(got, run.Name())
				if run.Dir != RunDir(run.Scheme, run.Seed, 0) {
					t.Errorf("%s: dir %q", run.Name(), run.Dir)
				}
			}
			if !slices.Equal(got, tt.wantOrder) || calls != len(tt.wantOrder) || r.Baseline != tt.baseline {
				t.Errorf("runs %v, %d progress calls, baseline %s; want %v, baseline %s", got, calls, r.Baseline, tt.wantOrder, tt.baseline)
			}
			var rowOrder []string
			for _, row := range r.SizeClasses {
				rowOrder = append(rowOrder, row.Class+" "+row.Scheme)
			}
			var want []string
			for _, c := range SizeClasses {
				for _, s := range tt.schemes {
					want = append(want, c.Name+" "+s)
				}
			}
			if !slices.Equal(rowOrder, want) {
				t.Errorf("rows %v, want %v", rowOrder, want)
			}
		})
	}
}

func TestFailedRunsAreReported(t *testing.T) {
	spec := Spec{Scenario: parse(t, tinyScenario), Schemes: []string{"dcqcn", "nosuch"}, Seeds: []uint64{1, 2}, Jobs: 4}
	if err := Check(spec); err != nil {
		t.Fatalf("Check fails on a scheme unknown to the simulator: %v", err)
	}
	r := run(t, spec)
	for _, run := range r.Runs {
		switch run.Scheme {
		case "dcqcn":
			if !run.OK() || run.Summary == nil || run.Summary.Completed != 6 {
				t.Errorf("%s: %q", run.Name(), run.Error)
			}
		case "nosuch":
			if run.OK() || !strings.Contains(run.Error, `unknown scheme "nosuch"`) || run.Dir != "" {
				t.Errorf("%s: ok %v, error %q, dir %q", run.Name(), run.OK(), run.Error, run.Dir)
			}
		}
	}
	err := r.Err()
	if err == nil || !strings.Contains(err.Error(), "2 of 4 runs failed; nosuch seed 1:") {
		t.Errorf("Err() = %v", err)
	}
	for _, row := range r.SizeClasses {
		if row.Scheme == "nosuch" && (row.Runs != 0 || row.Completed != 0 || row.Metric("mean_fct_us").Mean != nil || row.Metric("mean_fct_us").VsBaseline != nil) {
			t.Errorf("failed scheme has figures: %+v", row)
		}
	}
	dir := t.TempDir()
	if _, err := WritePointDir(dir, r); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"dcqcn-seed1/flows.csv", "dcqcn-seed2/summary.json", ComparisonCSVFile, HTMLFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "nosuch-seed1")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a directory for a run that did not run: %v", err)
	}
}

func TestCancelledRunsDoNotStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	st, err := Run(ctx, Spec{Scenario: parse(t, tinyScenario), Schemes: []string{"dcqcn"}, Seeds: []uint64{1, 2}})
	if !errors.Is(err, context.Canceled) || st == nil || len(st.Failed()) != 2 {
		t.Fatalf("err %v, result %+v", err, st)
	}
}

func TestSpecErrors(t *testing.T) {
	s := parse(t, tinyScenario)
	badCDF := smallDefault(t)
	if err := badCDF.Set("workload.cdf", "nosuch.cdf"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"no scenario", Spec{Schemes: []string{"dcqcn"}}, "no scenario"},
		{"no schemes", Spec{Scenario: s}, "no schemes"},
		{"twice", Spec{Scenario: s, Schemes: []string{"pfc", "pfc"}}, `"pfc" given twice`},
		{"path", Spec{Scenario: s, Schemes: []string{"../x"}}, `scheme "../x"`},
		{"empty", Spec{Scenario: s, Schemes: []string{""}}, `scheme ""`},
		{"seed 0", Spec{Scenario: s, Schemes: []string{"pfc"}, Seeds: []uint64{0}}, "seed 0"},
		{"seed twice", Spec{Scenario: s, Schemes: []string{"pfc"}, Seeds: []uint64{2, 1, 2}}, "seed 2 given twice"},
		{"baseline", Spec{Scenario: s, Schemes: []string{"pfc"}, Baseline: "dcqcn"}, `baseline "dcqcn"`},
		{"jobs", Spec{Scenario: s, Schemes: []string{"pfc"}, Jobs: -1}, "jobs"},
		{"scenario", Spec{Scenario: badCDF, Schemes: []string{"pfc", "nosuch"}}, `workload.cdf: unknown CDF "nosuch.cdf"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.spec)
			_, rerr := Run(context.Background(), tt.spec)
			if err == nil || !strings.Contains(err.Error(), tt.want) || rerr == nil || rerr.Error() != err.Error() {
				t.Errorf("Check: %v; Run: %v; want %q from both", err, rerr, tt.want)
			}
		})
	}
}

// flow is a completed flow of a hand-made run.
func flow(id int, size, fctNs int64, slowdown float64, class string) sim.FlowRecord {
	return sim.FlowRecord{ID: id, Size: size, Start: 1000, Finish: 1000 + fctNs*1000, FCT: fctNs * 1000,
		Slowdown: slowdown, Class: class, Delivered: size}
}

func handMade(runs ...RunResult) *Result {
	r := &Result{About: About{Scenario: "hand", Schemes: []string{"a", "dcqcn", "c"}, Seeds: []uint64{1, 2}, Baseline: "dcqcn"}, Runs: runs}
	for i := range r.Runs {
		r.Runs[i].Dir = RunDir(r.Runs[i].Scheme, r.Runs[i].Seed, 0)
	}
	r.Compare()
	return r
}

func results(flows ...sim.FlowRecord) *sim.Results {
	return &sim.Results{Flows: flows, End: 10_000_000_000}
}

func TestCompareAgainstTheBaseline(t *testing.T) {
	// Each run gives its own figures; a scheme's are their mean over its
	// runs, compared with the baseline's seed by seed. dcqcn: mice FCT
	// 0.1 us (seed 1) and 0.3 us (seed 2), mean 0.2; slowdown 2 and 4.
	// Its seed 2 also has an elephant of 1 us. a: mice 0.05 and 0.25 us,
	// each 0.05 us below dcqcn's of its seed (-25% of 0.2, a shift
	// the paired test finds at two seeds); slowdown 1.5 and 3, 0.5 and 1
	// below (-25%, but too uneven for two seeds to decide). c: no good
	// run.
	r := handMade(
		RunResult{Scheme: "c", Seed: 1, Error: "boom"},
		RunResult{Scheme: "dcqcn", Seed: 2, Results: results(flow(0, 1000, 300, 4, "x"), flow(1, 20_000_000, 1000, 1, "y"))},
		RunResult{Scheme: "a", Seed: 1, Results: results(flow(0, 999_999, 50, 1.5, "x"))},
		RunResult{Scheme: "dcqcn", Seed: 1, Results: results(flow(0, 500, 100, 2, "x"))},
		RunResult{Scheme: "a", Seed: 2, Results: results(flow(0, 1, 250, 3, "x"))},
	)
	get := func(rows []Row, class, scheme string) Row {
		i := slices.IndexFunc(rows, func(r Row) bool { return r.Class == class && r.Scheme == scheme })
		if i < 0 {
			t.Fatalf("no row %s %s", class, scheme)
		}
		return rows[i]
	}
	val := func(p *float64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	near := func(got, want any) bool {
		g, ok1 := got.(float64)
		w, ok2 := want.(float64)
		if ok1 && ok2 {
			return g-w < 1e-9 && w-g < 1e-9
		}
		return got == want
	}
	tests := []struct {
		rows                    []Row
		class, scheme           string
		runs, completed         int
		mean, slow              any
		fctPct, slowPct         any
		fctVerdict, slowVerdict string
	}{
		{r.SizeClasses, "mice", "a", 2, 2, 0.15, 2.25, -25.0, -25.0, "better", "no significant difference"},
		{r.SizeClasses, "mice", "dcqcn", 2, 2, 0.2, 3.0, nil, nil, "", ""},
		{r.SizeClasses, "mice", "c", 0, 0, nil, nil, nil, nil, "", ""},
		{r.SizeClasses, "elephants", "a", 2, 0, nil, nil, nil, nil, "", ""},
		{r.SizeClasses, "elephants", "dcqcn", 2, 1, 1.0, 1.0, nil, nil, "", ""},
		{r.SizeClasses, "medium", "dcqcn", 2, 0, nil, nil, nil, nil, "", ""},
		// all: dcqcn 0.1 and 0.65 us (mean 0.375), a 0.05 and 0.25: the
		// differences -0.05 and -0.4 average -0.225, -60% of 0.375. The
		// slowdowns, 2 and 2.5 against 1.5 and 3, average the same.
		{r.SizeClasses, "all", "a", 2, 2, 0.15, 2.25, -60.0, 0.0, "no significant difference", "no significant difference"},
		{r.FlowClasses, "x", "a", 2, 2, 0.15, 2.25, -25.0, -25.0, "better", "no significant difference"},
		{r.FlowClasses, "y", "dcqcn", 2, 1, 1.0, 1.0, nil, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.class+" "+tt.scheme, func(t *testing.T) {
			row := get(tt.rows, tt.class, tt.scheme)
			fct, slow := row.Metric("mean_fct_us"), row.Metric("mean_slowdown")
			if row.Runs != tt.runs || row.Completed != tt.completed || !near(val(fct.Mean), tt.mean) || !near(val(slow.Mean), tt.slow) {
				t.Errorf("runs %d completed %d mean %v slowdown %v; want %d %d %v %v", row.Runs, row.Completed, val(fct.Mean), val(slow.Mean),
					tt.runs, tt.completed, tt.mean, tt.slow)
			}
			var fc, sc any
			var fv, sv string
			if c := fct.VsBaseline; c != nil {
				fc, fv = val(c.Pct), c.Verdict
			}
			if c := slow.VsBaseline; c != nil {
				sc, sv = val(c.Pct), c.Verdict
			}
			if !near(fc, tt.fctPct) || !near(sc, tt.slowPct) || fv != tt.fctVerdict || sv != tt.slowVerdict {
				t.Errorf("changes %v (%s) %v (%s), want %v (%s) %v (%s)", fc, fv, sc, sv, tt.fctPct, tt.fctVerdict, tt.slowPct, tt.slowVerdict)
			}
		})
	}
	// Goodput: class x of dcqcn delivers 1000 B in 300 ns and 500 B in
	// 100 ns: 26.67 and 40 Gb/s, 33.33 on average over the two runs.
	g := get(r.FlowClasses, "x", "dcqcn").Metric("goodput_gbps")
	if g == nil || g.Mean == nil || *g.Mean < 33.33 || *g.Mean > 33.34 || len(g.Values) != 2 {
		t.Errorf("goodput %+v, want 33.33 over 2 runs", g)
	}
	if get(r.FlowClasses, "x", "c").Metric("goodput_gbps").Mean != nil {
		t.Error("goodput for a scheme without runs")
	}
	if get(r.SizeClasses, "mice", "a").Metric("goodput_gbps") != nil {
		t.Error("goodput for a size class")
	}

	var buf bytes.Buffer
	if err := WriteComparisonText(&buf, r); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{"FCT vs dcqcn", "slowdown vs dcqcn", "mice       a       2      0.150 ± ", "-25.0% [-25.0, -25.0] better",
		"-25.0% [", "] n.s.", "baseline", "goodput Gb/s", "33.333 ± ", "c seed 1", "FAILED: boom", "paired by seed"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "incomplete") || strings.Contains(text, "no interval") {
		t.Errorf("text speaks of incomplete flows or of no interval where there are none:\n%s", text)
	}
}

// A run with flows that never complete says what its flows column counts
// and where their throughput is, and leaves out a class with no flows.
func TestIncompleteFlowsExplained(t *testing.T) {
	greedy := sim.FlowRecord{ID: 1, Size: 1e12, Start: 1000, Delivered: 5e6}
	r := handMade(RunResult{Scheme: "dcqcn", Seed: 1, Results: results(flow(0, 1000, 300, 4, ""), greedy)})
	var buf bytes.Buffer
	if err := WriteComparisonText(&buf, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"incomplete", "flows counts the completed flows", "rates.csv and the throughput plot",
		"no flow of the scenario is in medium: left out"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
	// A class no scheme has a flow in is a row of dashes: left out.
	if strings.Contains(buf.String(), "\nmedium ") {
		t.Errorf("a row for the empty class:\n%s", buf.String())
	}
}

func TestBaselineDefaults(t *testing.T) {
	tests := []struct {
		schemes []string
		want    string
	}{
		{[]string{"pfc", "dcqcn", "lossy"}, "dcqcn"},
		{[]string{"pfc", "lossy"}, "pfc"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.schemes, ","), func(t *testing.T) {
			p, err := plan(Spec{Scenario: parse(t, tinyScenario), Schemes: tt.schemes})
			if err != nil || p.baseline != tt.want {
				t.Errorf("plan %+v, %v; want baseline %q", p, err, tt.want)
			}
		})
	}
}

func TestWriteDirOutputs(t *testing.T) {
	r := run(t, Spec{Scenario: parse(t, tinyScenario), Schemes: []string{"dcqcn", "pfc"}, Jobs: 2})
	dir := t.TempDir()
	paths, err := WritePointDir(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if last := paths[len(paths)-1]; last != filepath.Join(dir, HTMLFile) {
		t.Errorf("last file %s, want the HTML page", last)
	}
	files := readTree(t, dir)
	for name := range files {
		if strings.HasSuffix(name, ".tmp") {
			t.Errorf("temporary file left: %s", name)
		}
	}
	plots := []string{"slowdown-vs-size", "mice-fct-cdf", "throughput-dcqcn", "throughput-pfc"}
	for _, p := range plots {
		t.Run(p, func(t *testing.T) {
			png, svg := files[p+".png"], files[p+".svg"]
			if len(png) < 1000 || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
				t.Errorf("%s.png: %d bytes, not a PNG", p, len(png))
			}
			s := strings.TrimSpace(string(svg))
			if !strings.HasPrefix(s, "<?xml") && !strings.HasPrefix(s, "<svg") || !strings.Contains(s, "</svg>") {
				t.Errorf("%s.svg is not SVG: %.60q", p, s)
			}
		})
	}

	t.Run("html", func(t *testing.T) {
		page := string(files[HTMLFile])
		if n := strings.Count(page, "<html"); n != 1 {
			t.Errorf("%d <html> tags", n)
		}
		if strings.Contains(page, "http://") || strings.Contains(page, "https://") {
			t.Error("the page refers to the network")
		}
		if strings.Contains(page, "<script>") || !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt; &amp; friends") {
			t.Error("the description is not escaped")
		}
		if n := strings.Count(page, `<img src="data:image/png;base64,`); n != len(plots) || strings.Count(page, "<img") != n {
			t.Errorf("%d images as data URIs, want %d and no others", n, len(plots))
		}
		for _, want := range []string{`href="dcqcn-seed1/"`, `href="pfc-seed1/summary.txt"`, "<table>", "mice", "elephants",
			"background", "</html>"} {
			if !strings.Contains(page, want) {
				t.Errorf("page lacks %q", want)
			}
		}
	})

	t.Run("json", func(t *testing.T) {
		var got struct {
			Scenario string
			Seeds    []uint64
			Runs     []struct {
				Scheme      string
				WallSeconds float64 `json:"wall_seconds"`
				Summary     *report.Summary
				Flows       any
			}
			SizeClasses []Row `json:"size_classes"`
			FlowClasses []Row `json:"flow_classes"`
		}
		data := files[ComparisonJSONFile]
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		if got.Scenario != "tiny" || !slices.Equal(got.Seeds, []uint64{1}) || len(got.Runs) != 2 ||
			got.Runs[0].Summary == nil || got.Runs[0].Summary.Flows != 6 || len(got.SizeClasses) != 8 || len(got.FlowClasses) != 6 {
			t.Errorf("comparison.json: %s", data)
		}
		if bytes.Contains(data, []byte(`"Flows"`)) || bytes.Contains(data, []byte(`"ideal"`)) {
			t.Error("comparison.json holds raw flows")
		}
	})

	t.Run("csv", func(t *testing.T) {
		lines := strings.Split(strings.TrimSpace(string(files[ComparisonCSVFile])), "\n")
		// 8 size rows of 8 metrics, 6 flow-class rows of 9 (goodput too).
		if len(lines) != 1+8*8+6*9 || lines[0] != strings.Join(csvHeader, ",") || !strings.HasPrefix(lines[1], "size,mice,dcqcn,1,") ||
			!strings.HasPrefix(lines[1+8*8], "class,background,dcqcn,1,2,2,0,mean_fct_us,1,") ||
			!strings.Contains(lines[1+8*8+9+8], ",pfc,1,2,2,0,goodput_gbps,1,") || !strings.HasSuffix(lines[1+8*8+9+8], ",,,too few runs") {
			t.Errorf("comparison.csv:\n%s", strings.Join(lines, "\n"))
		}
	})
}

func TestThroughputPerFlowWithoutClasses(t *testing.T) {
	doc := strings.ReplaceAll(tinyScenario, ", class: background", "")
	doc = strings.ReplaceAll(strings.ReplaceAll(doc, ", class: hot", ""), ", class: victim", "")
	r := run(t, Spec{Scenario: parse(t, doc), Schemes: []string{"pfc"}})
	if len(r.FlowClasses) != 0 {
		t.Errorf("flow classes without labels: %+v", r.FlowClasses)
	}
	figs, err := Figures(r)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(figs, func(f Figure) bool { return f.Name == "throughput-pfc" })
	if i < 0 || !strings.Contains(figs[i].Title, "per flow,") {
		t.Fatalf("no per-flow throughput plot in %d figures", len(figs))
	}
	if !bytes.Contains(figs[i].SVG, []byte("flow 5")) || bytes.Contains(figs[i].SVG, []byte("flow 6")) {
		t.Error("the legend does not name flows 0-5")
	}
}

func TestWriteDirRefusesBadNames(t *testing.T) {
	r := handMade(RunResult{Scheme: "a", Seed: 1, Results: results(flow(0, 1000, 300, 4, ""))})
	r.Schemes = []string{"../a"}
	if _, err := WritePointDir(t.TempDir(), r); err == nil {
		t.Error("wrote a scheme named ../a")
	}
}

// TestLDCPBesideDCQCN: ldcp is a scheme like the others; its fast start
// costs drops and go-back-N, which the runs table shows beside DCQCN's
// none, while a lossless comparison keeps the short table.
func TestLDCPBesideDCQCN(t *testing.T) {
	r := run(t, Spec{Scenario: parse(t, tinyScenario), Schemes: []string{"dcqcn", "ldcp", "ldcp-rate"}, Jobs: 1})
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteComparisonText(&buf, r); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	ldcp := r.Runs[1].Summary
	if ldcp.Completed != ldcp.Flows || ldcp.Drops.Total == 0 || ldcp.Run.Retransmits == 0 {
		t.Fatalf("ldcp run: %d/%d completed, %d drops, %d retransmissions; want all, and some of each (fast start into a busy port)",
			ldcp.Completed, ldcp.Flows, ldcp.Drops.Total, ldcp.Run.Retransmits)
	}
	for _, want := range []string{"drops  retransmits", "dcqcn seed 1      5      6      6          0      0 by 0 flows",
		"ldcp seed 1", "ldcp-rate seed 1", "mice       ldcp "} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	buf.Reset()
	if err := WriteHTML(&buf, r, nil); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("<td>%d</td><td>%d by %d flows</td>", ldcp.Drops.Total, ldcp.Run.Retransmits, ldcp.Run.RetransmitFlows); !strings.Contains(buf.String(), want) {
		t.Errorf("report.html lacks the ldcp run's %q", want)
	}
	r = run(t, Spec{Scenario: parse(t, tinyScenario), Schemes: []string{"dcqcn"}, Jobs: 1})
	buf.Reset()
	if err := WriteComparisonText(&buf, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "retransmits") {
		t.Errorf("a lossless comparison shows drops and retransmissions:\n%s", buf.String())
	}
}
