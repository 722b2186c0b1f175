package partition

import (
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/p4rcm/p4rcm/sim/topo"
)

func fatTree(t *testing.T, k int, delay int64) *topo.Topology {
	t.Helper()
	tp, err := topo.FatTree(topo.FatTreeOptions{K: k, HostRate: 100e9, Delay: delay})
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func TestFatTreeSplitsByPod(t *testing.T) {
	tp := fatTree(t, 4, 1_000_000)
	p := Split(tp, 2, 100_000)
	if p.Parts != 2 || p.Note != "" || p.Lookahead != 1_000_000 {
		t.Fatalf("parts %d, lookahead %d, note %q", p.Parts, p.Lookahead, p.Note)
	}
	cores := map[int]int{}
	for _, nd := range tp.Nodes {
		if nd.Group >= 0 {
			// Pods 0 and 1 in part 0, 2 and 3 in part 1.
			if want := nd.Group / 2; p.Of[nd.ID] != want {
				t.Errorf("%s of pod %d in part %d, want %d", nd.Name, nd.Group, p.Of[nd.ID], want)
			}
		} else if nd.Kind == topo.Switch && nd.Tier == 3 {
			cores[p.Of[nd.ID]]++
		}
	}
	if cores[0] != 2 || cores[1] != 2 {
		t.Errorf("cores per part %v, want 2 and 2", cores)
	}
	// Only pod-core links are cut: half the core links of each pod.
	if p.Cut != 8 {
		t.Errorf("%d links cut, want 8", p.Cut)
	}
	if math.Abs(p.Weight[0]-0.5) > 1e-9 {
		t.Errorf("weights %v", p.Weight)
	}
}

func TestHostsStayWithTheirSwitch(t *testing.T) {
	tp := fatTree(t, 6, 1_000_000)
	for _, want := range []int{2, 3, 5} {
		p := Split(tp, want, 100_000)
		if p.Parts != want {
			t.Errorf("%d parts asked, %d made: %s", want, p.Parts, p.Note)
		}
		for _, l := range tp.Links {
			if (tp.Nodes[l.A].Kind == topo.Host || tp.Nodes[l.B].Kind == topo.Host) && p.Of[l.A] != p.Of[l.B] {
				t.Fatalf("%d parts: host link %d-%d cut", want, l.A, l.B)
			}
		}
		for k, w := range p.Weight {
			if w < 0.7/float64(want) || w > 1.3/float64(want) {
				t.Errorf("%d parts: part %d has %.3f of the weight", want, k, w)
			}
		}
	}
}

func TestShortLinksAreNotCut(t *testing.T) {
	// Short aggregation-core links: each core joins the aggregation
	// switches it links to, and the parts are cut between those and the
	// edge switches instead.
	tp := fatTree(t, 4, 1_000_000)
	for i := range tp.Links {
		if tp.Nodes[tp.Links[i].A].Tier == 3 || tp.Nodes[tp.Links[i].B].Tier == 3 {
			tp.Links[i].Delay = 50_000
		}
	}
	p := Split(tp, 2, 100_000)
	if p.Parts != 2 || p.Lookahead != 1_000_000 {
		t.Fatalf("parts %d, lookahead %d", p.Parts, p.Lookahead)
	}
	for _, l := range tp.Links {
		if l.Delay < 100_000 && p.Of[l.A] != p.Of[l.B] {
			t.Fatalf("short link %d-%d cut", l.A, l.B)
		}
	}
	// Every switch link short: one part, and a note that says why.
	for i := range tp.Links {
		tp.Links[i].Delay = 50_000
	}
	p = Split(tp, 2, 100_000)
	if p.Parts != 1 || p.Note == "" {
		t.Fatalf("parts %d, note %q", p.Parts, p.Note)
	}
	t.Log(p.Note)
}

func TestSplitIsAFunctionOfItsInputs(t *testing.T) {
	f, err := os.Open("../scenario/data/fat320.topo.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tp, err := topo.ParseNS3(f, "fat320")
	if err != nil {
		t.Fatal(err)
	}
	a, b := Split(tp, 2, 100_000), Split(tp, 2, 100_000)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two splits differ")
	}
	if a.Parts != 2 || a.Lookahead != 1_000_000 {
		t.Fatalf("parts %d, lookahead %d", a.Parts, a.Lookahead)
	}
	// The file has no tiers: they come from the graph. Its five pods of
	// 64 hosts split two and a half each way.
	for k, w := range a.Weight {
		if math.Abs(w-0.5) > 0.03 {
			t.Errorf("part %d has %.3f of the weight", k, w)
		}
	}
	t.Logf("fat320 in 2: weights %.3f, %d links cut", a.Weight, a.Cut)
}

func TestOnePart(t *testing.T) {
	tp := fatTree(t, 4, 1_000_000)
	p := Split(tp, 1, 100_000)
	if p.Parts != 1 || p.Lookahead != 0 || p.Cut != 0 {
		t.Fatalf("%+v", p)
	}
	star, err := topo.Star(topo.StarOptions{N: 4, Rate: 100e9, Delay: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	if p := Split(star, 2, 100_000); p.Parts != 1 || p.Note == "" {
		t.Fatalf("star: parts %d, note %q", p.Parts, p.Note)
	}
}

// TestHostPortsCountTwice weighs two switches, one with two hosts and one
// with one: a host's port counts twice a switch's (hostFactor), so the
// first part holds 2x(200+100)+100 of 2x(200+100)+100 + (200+100)+100,
// where counting every port alike would give it 500 of 800.
func TestHostPortsCountTwice(t *testing.T) {
	const file = "5 2 4\n3 4\n0 3 100Gbps 1000ns 0\n1 3 100Gbps 1000ns 0\n2 4 100Gbps 1000ns 0\n3 4 100Gbps 1000ns 0\n"
	tp, err := topo.ParseNS3(strings.NewReader(file), "two-switches")
	if err != nil {
		t.Fatal(err)
	}
	p := Split(tp, 2, 100_000)
	if p.Parts != 2 || p.Of[3] == p.Of[4] {
		t.Fatalf("parts %d, switches in parts %d and %d", p.Parts, p.Of[3], p.Of[4])
	}
	if want := 700.0 / 1100; math.Abs(p.Weight[p.Of[3]]-want) > 1e-9 {
		t.Errorf("the two-host switch's part weighs %.4f, want %.4f", p.Weight[p.Of[3]], want)
	}
}
