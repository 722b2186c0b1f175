package workload

import (
	"math"
	"slices"
	"testing"
)

// TestHotSpotRCM runs the RCM paper's setting, 432 hosts at 60% load, long
// enough for about 470k flows, so that the hot share (0.15) has a standard
// error of 0.00052 and the 1.5% tolerance (0.00225) is over 4 of them.
func TestHotSpotRCM(t *testing.T) {
	o := HotSpotOptions{
		Hosts: hostRange(0, 432), CDF: mustBuiltin(t, "websearch"), Load: 0.6,
		HostRate: 100e9, Start: 1e9, Duration: 250e9, Seed: 2024, Priority: 3,
	}
	flows, err := HotSpot(o)
	if err != nil {
		t.Fatal(err)
	}
	checkSortedIDs(t, flows)
	hot, err := HotSpotHosts(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(hot) != 54 {
		t.Fatalf("%d hot hosts, want 54 (12.5%% of 432)", len(hot))
	}
	if !slices.IsSorted(hot) {
		t.Errorf("hot hosts %v not in the order of Hosts", hot)
	}
	isHot := map[int]bool{}
	for _, h := range hot {
		isHot[h] = true
	}
	nHot, bytes := 0, 0.0
	hotDst := map[int]bool{}
	for _, f := range flows {
		bytes += float64(f.Size)
		switch {
		case f.Src == f.Dst || f.Priority != 3 || f.Start < o.Start || f.Start >= o.Start+o.Duration:
			t.Fatalf("bad flow %+v", f)
		case f.Class == "hot":
			nHot++
			hotDst[f.Dst] = true
			if !isHot[f.Dst] {
				t.Fatalf("hot flow %+v to a host that is not hot", f)
			}
		case f.Class != "background":
			t.Fatalf("flow %+v has class %q", f, f.Class)
		}
	}
	share := float64(nHot) / float64(len(flows))
	t.Logf("%d flows, %.4f hot, %d hot hosts", len(flows), share, len(hot))
	if math.Abs(share-0.15) > 0.015*0.15 {
		t.Errorf("hot share %.4f, want 0.15 within 1.5%%", share)
	}
	if len(hotDst) != len(hot) {
		t.Errorf("hot flows reach %d hosts, want all %d hot hosts", len(hotDst), len(hot))
	}
	load := bytes * 8 / (432 * o.HostRate * float64(o.Duration) / 1e12)
	if math.Abs(load-0.6) > 0.03*0.6 {
		t.Errorf("offered load %.4f, want 0.6 within 3%%", load)
	}

	// Explicit defaults give the same flows; another seed other hot hosts.
	o.HotFraction, o.HotHosts = DefaultHotFraction, DefaultHotHosts
	again, err := HotSpot(o)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(flows, again) {
		t.Error("explicit defaults give other flows than zero values")
	}
	o.Seed++
	other, err := HotSpotHosts(o)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(hot, other) {
		t.Error("seeds 2024 and 2025 choose the same hot hosts")
	}
}

func TestHotSpotOptions(t *testing.T) {
	tests := []struct {
		name      string
		hosts     int
		fraction  float64
		hotHosts  float64
		wantHot   int
		wantShare float64 // of flows sent by non-hot hosts that are hot
	}{
		{"one hot host", 10, 0.5, 0.01, 1, 0.5},
		{"rounding", 10, 0.3, 0.125, 1, 0.3}, // 1.25 hosts round to 1
		{"rounding up", 12, 0.3, 0.125, 2, 0.3},
		{"all hot", 8, 1, 1, 8, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := HotSpotOptions{
				Hosts: hostRange(100, tt.hosts), CDF: mustBuiltin(t, "googlerpc"), Load: 0.5, HostRate: 10e9,
				Duration: 20e9, Seed: 5, HotFraction: tt.fraction, HotHosts: tt.hotHosts,
			}
			hot, err := HotSpotHosts(o)
			if err != nil {
				t.Fatal(err)
			}
			if len(hot) != tt.wantHot {
				t.Fatalf("%d hot hosts, want %d", len(hot), tt.wantHot)
			}
			flows, err := HotSpot(o)
			if err != nil {
				t.Fatal(err)
			}
			isHot := map[int]bool{}
			for _, h := range hot {
				isHot[h] = true
			}
			var cold, coldHot, hotSrcHot int
			for _, f := range flows {
				if f.Src == f.Dst {
					t.Fatalf("flow %+v to itself", f)
				}
				if f.Class == "hot" && !isHot[f.Dst] {
					t.Fatalf("hot flow %+v to a host that is not hot", f)
				}
				switch {
				case !isHot[f.Src]:
					cold++
					if f.Class == "hot" {
						coldHot++
					}
				case f.Class == "hot":
					hotSrcHot++
				}
			}
			if cold > 0 {
				share := float64(coldHot) / float64(cold)
				if math.Abs(share-tt.wantShare) > 0.05 {
					t.Errorf("%.3f of %d flows from hosts that are not hot are hot, want %g", share, cold, tt.wantShare)
				}
			}
			// A lone hot host has nobody to send hot flows to.
			if tt.wantHot == 1 && hotSrcHot != 0 {
				t.Errorf("the only hot host sent %d hot flows", hotSrcHot)
			}
			if tt.fraction == 1 && tt.wantHot > 1 && hotSrcHot == 0 {
				t.Error("hot hosts sent no hot flows to each other")
			}
		})
	}
}

func TestHotSpotErrors(t *testing.T) {
	good := func() HotSpotOptions {
		return HotSpotOptions{Hosts: hostRange(0, 16), CDF: mustBuiltin(t, "websearch"), Load: 0.5, HostRate: 100e9, Duration: 1e9}
	}
	tests := []struct {
		name   string
		modify func(*HotSpotOptions)
		want   []string
	}{
		{"hot fraction", func(o *HotSpotOptions) { o.HotFraction = 1.5 }, []string{"HotFraction 1.5"}},
		{"negative hot fraction", func(o *HotSpotOptions) { o.HotFraction = -0.1 }, []string{"HotFraction -0.1"}},
		{"hot hosts", func(o *HotSpotOptions) { o.HotHosts = 2 }, []string{"HotHosts 2"}},
		{"load", func(o *HotSpotOptions) { o.Load = -1 }, []string{"Load -1"}},
		{"hosts", func(o *HotSpotOptions) { o.Hosts = []int{4, 4} }, []string{"Hosts[1]", "already"}},
		{"priority", func(o *HotSpotOptions) { o.Priority = 9 }, []string{"Priority 9"}},
		{"duration", func(o *HotSpotOptions) { o.Duration = -1 }, []string{"Duration -1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := good()
			tt.modify(&o)
			_, err := HotSpot(o)
			wantErr(t, err, append([]string{"workload: HotSpot: "}, tt.want...)...)
		})
	}
	if _, err := HotSpot(good()); err != nil {
		t.Fatalf("the base options fail: %v", err)
	}
	_, err := HotSpotHosts(HotSpotOptions{Hosts: hostRange(0, 4), HotHosts: -1})
	wantErr(t, err, "workload: HotSpotHosts: HotHosts -1")
}
