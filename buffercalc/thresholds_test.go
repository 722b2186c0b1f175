package buffercalc

import (
	"errors"
	"math"
	"testing"
)

// paper is the DCQCN paper's Trident II: B = 12 MB, n = 32, 8 priorities,
// t_flight = 22.4 KB, 1500 B MTU.
var paper = Buffer{Size: 12e6, Ports: 32, Priorities: 8, Headroom: 22400, MTU: 1500}

func TestPaperStaticThresholds(t *testing.T) {
	st := paper.Static()
	if got := FormatKB(st.XOFF); got != "24.47 KB" {
		t.Errorf("t_PFC = %s, the paper prints 24.47 KB", got)
	}
	if got := FormatKB(st.XON); got != "21.47 KB" {
		t.Errorf("XON = %s, want t_PFC - 2 MTU = 21.47 KB", got)
	}
	// The paper prints 0.85 KB; t_PFC / n gives 0.76 KB (see the package doc).
	if got := FormatKB(st.ECN); got != "0.76 KB" {
		t.Errorf("static t_ECN bound = %s, want 0.76 KB", got)
	}
	if st.ECN >= paper.MTU {
		t.Errorf("static t_ECN bound %g B should be under one MTU", st.ECN)
	}
}

func TestPaperDynamicThresholds(t *testing.T) {
	d := paper.Dynamic(8)
	if got := FormatKB(d.ECN); got != "21.75 KB" {
		t.Errorf("t_ECN bound at beta 8 = %s, the paper prints 21.75 KB", got)
	}
	// At the bound the worst-case buffer (s = p n t_ECN) leaves t_PFC = n t_ECN:
	// the ingress queue feeding all n egress queues reaches XOFF just as they
	// all reach t_ECN.
	if want := float64(paper.Ports) * d.ECN; math.Abs(d.XOFFAtECN-want) > 1e-6 {
		t.Errorf("t_PFC at the worst case = %g, want n t_ECN = %g", d.XOFFAtECN, want)
	}
	if got := paper.DynamicXOFF(8, 0); got != d.XOFFEmpty || got != 8*paper.Shared()/8 {
		t.Errorf("t_PFC with an empty buffer = %g, want %g", got, 8*paper.Shared()/8)
	}
	if got := paper.DynamicXOFF(8, 2*paper.Size); got != 0 {
		t.Errorf("t_PFC with the buffer over-full = %g, want 0", got)
	}
}

func TestDynamicECNGrowsWithBetaTowardsStaticXOFF(t *testing.T) {
	prev := 0.0
	for _, b := range StandardBetas {
		e := paper.Dynamic(b).ECN
		if e <= prev {
			t.Fatalf("t_ECN bound not increasing at beta %g: %g after %g", b, e, prev)
		}
		prev = e
	}
	if limit := paper.Static().XOFF; prev >= limit {
		t.Errorf("t_ECN bound %g should stay under its limit (B - p n t_flight)/(p n) = %g", prev, limit)
	}
}

func TestMinBetaForECN(t *testing.T) {
	beta, ok := paper.MinBetaForECN(paper.MTU)
	if !ok {
		t.Fatal("no beta found for a one-MTU t_ECN on the paper's switch")
	}
	if got := paper.Dynamic(beta).ECN; math.Abs(got-paper.MTU) > 1e-6 {
		t.Errorf("at beta %g the t_ECN bound is %g, want exactly one MTU", beta, got)
	}
	if _, ok := paper.MinBetaForECN(paper.Static().XOFF); ok {
		t.Error("a t_ECN equal to the static t_PFC should be out of reach of any beta")
	}
}

func TestBufferValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Buffer)
		field string
	}{
		{"zero buffer", func(b *Buffer) { b.Size = 0 }, "buffer"},
		{"negative buffer", func(b *Buffer) { b.Size = -1e6 }, "buffer"},
		{"no ports", func(b *Buffer) { b.Ports = 0 }, "ports"},
		{"nine priorities", func(b *Buffer) { b.Priorities = 9 }, "priorities"},
		{"no priorities", func(b *Buffer) { b.Priorities = 0 }, "priorities"},
		{"zero headroom", func(b *Buffer) { b.Headroom = 0 }, "headroom"},
		{"zero MTU", func(b *Buffer) { b.MTU = 0 }, "mtu"},
		{"headroom fills the buffer", func(b *Buffer) { b.Headroom = b.Size / float64(b.Ports*b.Priorities) }, "headroom"},
		{"headroom larger than the buffer", func(b *Buffer) { b.Headroom = 2 * b.Size }, "headroom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := paper
			tt.edit(&b)
			err := b.Validate()
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Fatalf("Validate() = %v, want a FieldError on %q", err, tt.field)
			}
		})
	}
	if err := paper.Validate(); err != nil {
		t.Errorf("the paper's switch fails validation: %v", err)
	}
}
