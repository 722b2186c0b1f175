package workload

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"testing"
)

func mustBuiltin(t testing.TB, name string) *CDF {
	t.Helper()
	c, err := BuiltinCDF(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// hostRange returns n host IDs starting at first.
func hostRange(first, n int) []int {
	h := make([]int, n)
	for i := range h {
		h[i] = first + i
	}
	return h
}

// checkSortedIDs fails unless flows are sorted by Start, Src, Dst and
// numbered 0..n-1 in that order.
func checkSortedIDs(t *testing.T, flows []Flow) {
	t.Helper()
	for i, f := range flows {
		if f.ID != i {
			t.Fatalf("flow %d has ID %d", i, f.ID)
		}
		if i == 0 {
			continue
		}
		p := flows[i-1]
		if p.Start > f.Start || p.Start == f.Start && (p.Src > f.Src || p.Src == f.Src && p.Dst > f.Dst) {
			t.Fatalf("flows %d and %d out of order: %+v, %+v", i-1, i, p, f)
		}
	}
}

// wantErr fails unless err is an error that contains every one of want.
func wantErr(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one mentioning %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

func TestPoissonDeterministic(t *testing.T) {
	o := PoissonOptions{
		Hosts: hostRange(0, 16), CDF: mustBuiltin(t, "websearch"), Load: 0.5,
		HostRate: 100e9, Start: 2e12, Duration: 5e9, Seed: 42, Priority: 3, Class: "bg",
	}
	a, err := Poisson(o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Poisson(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) < 100 {
		t.Fatalf("only %d flows", len(a))
	}
	if !slices.Equal(a, b) {
		t.Fatal("two runs with the same options differ")
	}
	checkSortedIDs(t, a)
	for _, f := range a {
		if f.Src == f.Dst || f.Start < o.Start || f.Start >= o.Start+o.Duration ||
			f.Size < 1 || f.Priority != 3 || f.Class != "bg" {
			t.Fatalf("bad flow %+v", f)
		}
	}
	o.Seed = 43
	c, err := Poisson(o)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(a, c) {
		t.Fatal("seeds 42 and 43 give the same flows")
	}
}

// TestPoissonLoad checks the offered load, sum(size*8) over
// hosts*rate*duration, within 3% of Load. The run is long enough that 3%
// is at least 4 standard errors: a compound Poisson sum of n flows has a
// relative standard error of sqrt(E[X^2]/n)/E[X].
func TestPoissonLoad(t *testing.T) {
	tests := []struct {
		name  string
		cdf   string
		hosts int
		load  float64
		rate  float64
		group int
	}{
		{"websearch 32 hosts", "websearch", 32, 0.3, 100e9, 0},
		{"websearch 12 groups of 36", "websearch", 432, 0.6, 100e9, 36},
		{"fbhadoop 8 groups of 8", "fbhadoop", 64, 0.8, 25e9, 8},
		{"alistorage 400G", "alistorage", 20, 0.5, 400e9, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustBuiltin(t, tt.cdf)
			ratio := secondMoment(c) / (c.Mean() * c.Mean())
			flowsNeeded := ratio * math.Pow(4/0.03, 2)
			perHostPerSec := tt.load * tt.rate / (8 * c.Mean())
			duration := int64(math.Ceil(flowsNeeded/(perHostPerSec*float64(tt.hosts))*1e12)) + 1e9
			flows, err := Poisson(PoissonOptions{
				Hosts: hostRange(0, tt.hosts), CDF: c, Load: tt.load, HostRate: tt.rate,
				Duration: duration, GroupSize: tt.group, Seed: 7,
			})
			if err != nil {
				t.Fatal(err)
			}
			var bytes float64
			for _, f := range flows {
				bytes += float64(f.Size)
			}
			got := bytes * 8 / (float64(tt.hosts) * tt.rate * float64(duration) / 1e12)
			t.Logf("%d flows over %.3f ms: offered load %.4f, want %g", len(flows), float64(duration)/1e9, got, tt.load)
			if math.Abs(got-tt.load) > 0.03*tt.load {
				t.Errorf("offered load %.4f, want %g within 3%%", got, tt.load)
			}
			if n := float64(len(flows)); math.Abs(n-flowsNeeded) > 0.05*flowsNeeded {
				t.Errorf("%.0f flows, expected about %.0f", n, flowsNeeded)
			}
		})
	}
}

// TestPoissonGroups uses the RCM paper's 12 groups of 36 hosts, with host
// IDs in a scrambled order to check that groups follow the order of Hosts
// rather than the IDs.
func TestPoissonGroups(t *testing.T) {
	const n, gs = 432, 36
	hosts := make([]int, n)
	for i := range hosts {
		hosts[i] = 1000 + (i*7)%n // 7 is coprime to 432: a permutation
	}
	group := map[int]int{}
	for i, h := range hosts {
		group[h] = i / gs
	}
	flows, err := Poisson(PoissonOptions{
		Hosts: hosts, CDF: mustBuiltin(t, "googlerpc"), Load: 0.6, HostRate: 100e9,
		Duration: 300e6, GroupSize: gs, Seed: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	pairs := map[[2]int]bool{}
	sends := map[int]int{}
	for _, f := range flows {
		if group[f.Src] != group[f.Dst] {
			t.Fatalf("flow %+v crosses from group %d to %d", f, group[f.Src], group[f.Dst])
		}
		if f.Src == f.Dst {
			t.Fatalf("flow %+v to itself", f)
		}
		pairs[[2]int{f.Src, f.Dst}] = true
		sends[f.Src]++
	}
	// About 780 flows per host, so that every host sends and, but for a
	// chance of about 1e-6, reaches every other host of its group.
	if len(sends) != n {
		t.Errorf("%d of %d hosts sent", len(sends), n)
	}
	if want := n * (gs - 1); len(pairs) != want {
		t.Errorf("%d distinct (src, dst) pairs, want all %d within groups", len(pairs), want)
	}
	checkSortedIDs(t, flows)
}

func TestPoissonErrors(t *testing.T) {
	good := func() PoissonOptions {
		return PoissonOptions{Hosts: hostRange(0, 8), CDF: mustBuiltin(t, "websearch"), Load: 0.5, HostRate: 100e9, Duration: 1e9}
	}
	tests := []struct {
		name   string
		modify func(*PoissonOptions)
		want   []string
	}{
		{"one host", func(o *PoissonOptions) { o.Hosts = []int{3} }, []string{"Hosts", "1 hosts, need at least 2"}},
		{"duplicate host", func(o *PoissonOptions) { o.Hosts = []int{1, 2, 1} }, []string{"Hosts[2]", "host 1 is already Hosts[0]"}},
		{"negative host", func(o *PoissonOptions) { o.Hosts = []int{1, -2} }, []string{"Hosts[1]", "negative"}},
		{"no CDF", func(o *PoissonOptions) { o.CDF = nil }, []string{"CDF", "missing"}},
		{"load zero", func(o *PoissonOptions) { o.Load = 0 }, []string{"Load 0", "(0, 1]"}},
		{"load above 1", func(o *PoissonOptions) { o.Load = 1.2 }, []string{"Load 1.2"}},
		{"load NaN", func(o *PoissonOptions) { o.Load = math.NaN() }, []string{"Load NaN"}},
		{"rate", func(o *PoissonOptions) { o.HostRate = 0 }, []string{"HostRate 0"}},
		{"start", func(o *PoissonOptions) { o.Start = -1 }, []string{"Start -1 ps"}},
		{"duration", func(o *PoissonOptions) { o.Duration = 0 }, []string{"Duration 0 ps"}},
		{"duration overflow", func(o *PoissonOptions) { o.Start = 1; o.Duration = math.MaxInt64 }, []string{"Duration", "past the largest time"}},
		{"duration far too long", func(o *PoissonOptions) { o.Duration = 1e18 }, []string{"Duration", "flows expected"}},
		{"group size", func(o *PoissonOptions) { o.GroupSize = 3 }, []string{"GroupSize 3", "8 hosts are not a multiple"}},
		{"group size 1", func(o *PoissonOptions) { o.GroupSize = 1 }, []string{"GroupSize 1"}},
		{"negative group size", func(o *PoissonOptions) { o.GroupSize = -4 }, []string{"GroupSize -4"}},
		{"priority", func(o *PoissonOptions) { o.Priority = 8 }, []string{"Priority 8", "0..7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := good()
			tt.modify(&o)
			flows, err := Poisson(o)
			wantErr(t, err, append([]string{"workload: Poisson: "}, tt.want...)...)
			if flows != nil {
				t.Errorf("%d flows with the error", len(flows))
			}
		})
	}
	if _, err := Poisson(good()); err != nil {
		t.Fatalf("the base options fail: %v", err)
	}
}

// millionFlows are the options of about a million web-search flows: 1,024
// hosts at 60% of 100 Gb/s for 200 ms.
func millionFlows(b *testing.B) PoissonOptions {
	cdf, err := LoadCDF("websearch")
	if err != nil {
		b.Fatal(err)
	}
	hosts := make([]int, 1024)
	for i := range hosts {
		hosts[i] = i
	}
	return PoissonOptions{Hosts: hosts, CDF: cdf, Load: 0.6, HostRate: 100e9, Duration: 200e9, Seed: 1}
}

// BenchmarkPoissonMillionFlows generates about a million flows, sorted
// and numbered.
func BenchmarkPoissonMillionFlows(b *testing.B) {
	o := millionFlows(b)
	b.ReportAllocs()
	for b.Loop() {
		flows, err := Poisson(o)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(flows)), "flows")
	}
}

// BenchmarkSortFlows orders a million generated flows as finish does (a
// total order that ends with the generation index) against the stable
// sort it replaced, the baseline, on the same flows in the same run.
func BenchmarkSortFlows(b *testing.B) {
	flows, err := Poisson(millionFlows(b))
	if err != nil {
		b.Fatal(err)
	}
	// Back to the order of generation: host by host, each in time.
	slices.SortFunc(flows, func(a, b Flow) int { return cmp.Or(cmp.Compare(a.Src, b.Src), cmp.Compare(a.Start, b.Start)) })
	work := make([]Flow, len(flows))
	b.Run("finish", func(b *testing.B) {
		for b.Loop() {
			copy(work, flows)
			finish(work)
		}
	})
	b.Run("stable-baseline", func(b *testing.B) {
		for b.Loop() {
			copy(work, flows)
			slices.SortStableFunc(work, func(a, b Flow) int {
				return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Src, b.Src), cmp.Compare(a.Dst, b.Dst))
			})
		}
	})
}
