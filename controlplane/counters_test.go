package controlplane

import (
	"context"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/p4"
)

// rcm.p4's counters read as zero before any packet; a counter that is not
// in the P4Info, and a cell beyond the counter, are refused.
func TestCounters(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := startSwitch(ctx, t, nil, nil, nil)

	packets, bytes, err := s.Counter(ctx, p4.CounterRxFrames, 0)
	if err != nil || packets != 0 || bytes != 0 {
		t.Errorf("Counter(%s, 0) = %d, %d, %v; want 0, 0, nil", p4.CounterRxFrames, packets, bytes, err)
	}
	c, err := s.counter(p4.CounterRxFrames)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := s.Counters(ctx, p4.CounterRxFrames)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(cells)) != c.Size {
		t.Errorf("Counters(%s) read %d cells, the P4Info says %d", p4.CounterRxFrames, len(cells), c.Size)
	}
	for i, cell := range cells {
		if cell != (CounterCell{Index: int64(i)}) {
			t.Errorf("Counters(%s)[%d] = %+v", p4.CounterRxFrames, i, cell)
			break
		}
	}
	if _, _, err := s.Counter(ctx, "RcmIngress.nosuch", 0); err == nil {
		t.Error("a counter not in the P4Info was read")
	}
	if _, err := s.Counters(ctx, "RcmIngress.nosuch"); err == nil {
		t.Error("a counter not in the P4Info was read")
	}
	for _, i := range []int64{-1, c.Size} {
		if _, _, err := s.Counter(ctx, p4.CounterRxFrames, i); err == nil {
			t.Errorf("cell %d of %s (size %d) was read", i, p4.CounterRxFrames, c.Size)
		}
	}
}
