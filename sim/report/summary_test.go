package report

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/p4rcm/p4rcm/sim"
)

// done makes a completed flow: fct in ns, slowdown as given.
func done(id int, size int64, fctNs int64, slowdown float64) sim.FlowRecord {
	start := int64(id) * 1000
	fct := fctNs * 1000
	return sim.FlowRecord{ID: id, Src: id % 4, Dst: (id + 1) % 4, SPort: 10000 + id, DPort: 100, Size: size,
		Start: start, Finish: start + fct, FCT: fct, Ideal: fct / 2, Slowdown: slowdown}
}

// pending makes a flow that did not complete.
func pending(id int, size int64) sim.FlowRecord {
	return sim.FlowRecord{ID: id, Src: 1, Dst: 2, SPort: 10000 + id, DPort: 100, Size: size, Start: 5000, Ideal: 7000}
}

func TestPercentile(t *testing.T) {
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(i + 1)
	}
	tests := []struct {
		name   string
		values []float64
		p      int
		want   float64
	}{
		{"1..100 p50", hundred, 50, 50},
		{"1..100 p95", hundred, 95, 95},
		{"1..100 p99", hundred, 99, 99},
		{"1..100 p100", hundred, 100, 100},
		{"1..100 p1", hundred, 1, 1},
		{"seven p50", []float64{1, 2, 3, 4, 5, 6, 7}, 50, 4},
		{"seven p95", []float64{1, 2, 3, 4, 5, 6, 7}, 95, 7},
		{"two p50 takes the lower", []float64{10, 20}, 50, 10},
		{"one", []float64{3}, 99, 3},
		{"rank rounds up", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 12, 2},
		{"rank at least 1", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 1, 1},
		{"empty", nil, 50, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.values, tt.p); got != tt.want {
				t.Errorf("percentile(p%d) = %v, want %v", tt.p, got, tt.want)
			}
		})
	}
}

func TestSummaryPercentilesOf1To100(t *testing.T) {
	var r sim.Results
	for i := 1; i <= 100; i++ {
		r.Flows = append(r.Flows, done(i, 1000, int64(i), float64(i)))
	}
	// Shuffled input must not matter.
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(r.Flows), func(i, j int) { r.Flows[i], r.Flows[j] = r.Flows[j], r.Flows[i] })
	s := Summarize(&r, SummaryOptions{})
	want := FCTStats{Count: 100, MeanFCTNs: 50.5, P50FCTNs: 50, P95FCTNs: 95, P99FCTNs: 99,
		MeanSlowdown: 50.5, P50Slowdown: 50, P95Slowdown: 95, P99Slowdown: 99}
	if s.FCT != want {
		t.Errorf("FCT stats = %+v, want %+v", s.FCT, want)
	}
}

func TestFixedBins(t *testing.T) {
	tests := []struct {
		size int64
		bin  string
	}{
		{0, "[0,10KB)"},
		{9_999, "[0,10KB)"},
		{10_000, "[10KB,100KB)"},
		{99_999, "[10KB,100KB)"},
		{100_000, "[100KB,1MB)"},
		{999_999, "[100KB,1MB)"},
		{1_000_000, "[1MB,10MB)"},
		{9_999_999, "[1MB,10MB)"},
		{10_000_000, "[10MB,inf)"},
		{1 << 40, "[10MB,inf)"},
	}
	for _, tt := range tests {
		t.Run(strconv.FormatInt(tt.size, 10), func(t *testing.T) {
			r := &sim.Results{Flows: []sim.FlowRecord{done(0, tt.size, 10, 2)}}
			s := Summarize(r, SummaryOptions{})
			if len(s.SizeBins) != 5 {
				t.Fatalf("%d size bins, want 5", len(s.SizeBins))
			}
			for _, b := range s.SizeBins {
				want := 0
				if b.Label == tt.bin {
					want = 1
				}
				if b.Count != want {
					t.Errorf("size %d: bin %s has %d flows, want %d", tt.size, b.Label, b.Count, want)
				}
				if b.HiBytes != 0 && (b.LoBytes >= b.HiBytes) {
					t.Errorf("bin %s: bounds [%d,%d)", b.Label, b.LoBytes, b.HiBytes)
				}
			}
		})
	}
}

func TestFixedBinStats(t *testing.T) {
	r := &sim.Results{Flows: []sim.FlowRecord{
		done(0, 500, 10, 1), done(1, 9_999, 30, 3), // small
		done(2, 10_000, 100, 5), // exactly 10 KB: second bin
		pending(3, 20_000),
	}}
	s := Summarize(r, SummaryOptions{})
	small, medium := s.SizeBins[0], s.SizeBins[1]
	if small.Count != 2 || small.MeanFCTNs != 20 || small.P99FCTNs != 30 || small.MeanSlowdown != 2 || small.P99Slowdown != 3 {
		t.Errorf("[0,10KB) = %+v", small)
	}
	if medium.Count != 1 || medium.MeanFCTNs != 100 || medium.P50Slowdown != 5 {
		t.Errorf("[10KB,100KB) = %+v (the incomplete flow must not count)", medium)
	}
}

func TestEqualCountBins(t *testing.T) {
	mk := func(n int) []sim.FlowRecord {
		flows := make([]sim.FlowRecord, n)
		for i := range flows {
			// sizes descend with the ID so that the bins must sort them
			flows[i] = done(i, int64(1000*(n-i)), int64(n-i), float64(n-i))
		}
		return flows
	}
	tests := []struct {
		name   string
		flows  []sim.FlowRecord
		bins   int
		counts []int
	}{
		{"100 flows", mk(100), 0, repeat(5, 20)},
		{"7 flows", mk(7), 0, repeat(1, 7)},
		{"0 flows", nil, 0, nil},
		{"7 flows in 3 bins", mk(7), 3, []int{2, 2, 3}},
		{"none asked", mk(7), -1, nil},
		{"100 flows and 3 pending", append(mk(100), pending(100, 1), pending(101, 1<<30), pending(102, 5000)), 0, repeat(5, 20)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Summarize(&sim.Results{Flows: tt.flows}, SummaryOptions{EqualCountBins: tt.bins})
			if s.EqualBins == nil {
				t.Fatal("EqualBins is nil, want an empty slice at least")
			}
			if len(s.EqualBins) != len(tt.counts) {
				t.Fatalf("%d bins, want %d", len(s.EqualBins), len(tt.counts))
			}
			var prevMax int64 = -1
			total := 0
			for i, b := range s.EqualBins {
				if b.Count != tt.counts[i] {
					t.Errorf("bin %d: %d flows, want %d", i, b.Count, tt.counts[i])
				}
				if b.MinBytes > b.MaxBytes || b.MinBytes < prevMax {
					t.Errorf("bin %d: sizes %d..%d after a bin ending at %d", i, b.MinBytes, b.MaxBytes, prevMax)
				}
				// sizes are 1000*k with FCT k ns and slowdown k
				if want := float64(b.MinBytes+b.MaxBytes) / 2 / 1000; b.MeanFCTNs != want || b.MeanSlowdown != want {
					t.Errorf("bin %d (%d..%d B): mean FCT %v ns, mean slowdown %v, want %v", i, b.MinBytes, b.MaxBytes, b.MeanFCTNs, b.MeanSlowdown, want)
				}
				if b.P99Slowdown != float64(b.MaxBytes/1000) {
					t.Errorf("bin %d: p99 slowdown %v, want %v", i, b.P99Slowdown, b.MaxBytes/1000)
				}
				prevMax = b.MaxBytes
				total += b.Count
			}
			if len(tt.counts) > 0 && total != s.Completed {
				t.Errorf("bins hold %d flows, %d completed", total, s.Completed)
			}
		})
	}
}

func repeat(v, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestIncompleteFlowsExcluded(t *testing.T) {
	r := &sim.Results{Flows: []sim.FlowRecord{
		done(0, 1000, 10, 1), done(1, 1000, 20, 2), done(2, 1000, 30, 3),
		pending(3, 1000), pending(4, 50_000_000),
	}}
	s := Summarize(r, SummaryOptions{})
	if s.Flows != 5 || s.Completed != 3 || s.Incomplete != 2 {
		t.Errorf("flows %d completed %d incomplete %d, want 5, 3, 2", s.Flows, s.Completed, s.Incomplete)
	}
	want := FCTStats{Count: 3, MeanFCTNs: 20, P50FCTNs: 20, P95FCTNs: 30, P99FCTNs: 30,
		MeanSlowdown: 2, P50Slowdown: 2, P95Slowdown: 3, P99Slowdown: 3}
	if s.FCT != want {
		t.Errorf("FCT = %+v, want %+v", s.FCT, want)
	}
	if s.SizeBins[4].Count != 0 {
		t.Errorf("the incomplete 50 MB flow landed in a size bin: %+v", s.SizeBins[4])
	}
	var text bytes.Buffer
	if err := WriteSummaryText(&text, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2 incomplete", "2 flows did not complete by the end of the run (greedy, or cut off by stop): no FCT; flows.csv gives the bytes each delivered\n",
		"size          completed  mean FCT us"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text does not say %q:\n%s", want, text.String())
		}
	}
}

// Greedy flows only: no table of dashes, and where to look instead.
func TestGreedyFlowsOnly(t *testing.T) {
	r := &sim.Results{Flows: []sim.FlowRecord{pending(0, 1e12), pending(1, 1e12)},
		RateSamples: []sim.RateSample{{Time: 1000, Flow: 0, Bytes: 10}}}
	var text bytes.Buffer
	if err := WriteSummaryText(&text, Summarize(r, SummaryOptions{})); err != nil {
		t.Fatal(err)
	}
	got := text.String()
	if !strings.Contains(got, "flows.csv gives the bytes each delivered, rates.csv their throughput over time") ||
		!strings.Contains(got, "FCT: no completed flows, so no FCT table") || strings.Contains(got, "[0,10KB)") {
		t.Errorf("summary of greedy flows:\n%s", got)
	}
}

func TestClasses(t *testing.T) {
	a := done(0, 1000, 1000, 2) // 1000 B in 1 us: 8 Gbps
	a.Class = "web"
	b := done(1, 3000, 3000, 4)
	b.Class = "web"
	c := done(2, 500, 10, 1)
	c.Class = "db"
	d := pending(3, 7)
	d.Class = "db"
	e := done(4, 100, 10, 1) // no class
	tests := []struct {
		name  string
		flows []sim.FlowRecord
		want  []ClassStats
	}{
		{"no classes", []sim.FlowRecord{done(0, 1, 1, 1)}, []ClassStats{}},
		{"three", []sim.FlowRecord{a, b, c, d, e}, []ClassStats{
			{Class: "", Flows: 1, MeanSizeBytes: 100, ThroughputGbps: 80,
				FCTStats: FCTStats{Count: 1, MeanFCTNs: 10, P50FCTNs: 10, P95FCTNs: 10, P99FCTNs: 10, MeanSlowdown: 1, P50Slowdown: 1, P95Slowdown: 1, P99Slowdown: 1}},
			{Class: "db", Flows: 2, MeanSizeBytes: 500, ThroughputGbps: 400,
				FCTStats: FCTStats{Count: 1, MeanFCTNs: 10, P50FCTNs: 10, P95FCTNs: 10, P99FCTNs: 10, MeanSlowdown: 1, P50Slowdown: 1, P95Slowdown: 1, P99Slowdown: 1}},
			{Class: "web", Flows: 2, MeanSizeBytes: 2000, ThroughputGbps: 8,
				FCTStats: FCTStats{Count: 2, MeanFCTNs: 2000, P50FCTNs: 1000, P95FCTNs: 3000, P99FCTNs: 3000, MeanSlowdown: 3, P50Slowdown: 2, P95Slowdown: 4, P99Slowdown: 4}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Summarize(&sim.Results{Flows: tt.flows}, SummaryOptions{})
			if len(s.Classes) != len(tt.want) {
				t.Fatalf("classes = %+v, want %+v", s.Classes, tt.want)
			}
			for i := range tt.want {
				if s.Classes[i] != tt.want[i] {
					t.Errorf("class %d = %+v, want %+v", i, s.Classes[i], tt.want[i])
				}
			}
		})
	}
}

func TestDropsAndPFC(t *testing.T) {
	r := &sim.Results{
		Drops:         map[string]int64{"ttl": 1, "buffer_full": 5, "acl": 0, "queue_limit": 2},
		LosslessDrops: 5,
		HostPauses:    4,
		HostResumes:   6,
		Ports: []sim.PortRecord{
			{Node: 4, Port: 0, PausesSent: 3, Resumes: 2, PausedTime: 0},
			{Node: 4, Port: 1, PausesReceived: 3, ResumesReceived: 1, PausedTime: 1_500_000},
			{Node: 5, Port: 0},
		},
	}
	s := Summarize(r, SummaryOptions{})
	wantReasons := []ReasonCount{{"acl", 0}, {"buffer_full", 5}, {"queue_limit", 2}, {"ttl", 1}}
	if len(s.Drops.ByReason) != len(wantReasons) {
		t.Fatalf("by reason = %v, want %v", s.Drops.ByReason, wantReasons)
	}
	for i := range wantReasons {
		if s.Drops.ByReason[i] != wantReasons[i] {
			t.Errorf("by reason = %v, want %v", s.Drops.ByReason, wantReasons)
		}
	}
	if s.Drops.Total != 8 || s.Drops.Lossless != 5 {
		t.Errorf("drops %+v, want total 8, lossless 5", s.Drops)
	}
	wantPFC := PFCStats{PausesSent: 3, ResumesSent: 2, PausesReceived: 3, ResumesReceived: 1, HostPauses: 4, HostResumes: 6, PausedNs: 1500,
		PortsPausing: 1, PortsPaused: 1, Ports: 3}
	if s.PFC != wantPFC {
		t.Errorf("PFC = %+v, want %+v", s.PFC, wantPFC)
	}
}

func TestSummaryText(t *testing.T) {
	base := func() *sim.Results {
		r := &sim.Results{Drops: map[string]int64{}, End: 2_000_000_000, LastFinish: 1_500_000_000, Events: 12345}
		for i := range 1000 {
			f := done(i, int64(i*i*37%20_000_000+100), int64(1000+i), 1+float64(i%50)/10)
			f.Class = []string{"rpc", "storage", "bulk"}[i%3]
			r.Flows = append(r.Flows, f)
		}
		r.Flows = append(r.Flows, pending(1000, 5))
		for i := range 40 {
			r.Ports = append(r.Ports, sim.PortRecord{Node: 100 + i/8, Port: i % 8, PausesSent: int64(i % 2)})
		}
		return r
	}
	tests := []struct {
		name    string
		modify  func(*sim.Results)
		want    []string
		notWant []string
	}{
		{"clean", func(*sim.Results) {},
			[]string{"1000/1001 flows completed", "slowdown p50", "0 drops", "lossless drops: 0", "[10KB,100KB)", "storage", "20 of 40 switch ports sent PAUSE"},
			[]string{"FAULT", "not measured"}},
		{"lossy drops only", func(r *sim.Results) { r.Drops["queue_limit"] = 7 },
			[]string{"drops: 7 (queue_limit 7)"}, []string{"FAULT", "0 drops"}},
		{"lossless drops", func(r *sim.Results) { r.Drops["buffer_full"] = 3; r.LosslessDrops = 3 },
			[]string{"FAULT: 3 packets dropped on lossless priorities", "lossless drops: 3  FAULT", "drops: 3 (buffer_full 3)"}, []string{"0 drops"}},
		{"faults", func(r *sim.Results) { r.Faults = []string{"deadlock at switch 7"} },
			[]string{"FAULT: deadlock at switch 7"}, nil},
		{"not measured", func(r *sim.Results) { r.NotMeasured = []string{"paused_us", "window_cuts"} },
			[]string{"not measured in this run, so 0 above and empty in ports.csv: paused_us, window_cuts"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := base()
			tt.modify(r)
			var buf bytes.Buffer
			if err := WriteSummaryText(&buf, Summarize(r, SummaryOptions{})); err != nil {
				t.Fatal(err)
			}
			text := buf.String()
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("text lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(text, w) {
					t.Errorf("text has %q:\n%s", w, text)
				}
			}
			if n := strings.Count(text, "\n"); n > 40 {
				t.Errorf("text is %d lines, want at most 40:\n%s", n, text)
			}
			if strings.Contains(text, "NaN") || strings.Contains(text, "Inf") {
				t.Errorf("text has NaN or Inf:\n%s", text)
			}
		})
	}
}

func TestEmptyInputs(t *testing.T) {
	tests := []struct {
		name string
		r    *sim.Results
	}{
		{"nil", nil},
		{"zero", &sim.Results{}},
		{"no completed flows", &sim.Results{Flows: []sim.FlowRecord{pending(0, 10), pending(1, 20)}}},
		{"non-finite slowdown", &sim.Results{Flows: []sim.FlowRecord{done(0, 10, 5, math.NaN()), done(1, 10, 5, math.Inf(1))}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Summarize(tt.r, SummaryOptions{})
			var text, js bytes.Buffer
			if err := WriteSummaryText(&text, s); err != nil {
				t.Fatal(err)
			}
			if err := WriteSummaryJSON(&js, s); err != nil {
				t.Fatal(err)
			}
			for _, out := range []string{text.String(), js.String()} {
				if strings.Contains(out, "NaN") || strings.Contains(out, "Inf") || strings.Contains(out, "null") {
					t.Errorf("output has NaN, Inf or null:\n%s", out)
				}
			}
			var back Summary
			if err := json.Unmarshal(js.Bytes(), &back); err != nil {
				t.Fatalf("JSON does not parse: %v\n%s", err, js.String())
			}
			if back.Flows != s.Flows || back.Completed != s.Completed || len(back.SizeBins) != 5 {
				t.Errorf("JSON round trip: %+v, want %+v", back, s)
			}
		})
	}
}

func TestSummaryJSONKeys(t *testing.T) {
	r := &sim.Results{Flows: []sim.FlowRecord{done(0, 1, 1, 1)}, Drops: map[string]int64{"ttl": 1}}
	var buf bytes.Buffer
	if err := WriteSummaryJSON(&buf, Summarize(r, SummaryOptions{})); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"flows", "completed", "incomplete", "fct", "size_bins", "equal_count_bins", "classes", "drops", "pfc", "cnps", "run", "faults", "not_measured"} {
		if _, ok := m[k]; !ok {
			t.Errorf("key %q missing from %s", k, buf.String())
		}
	}
	bin := m["size_bins"].([]any)[0].(map[string]any)
	for _, k := range []string{"label", "lo_bytes", "hi_bytes", "count", "mean_fct_ns", "p99_slowdown"} {
		if _, ok := bin[k]; !ok {
			t.Errorf("size bin key %q missing: %v", k, bin)
		}
	}
	if !strings.HasPrefix(buf.String(), "{\n  \"") {
		t.Errorf("JSON is not indented: %.40s", buf.String())
	}
}
