package rcm

import (
	"math"
	"strings"
	"testing"
)

func flow(i int) FlowID {
	return FlowID(0x9E3779B9 * uint32(i+1))
}

func TestDefaultsValidate(t *testing.T) {
	p := Defaults()
	if err := p.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if got := p.Gd * FbMax; math.Abs(got-0.5) > 1e-12 {
		t.Errorf("F_bmax G_d = %g, the paper fixes 1/2", got)
	}
}

func TestValidateNamesField(t *testing.T) {
	cases := []struct {
		field string
		edit  func(*Params)
	}{
		{"qeq", func(p *Params) { p.QEq = 0 }},
		{"qeq", func(p *Params) { p.QEq = math.NaN() }},
		{"w", func(p *Params) { p.W = 1.5 }},
		{"gd", func(p *Params) { p.Gd = 1 }},
		{"sample_bytes", func(p *Params) { p.MinSampleBytes = 2 * p.SampleBytes }},
		{"cam_depth", func(p *Params) { p.CAMDepth = MaxCAMDepth + 1 }},
		{"cn_hold", func(p *Params) { p.CNHold = 0 }},
		{"pin_idle", func(p *Params) { p.PinIdle = -1 }},
		{"cfr_sample_every", func(p *Params) { p.CFRSampleEvery = 0 }},
		{"cam_min_hits", func(p *Params) { p.CAMMinHits = p.CAMDepth + 1 }},
		{"window", func(p *Params) { p.Window = -1 }},
		{"min_share", func(p *Params) { p.MinShare = 0 }},
		{"region_cns", func(p *Params) { p.RegionCNs = 0 }},
		{"ref_rate", func(p *Params) { p.RefRate = 0 }},
	}
	for _, c := range cases {
		p := Defaults()
		c.edit(&p)
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: got %v, want an error naming it", c.field, err)
		}
	}
}

func TestDetectorEquation1(t *testing.T) {
	p := Defaults()
	d := NewDetector(&p, p.RefRate)
	// No sample before SampleBytes have arrived.
	if d.Observe(p.SampleBytes-1, 50e3) {
		t.Fatal("sampled before the interval was up")
	}
	if !d.Observe(1, 50e3) {
		t.Fatal("no sample at the interval")
	}
	// F_b = (Q - Q_eq) + w_q (Q - Q_last), with Q_last 0.
	want := (50e3 - p.QEq) + p.Wq*50e3
	if d.Fb != want || !d.Congested() {
		t.Fatalf("Fb = %g, want %g (congested)", d.Fb, want)
	}
	if d.Q != FbMax {
		t.Errorf("Q = %d, want the saturated %d", d.Q, FbMax)
	}
	// Congestion shortens the next interval to MinSampleBytes.
	if !d.Observe(p.MinSampleBytes, 50e3) {
		t.Error("at the highest degree the interval should be MinSampleBytes")
	}
	// A queue at Q_eq that did not grow is not congested.
	d.Observe(p.SampleBytes, p.QEq)
	if d.Observe(p.SampleBytes, p.QEq); d.Congested() || d.Q != 0 {
		t.Errorf("queue steady at Q_eq: Fb %g Q %d, want no congestion", d.Fb, d.Q)
	}
}

func TestDetectorScalesWithRate(t *testing.T) {
	p := Defaults()
	d := NewDetector(&p, p.RefRate/4)
	if d.QEq() != p.QEq/4 {
		t.Errorf("Q_eq at a quarter of the rate = %g, want %g", d.QEq(), p.QEq/4)
	}
}

func TestQuantiseAndCombine(t *testing.T) {
	if Quantise(-5, 100) != 0 || Quantise(0, 100) != 0 {
		t.Error("no congestion must quantise to 0")
	}
	if Quantise(0.001, 100) != 1 {
		t.Error("any congestion must quantise to at least 1")
	}
	if Quantise(1e9, 100) != FbMax {
		t.Error("degrees past the maximum must saturate")
	}
	// Eq. 2: F_b' = (1-w) F_b + w F_br.
	if got := Combine(40, 20, 0.5); got != 30 {
		t.Errorf("Combine(40, 20, 0.5) = %d, want 30", got)
	}
	if got := Combine(40, 20, 0); got != 40 {
		t.Errorf("w = 0 must ignore the neighbour, got %d", got)
	}
}

// fill writes the given flows into the CAM in order.
func fill(c *CAM, ids ...FlowID) {
	for _, id := range ids {
		c.Add(id)
	}
}

func TestCAMFlowsAndHeavy(t *testing.T) {
	p := Defaults()
	p.CAMDepth, p.CAMMinHits = 16, 2
	c := NewCAM(&p, 1)
	// Half the entries one flow, the rest four flows evenly: the burst of
	// the paper's Figure 6.
	var ids []FlowID
	for i := 0; i < 8; i++ {
		ids = append(ids, flow(0), flow(1+i%4))
	}
	fill(&c, ids...)
	if got := c.Heavy(nil); len(got) != 1 || got[0] != flow(0) {
		t.Errorf("heavy hitters %v, want only flow 0", got)
	}
	if got := c.Flows(nil); len(got) != 5 {
		t.Errorf("contributors %v, want all 5 flows (2 entries or more each)", got)
	}
	if got := c.Share([]FlowID{flow(0)}); got != 0.5 {
		t.Errorf("share of flow 0 = %g, want 0.5", got)
	}
	// Four equal flows: contributors all, heavy hitters none.
	c.Reset()
	for i := 0; i < 16; i++ {
		c.Add(flow(i % 4))
	}
	if got := c.Heavy(nil); len(got) != 0 {
		t.Errorf("equal flows: heavy hitters %v, want none", got)
	}
	if got := c.Flows(nil); len(got) != 4 {
		t.Errorf("equal flows: contributors %v, want 4", got)
	}
	// A flow with one entry is no contributor (CAMMinHits 2 here).
	c.Reset()
	fill(&c, flow(7), flow(8), flow(8))
	if got := c.Flows(nil); len(got) != 1 || got[0] != flow(8) {
		t.Errorf("contributors %v, want flow 8 only", got)
	}
	// A lone flow takes nobody's share.
	c.Reset()
	fill(&c, flow(3), flow(3), flow(3))
	if got := c.Heavy(nil); len(got) != 0 {
		t.Errorf("lone flow: heavy hitters %v, want none", got)
	}
}

func TestCAMIsCyclic(t *testing.T) {
	p := Defaults()
	p.CAMDepth = 4
	c := NewCAM(&p, 1)
	fill(&c, flow(1), flow(1), flow(1), flow(1), flow(2), flow(2), flow(2))
	if c.Hits(flow(1)) != 1 || c.Hits(flow(2)) != 3 {
		t.Errorf("after wrapping: hits %d and %d, want 1 and 3", c.Hits(flow(1)), c.Hits(flow(2)))
	}
}

func TestCAMSamplingRate(t *testing.T) {
	p := Defaults()
	p.CFRSampleEvery = 4
	c := NewCAM(&p, 12345)
	n := 0
	const draws = 100000
	for i := 0; i < draws; i++ {
		if c.Due() {
			n++
		}
	}
	if got := float64(n) / draws; math.Abs(got-0.25) > 0.01 {
		t.Errorf("sampled %.3f of packets, want 1/4", got)
	}
	// Same seed, same draws.
	a, b := NewCAM(&p, 7), NewCAM(&p, 7)
	for i := 0; i < 1000; i++ {
		if a.Due() != b.Due() {
			t.Fatal("equal seeds drew differently")
		}
	}
}

func TestRecent(t *testing.T) {
	r := NewRecent(2)
	r.Add([]FlowID{flow(1)}, 100)
	r.Add([]FlowID{flow(2)}, 200)
	if !r.Contains(100, flow(1)) || r.Contains(101, flow(1)) {
		t.Error("flow 1 must expire after 100")
	}
	if !r.Any(150) || r.Any(201) {
		t.Error("Any: wrong")
	}
	// Full: a new flow replaces the one that expires first.
	r.Add([]FlowID{flow(3)}, 300)
	if r.Contains(50, flow(1)) || !r.Contains(250, flow(3)) || !r.Contains(150, flow(2)) {
		t.Errorf("replacement: live %v", r.Live(50, nil))
	}
	// Naming a flow again extends it.
	r.Add([]FlowID{flow(2)}, 400)
	if !r.Contains(350, flow(2)) {
		t.Error("flow 2 must last until 400")
	}
	if got := r.Live(350, nil); len(got) != 1 || got[0] != flow(2) {
		t.Errorf("live at 350: %v", got)
	}
	r.Clear()
	if r.Any(0) {
		t.Error("Clear left flows")
	}
}

func TestWindowCuts(t *testing.T) {
	p := Defaults()
	x := NewWindow(&p, p.RefRate)
	if x.Active || x.Wc != p.Window {
		t.Fatal("a new window must be off with W_c = W")
	}
	// The first cut starts from the measured share; F_bmax halves it.
	x.Cut(0, FbMax, 0.5)
	if !x.Active || x.Wc != p.Window/4 {
		t.Fatalf("W_c = %g, want W/4 (share 1/2, halved)", x.Wc)
	}
	// Further cuts compound, down to MinShare.
	for i := 0; i < 20; i++ {
		x.Cut(0, FbMax, 1)
	}
	if x.Wc != p.MinShare*p.Window {
		t.Errorf("W_c = %g, want the floor %g", x.Wc, p.MinShare*p.Window)
	}
	// Recovery halves the gap to W each step and reports when back.
	steps := 0
	for !x.Recover() {
		steps++
		if steps > 10 {
			t.Fatal("W_c never came back")
		}
	}
	if x.Wc < p.Window*(1-p.MinShare) {
		t.Errorf("recovered to %g, want within MinShare of W", x.Wc)
	}
	x.Exit()
	if x.Active || x.Wc != p.Window {
		t.Error("Exit must turn RCC off with W_c = W")
	}
}

func TestWindowLimitsHarmfulShare(t *testing.T) {
	p := Defaults()
	x := NewWindow(&p, p.RefRate)
	x.Cut(0, 0, 0.25) // W_c = W/4
	const frame = 1000.0
	var sentC, sentNC float64
	// Both kinds always waiting: the scheduler sends harmful packets when
	// the window allows and PreferHarmful says so.
	now := int64(0)
	for i := 0; i < 4000; i++ {
		h := x.MayHarmful(now) && x.PreferHarmful()
		x.OnSent(frame, h)
		if h {
			sentC += frame
		} else {
			sentNC += frame
		}
		now += 80_000 // 1000 B at 100 Gb/s
	}
	if got := sentC / (sentC + sentNC); math.Abs(got-0.25) > 0.03 {
		t.Errorf("harmful share %.3f, want W_c/W = 0.25", got)
	}
	// Harmful only: W_c per window, then wait for the window's end.
	y := NewWindow(&p, p.RefRate)
	y.Cut(0, 0, 0.5)
	sent, now := 0.0, int64(0)
	end := y.period * 10
	for now < end {
		if !y.MayHarmful(now) {
			now = y.HarmfulAt(now)
			continue
		}
		y.OnSent(frame, true)
		sent += frame
		now += 80_000
	}
	rate := sent * 8 / (float64(end) / 1e12)
	if math.Abs(rate/p.RefRate-0.5) > 0.06 {
		t.Errorf("harmful-only rate %.1f Gb/s, want about half of 100", rate/1e9)
	}
}

func TestPins(t *testing.T) {
	pins := NewPins(4, 100)
	if pins.Lookup(0, 7) != -1 {
		t.Error("empty table found a pin")
	}
	pins.Pin(0, 7, 3)
	if got := pins.Lookup(50, 7); got != 3 {
		t.Errorf("pin: got port %d, want 3", got)
	}
	// A lookup refreshes the pin; idleness past PinIdle ends it.
	if got := pins.Lookup(140, 7); got != 3 {
		t.Errorf("refreshed pin: got %d, want 3", got)
	}
	if got := pins.Lookup(300, 7); got != -1 || pins.Len() != 0 {
		t.Errorf("idle pin: got %d (len %d), want expired", got, pins.Len())
	}
	// A colliding flow takes the slot; the other goes back to ECMP.
	pins.Pin(0, 7, 3)
	pins.Pin(0, 7+16, 5)
	if pins.Lookup(1, 7) != -1 || pins.Lookup(1, 7+16) != 5 {
		t.Error("collision: the newer pin must win the slot")
	}
}

// TestWindowDefaultPacesFinely: with the default W (8 KB) harmful packets
// go in runs of a few frames, so that others never wait long behind
// them. The window counts what the port sent since it started: a flow
// that had the link alone for 4 us leaves a large W_nc behind it, and
// harmful packets arriving then may catch up to W_c/W of everything the
// window counted at once. With W = 8 KB the window restarts every eight
// frames and the catch-up is at most W_c; with a window of 64 KB (5 us
// at 100 Gb/s) it lets 16 harmful frames through back to back while the
// other flow waits.
func TestWindowDefaultPacesFinely(t *testing.T) {
	p := Defaults()
	x := NewWindow(&p, p.RefRate)
	x.Cut(0, 0, 0.25) // W_c = W/4
	// Frames of 1000 bytes, each 80 ns on a 100 Gb/s link.
	const frame, gap = 1000.0, int64(80_000)
	now := int64(0)
	for range 50 { // the other flow alone
		x.MayHarmful(now)
		x.OnSent(frame, false)
		now += gap
	}
	// Both waiting from now on, for 4 us.
	run, longest, harmful := 0, 0, 0
	var first16 int
	for i := range 50 {
		h := x.MayHarmful(now) && x.PreferHarmful()
		x.OnSent(frame, h)
		if h {
			harmful++
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
		if i == 15 {
			first16 = harmful
		}
		now += gap
	}
	if longest > 3 || first16 > 6 {
		t.Errorf("W = %g bytes: harmful runs of up to %d frames, %d of the first 16 frames harmful; want runs of at most 3 (W_c = 2 KB, the last frame starting below it) and about a quarter of the link from the start",
			p.Window, longest, first16)
	}
	if got := float64(harmful) / 50; got < 0.2 || got > 0.3 {
		t.Errorf("harmful share %.2f over 4 us; want W_c/W = 0.25", got)
	}
}
