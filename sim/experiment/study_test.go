package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/stats"
)

func TestParseVary(t *testing.T) {
	good := []struct {
		in   string
		path string
		want []string
	}{
		{"workload.load=0.3,0.6", "workload.load", []string{"0.3", "0.6"}},
		{"switch.buffer = 2MB, 4MB", "switch.buffer", []string{"2MB", "4MB"}},
		{"workload.load=0.3:0.9:0.2", "workload.load", []string{"0.3", "0.5", "0.7", "0.9"}},
		{"workload.load=0.1:0.35:0.1", "workload.load", []string{"0.1", "0.2", "0.3"}},
		{"topology.k=4:8:2", "topology.k", []string{"4", "6", "8"}},
		{"x.y=-1:1:0.5", "x.y", []string{"-1", "-0.5", "0", "0.5", "1"}},
		{"x.y=0.7:0.7:0.1", "x.y", []string{"0.7"}},
		{"dcqcn.timer=55us", "dcqcn.timer", []string{"55us"}},
	}
	for _, tt := range good {
		v, err := ParseVary(tt.in)
		if err != nil || v.Path != tt.path || !slices.Equal(v.Values, tt.want) {
			t.Errorf("%q: %+v, %v; want %s = %v", tt.in, v, err, tt.path, tt.want)
		}
	}
	bad := []struct{ in, want string }{
		{"workload.load", "want PATH=V1,V2"},
		{"=0.3", "want PATH=V1,V2"},
		{"workload.load=", "empty value"},
		{"workload.load=0.3,,0.6", "empty value"},
		{"workload.load=0.3,0.3", "0.3 given twice"},
		{"workload.load=0.3:0.9:0", "step must be greater than zero"},
		{"workload.load=0.9:0.3:0.2", "end is below the start"},
		{"switch.buffer=1MB:4MB:1MB", `"1MB" is not a plain number`},
		{"workload.load=0:1:0.0001", "at most 1000"},
		{"scheme=dcqcn,rcm", "--schemes"},
		{"seed=1,2", "--seeds"},
	}
	for _, tt := range bad {
		if _, err := ParseVary(tt.in); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want an error with %q", tt.in, err, tt.want)
		}
	}
}

// The runs of a study are numbered points first, then seeds and schemes,
// the scheme fastest; shards cut the numbers into contiguous blocks that
// together hold every run once.
func TestRunIndexesAndShards(t *testing.T) {
	spec := Spec{Scenario: parse(t, tinyScenario), Schemes: []string{"dcqcn", "pfc"}, Seeds: []uint64{2, 1},
		Vary: []Vary{{"topology.delay", []string{"1us", "2us"}}, {"host.mtu", []string{"1000", "1500", "4000"}}}}
	runs, id, err := Plan(spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2*3*2*2 || len(id) != 32 {
		t.Fatalf("%d runs, id %q", len(runs), id)
	}
	for i, r := range runs {
		wantScheme := spec.Schemes[i%2]
		wantSeed := uint64(i/2%2 + 1)
		pt := i / 4
		want := []Assignment{{"topology.delay", []string{"1us", "2us"}[pt/3]}, {"host.mtu", []string{"1000", "1500", "4000"}[pt%3]}}
		if r.Index != i || r.Scheme != wantScheme || r.Seed != wantSeed || !slices.Equal(r.Point, want) {
			t.Errorf("run %d: %+v; want %s seed %d at %v", i, r, wantScheme, wantSeed, want)
		}
	}
	for _, n := range []int{1, 2, 5, 7, 24} {
		seen := map[int]int{}
		last := -1
		for i := range n {
			spec.Shard = Shard{Index: i, Count: n}
			part, pid, err := Plan(spec)
			if err != nil || pid != id {
				t.Fatalf("shard %d/%d: %v, id %s", i, n, err, pid)
			}
			if len(part) < 24/n || len(part) > 24/n+1 {
				t.Errorf("shard %d/%d has %d runs", i, n, len(part))
			}
			for _, r := range part {
				seen[r.Index]++
				if r.Index != last+1 {
					t.Errorf("shard %d/%d: run %d after %d", i, n, r.Index, last)
				}
				last = r.Index
			}
		}
		if len(seen) != 24 {
			t.Errorf("%d shards hold %d of 24 runs", n, len(seen))
		}
	}
	for _, sh := range []Shard{{Index: 2, Count: 2}, {Index: -1, Count: 2}, {Index: 0, Count: 25}} {
		spec.Shard = sh
		if _, _, err := Plan(spec); err == nil || !strings.Contains(err.Error(), "shard "+sh.String()) {
			t.Errorf("shard %s: %v", sh, err)
		}
	}
	for _, in := range []string{"3/3", "-1/2", "a/2", "1", "0/0", ""} {
		if _, err := ParseShard(in); err == nil {
			t.Errorf("ParseShard(%q) accepted", in)
		}
	}
	if s, err := ParseShard("2/5"); err != nil || s != (Shard{2, 5}) {
		t.Errorf("ParseShard(2/5) = %v, %v", s, err)
	}
}

// The study's ID follows what decides its results and nothing else.
func TestStudyID(t *testing.T) {
	base := Spec{Scenario: parse(t, tinyScenario), Schemes: []string{"dcqcn", "pfc"}, Seeds: []uint64{1, 2},
		Vary: []Vary{{"topology.delay", []string{"1us", "2us"}}}}
	id := func(spec Spec) string {
		_, id, err := Plan(spec)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	ref := id(base)
	same := base
	same.Jobs, same.Shard, same.Scenario = 1, Shard{1, 2}, parse(t, "# a comment changes nothing\n"+tinyScenario)
	if id(same) != ref {
		t.Error("jobs, shard or a comment changed the study's ID")
	}
	other := parse(t, tinyScenario)
	if err := other.Set("host.mtu", "1000"); err != nil {
		t.Fatal(err)
	}
	for name, spec := range map[string]Spec{
		"scenario": {Scenario: other, Schemes: base.Schemes, Seeds: base.Seeds, Vary: base.Vary},
		"schemes":  {Scenario: base.Scenario, Schemes: []string{"pfc", "dcqcn"}, Seeds: base.Seeds, Vary: base.Vary},
		"seeds":    {Scenario: base.Scenario, Schemes: base.Schemes, Seeds: []uint64{1, 3}, Vary: base.Vary},
		"vary":     {Scenario: base.Scenario, Schemes: base.Schemes, Seeds: base.Seeds, Vary: []Vary{{"topology.delay", []string{"1us", "3us"}}}},
		"level":    {Scenario: base.Scenario, Schemes: base.Schemes, Seeds: base.Seeds, Vary: base.Vary, Level: 0.99},
	} {
		if id(spec) == ref {
			t.Errorf("a different %s keeps the study's ID", name)
		}
	}
}

func TestSweepErrors(t *testing.T) {
	s := parse(t, tinyScenario)
	set := parse(t, tinyScenario)
	if err := set.SetFrom("--load 0.5", "topology.delay", "3us"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"unknown path", Spec{Scenario: s, Schemes: []string{"pfc"}, Vary: []Vary{{"topology.dealy", []string{"1us"}}}},
			`--vary topology.dealy=1us`},
		{"refused value", Spec{Scenario: s, Schemes: []string{"pfc"}, Vary: []Vary{{"topology.delay", []string{"1us", "fast"}}}},
			`point topology.delay=fast: --vary topology.delay=fast`},
		{"no values", Spec{Scenario: s, Schemes: []string{"pfc"}, Vary: []Vary{{"topology.delay", nil}}}, "no values"},
		{"twice", Spec{Scenario: s, Schemes: []string{"pfc"}, Vary: []Vary{{"host.mtu", []string{"1000"}}, {"host.mtu", []string{"1500"}}}},
			"--vary host.mtu given twice"},
		{"set and varied", Spec{Scenario: set, Schemes: []string{"pfc"}, Vary: []Vary{{"topology.delay", []string{"1us"}}}},
			"--load 0.5 and --vary topology.delay both set topology.delay"},
		{"level", Spec{Scenario: s, Schemes: []string{"pfc"}, Level: 1.5}, "confidence level 1.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.spec)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Check: %v; want %q", err, tt.want)
			}
		})
	}
}

// sweep is a study of the tiny star at two link delays, two seeds each.
func sweep(t *testing.T) Spec {
	return Spec{Scenario: parse(t, tinyScenario), Schemes: []string{"dcqcn", "pfc"}, Seeds: []uint64{1, 2}, Jobs: 2,
		Vary: []Vary{{"topology.delay", []string{"1us", "5us"}}}, Version: "test"}
}

func TestSweepRunsEachPointWithItsValues(t *testing.T) {
	st, err := Run(context.Background(), sweep(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if len(st.Points) != 2 || !st.Swept() || st.Runs() != 8 {
		t.Fatalf("%d points, %d runs", len(st.Points), st.Runs())
	}
	// The longer links lengthen every flow: the mice's mean FCT grows by
	// at least the 8 us of the four extra link crossings of a round trip.
	fct := func(r *Result) float64 {
		row := findRow(r.SizeClasses, "mice", "pfc")
		return *row.Metric("mean_fct_us").Mean
	}
	if a, b := fct(st.Points[0]), fct(st.Points[1]); b < a+8 {
		t.Errorf("mice FCT %.3f us at 1 us links, %.3f at 5 us; want the second 8 us longer at least", a, b)
	}
	dir := t.TempDir()
	paths, err := WriteDir(dir, st)
	if err != nil {
		t.Fatal(err)
	}
	if last := paths[len(paths)-1]; last != filepath.Join(dir, HTMLFile) {
		t.Errorf("last file %s", last)
	}
	files := readTree(t, dir)
	for _, name := range []string{"p0_topology.delay=1us/comparison.csv", "p1_topology.delay=5us/pfc-seed2/flows.csv",
		"p1_topology.delay=5us/report.html", StudyCSVFile, StudyJSONFile, "curve-mean-fct-us.png", "curve-p99-fct-us.svg",
		"curve-mean-slowdown.png", "curve-goodput-gbps.png"} {
		if files[name] == nil {
			t.Errorf("no %s", name)
		}
	}
	csvLines := strings.Split(strings.TrimSpace(string(files[StudyCSVFile])), "\n")
	if csvLines[0] != "topology.delay,"+strings.Join(csvHeader, ",") || !strings.HasPrefix(csvLines[1], "1us,size,mice,dcqcn,2,") ||
		!strings.HasPrefix(csvLines[len(csvLines)-1], "5us,class,") {
		t.Errorf("study.csv: %s ... %s", csvLines[0], csvLines[len(csvLines)-1])
	}
	var js struct {
		ID     string `json:"id"`
		Vary   []Vary `json:"vary"`
		Points []struct {
			Point []Assignment `json:"point"`
			Dir   string       `json:"dir"`
			Runs  []struct{ Index int }
		} `json:"points"`
	}
	if err := json.Unmarshal(files[StudyJSONFile], &js); err != nil {
		t.Fatal(err)
	}
	if js.ID != st.ID || len(js.Points) != 2 || js.Points[1].Dir != "p1_topology.delay=5us" || len(js.Points[1].Runs) != 4 {
		t.Errorf("study.json: %s", files[StudyJSONFile])
	}
	page := string(files[HTMLFile])
	for _, want := range []string{`href="p0_topology.delay=1us/report.html"`, `href="p1_topology.delay=5us/dcqcn-seed1/"`,
		"Mean FCT against dcqcn", "topology.delay = 1us, 5us"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if n := strings.Count(page, `<img src="data:image/png;base64,`); n != 4 {
		t.Errorf("report.html embeds %d curves, want 4", n)
	}
	var text bytes.Buffer
	if err := WriteStudyText(&text, st); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"study tiny: 2 points (topology.delay = 1us, 5us)", "point 2 of 2: topology.delay=5us",
		"mean FCT against dcqcn at each point", "goodput against dcqcn at each point", "topology.delay=5us  pfc seed 2"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}

// wallTimes matches what may differ between two executions of one study.
var wallTimes = regexp.MustCompile(`"wall_seconds": [0-9.e+-]+|runs in [0-9.]+ s|<td>[0-9]+\.[0-9]{2}</td><td class="name">ok`)

// A study cut into shards, each run on its own and merged, writes what
// the study run whole writes, wall times aside.
func TestShardsMergeAsOneMachine(t *testing.T) {
	spec := sweep(t)
	st, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	whole := t.TempDir()
	if _, err := WriteDir(whole, st); err != nil {
		t.Fatal(err)
	}
	var parts []string
	for i := range 3 {
		spec.Shard = Shard{Index: i, Count: 3}
		part, err := Run(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		if part.Shard == nil || part.Points[0].SizeClasses != nil {
			t.Fatal("a shard is compared, or not marked as a shard")
		}
		dir := filepath.Join(t.TempDir(), "part")
		if _, err := WriteShard(dir, part); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, dir)
	}
	// Given in any order.
	merged, err := Merge([]string{parts[2], parts[0], parts[1]})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := WriteDir(out, merged); err != nil {
		t.Fatal(err)
	}
	a, b := readTree(t, whole), readTree(t, out)
	if len(a) != len(b) {
		t.Errorf("%d files whole, %d merged", len(a), len(b))
	}
	for name, data := range a {
		x, y := wallTimes.ReplaceAll(data, nil), wallTimes.ReplaceAll(b[name], nil)
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between the whole study and the merged shards", name)
		}
	}

	t.Run("refused", func(t *testing.T) {
		other := sweep(t)
		other.Seeds = []uint64{1, 3}
		other.Shard = Shard{Index: 0, Count: 3}
		o, err := Run(context.Background(), other)
		if err != nil {
			t.Fatal(err)
		}
		odir := filepath.Join(t.TempDir(), "other")
		if _, err := WriteShard(odir, o); err != nil {
			t.Fatal(err)
		}
		newer := sweep(t)
		newer.Version, newer.Shard = "test2", Shard{Index: 0, Count: 3}
		nv, err := Run(context.Background(), newer)
		if err != nil {
			t.Fatal(err)
		}
		ndir := filepath.Join(t.TempDir(), "newer")
		if _, err := WriteShard(ndir, nv); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			dirs []string
			want string
		}{
			{[]string{parts[0], parts[1]}, "missing runs 5, 6, 7 (of shard 2 of 3)"},
			{[]string{parts[0], parts[1], parts[2], parts[1]}, parts[1] + " is given twice"},
			{[]string{parts[0], odir}, odir + " is a shard of study " + o.ID},
			{[]string{parts[0], ndir}, ndir + ` was run by "test2"`},
			{[]string{parts[0], whole}, whole + ": is a whole study's output"},
			{[]string{parts[0], filepath.Join(whole, "nosuch")}, "nosuch: no such file or directory"},
			{nil, "needs the shards' directories"},
		} {
			if _, err := Merge(tt.dirs); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Merge %v: %v; want %q", tt.dirs, err, tt.want)
			}
		}
	})
}

// With repetitions, the schemes take turns (dcqcn, pfc, dcqcn, pfc, ...)
// and each is paired with the baseline's run of the same repetition.
func TestRepeatsInterleaveAndPair(t *testing.T) {
	var order []string
	call := 0
	// The runner slows every flow of the k-th call by k%3 us on top of
	// what the simulator gives: the same for dcqcn and pfc within a
	// repetition, different across repetitions, as a drifting machine
	// would.
	runner := func(_ context.Context, cfg sim.Config) (*sim.Results, error) {
		order = append(order, cfg.CC)
		r, err := sim.Run(cfg)
		if err != nil {
			return nil, err
		}
		rep := call / 2
		call++
		for i := range r.Flows {
			r.Flows[i].FCT += int64(rep%3) * 1e6
		}
		return r, nil
	}
	spec := Spec{Scenario: parse(t, tinyScenario), Schemes: []string{"dcqcn", "pfc"}, Repeat: 4, Jobs: 1, Runner: runner}
	st, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"dcqcn", "none", "dcqcn", "none", "dcqcn", "none", "dcqcn", "none"}; !slices.Equal(order, want) {
		t.Errorf("runs in order %v, want %v", order, want)
	}
	r := st.Points[0]
	if r.Runs[1].Name() != "dcqcn seed 1 rep 2" || r.Runs[1].Dir != "dcqcn-seed1-rep2" {
		t.Errorf("run %q in %q", r.Runs[1].Name(), r.Runs[1].Dir)
	}
	// The drift is shared within each repetition, so every pair differs
	// by the same amount (the simulator's difference of the two schemes)
	// while each scheme's own interval is widened by it.
	m := findRow(r.SizeClasses, "mice", "pfc").Metric("mean_fct_us")
	if c := m.VsBaseline; c == nil || c.Pairs != 4 || c.Paired().Diff.SD != 0 {
		t.Errorf("pfc against dcqcn: %+v", c)
	}
	if iv := m.Interval(); iv.HalfWidth() < 0.5 {
		t.Errorf("pfc's own interval %+v: the drift should widen it", iv)
	}
	var text bytes.Buffer
	if err := WriteComparisonText(&text, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "seeds 1 x 4 repetitions") || !strings.Contains(text.String(), "paired by seed and repetition") {
		t.Errorf("text:\n%s", text.String())
	}
}

// One run per scheme: the text says no interval can be given rather than
// print one of zero width, and the CSV leaves the interval empty.
func TestOneSeedHasNoInterval(t *testing.T) {
	r := run(t, Spec{Scenario: parse(t, tinyScenario), Schemes: []string{"dcqcn", "pfc"}})
	var text, csv bytes.Buffer
	if err := WriteComparisonText(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteComparisonCSV(&csv, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "no interval or significance can be given") || strings.Contains(text.String(), "±") {
		t.Errorf("text:\n%s", text.String())
	}
	m := findRow(r.SizeClasses, "mice", "pfc").Metric("mean_fct_us")
	if m.CILo != nil || m.SD != nil || m.VsBaseline.Verdict != string(stats.TooFew) {
		t.Errorf("one seed: %+v, %+v", m, m.VsBaseline)
	}
}

// A variant is its scheme with values of its own, compared under its
// name: pfc with longer links is slower than pfc.
func TestVariants(t *testing.T) {
	slow := Variant{Name: "slow-links", Scheme: "pfc", Set: []Assignment{{"topology.delay", "5us"}}}
	spec := Spec{Scenario: parse(t, tinyScenario), Schemes: []string{"pfc", "slow-links"}, Variants: []Variant{slow},
		Seeds: []uint64{1, 2}, Jobs: 2}
	r := run(t, spec)
	base, v := findRow(r.SizeClasses, "mice", "pfc").Metric("mean_fct_us"), findRow(r.SizeClasses, "mice", "slow-links").Metric("mean_fct_us")
	if *v.Mean < *base.Mean+8 || v.VsBaseline.Verdict != string(stats.Worse) {
		t.Errorf("mice FCT: pfc %.3f us, slow-links %.3f (%s); want slow-links 8 us slower and worse", *base.Mean, *v.Mean, v.VsBaseline.Verdict)
	}
	var text bytes.Buffer
	if err := WriteComparisonText(&text, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "variant slow-links: pfc with topology.delay=5us\n") || !strings.Contains(text.String(), "slow-links seed 2") {
		t.Errorf("text:\n%s", text.String())
	}
	_, id, _ := Plan(spec)
	spec.Variants[0].Set[0].Value = "6us"
	if _, id2, _ := Plan(spec); id2 == id {
		t.Error("a variant's values do not change the study's ID")
	}

	s := parse(t, tinyScenario)
	for _, tt := range []struct {
		name string
		spec Spec
		want string
	}{
		{"not a scheme", Spec{Scenario: s, Schemes: []string{"pfc"}, Variants: []Variant{slow}}, `variant "slow-links" is not among the schemes pfc`},
		{"sets the scheme", Spec{Scenario: s, Schemes: []string{"pfc", "x"}, Variants: []Variant{{Name: "x", Scheme: "pfc", Set: []Assignment{{"scheme", "rcm"}}}}},
			"variant x sets scheme"},
		{"sets a swept value", Spec{Scenario: s, Schemes: []string{"pfc", "slow-links"}, Variants: []Variant{slow},
			Vary: []Vary{{"topology.delay", []string{"1us", "2us"}}}}, "variant slow-links sets topology.delay, which --vary sweeps"},
		{"bad value", Spec{Scenario: s, Schemes: []string{"pfc", "x"}, Variants: []Variant{{Name: "x", Scheme: "pfc", Set: []Assignment{{"topology.delay", "soon"}}}}},
			"variant x: --variant x: topology.delay=soon"},
	} {
		if err := Check(tt.spec); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want %q", tt.name, err, tt.want)
		}
	}
	for in, want := range map[string]string{
		"no-sar=rcm,rcm.sar=false": "no-sar rcm [{rcm.sar false}]",
		"plain=pfc":                "plain pfc []",
	} {
		v, err := ParseVariant(in)
		if got := fmt.Sprintf("%s %s %v", v.Name, v.Scheme, v.Set); err != nil || got != want {
			t.Errorf("ParseVariant(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"rcm", "=rcm", "x=", "x=rcm,rcm.sar", "../x=rcm", "x=rcm.sar=false"} {
		if _, err := ParseVariant(in); err == nil {
			t.Errorf("ParseVariant(%q) accepted", in)
		}
	}
}
