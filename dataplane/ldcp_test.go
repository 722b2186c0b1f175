package dataplane

import (
	"fmt"
	"math"
	"testing"

	"github.com/p4rcm/p4rcm/ldcp"
)

// queued stands for no drop in the tests' tables.
const queued = DropReason(255)

// draftMarking is a 100 Gb/s port set up as LDCP's draft asks: its ECN
// curve K_min, K_max, P_max, WRED's K and buf_max, from the ldcp package's
// own preset so that the two cannot drift apart.
func draftMarking(t *testing.T) Marking {
	t.Helper()
	p := ldcp.Draft()
	scale := rate100G / p.RefRate
	return Marking{KMin: p.KMin * scale, KMax: p.KMax * scale, PMax: p.PMax, WREDK: p.K * scale, BufMax: p.BufMax * scale}
}

// offer fills port 1's queue (priority prio) to depth bytes with
// ECN-capable 1000 B packets, then offers one packet of codepoint ecn and
// reports the reason it was dropped for, or queued if it was not.
func offer(t *testing.T, m Marking, lossless bool, depth int, ecn uint8) DropReason {
	t.Helper()
	env := newFakeEnv(t)
	cfg := lossyConfig(2)
	cfg.Buffer = 100e6
	cfg.Ports[1].Marking = m
	prio := uint8(0)
	if lossless {
		prio = 3
		cfg.Lossless, cfg.PauseQuanta = 1<<3, 0xffff
		for i := range cfg.Ports {
			cfg.Ports[i].XOFF, cfg.Ports[i].Headroom = 50e6, 1e6
		}
	}
	s := mustNew(t, cfg, mapFIB{1: {1}}, env)
	for i := range depth / 1000 {
		s.Receive(0, 0, dataPkt(int32(i), 1, prio, 1000, ECT0))
	}
	if len(env.freed) != 0 || s.QueueBytes(1, int(prio)) != float64(depth) {
		t.Fatalf("filling to %d B: queue %g, %d dropped", depth, s.QueueBytes(1, int(prio)), len(env.freed))
	}
	s.Receive(1, 0, dataPkt(99, 1, prio, 1000, ecn))
	if len(env.freed) == 0 {
		return queued
	}
	st := s.Stats(1, 1)
	for r := range numDropReasons {
		if st.Drops[r] == 1 {
			return r
		}
	}
	t.Fatalf("a packet was freed but no egress drop counted: %+v", st.Drops)
	return queued
}

// TestDraftWRED: on a port configured as the draft says, a packet that is
// not ECN-capable (a first-RTT packet) is queued while q < K and dropped
// from q >= K, eq. (3); ECN-capable packets pass K and are dropped only
// past buf_max (section 2.1), the queue before the packet counting.
func TestDraftWRED(t *testing.T) {
	m := draftMarking(t)
	k, bufMax := int(m.WREDK), int(m.BufMax)
	if k != 40_000 || bufMax != 400_000 {
		t.Fatalf("the draft preset changed: K %d, buf_max %d; update the depths below", k, bufMax)
	}
	for _, tc := range []struct {
		depth int
		ecn   uint8
		want  DropReason
	}{
		{0, NotECT, queued},
		{k - 1000, NotECT, queued},
		{k, NotECT, DropWRED},
		{k + 1000, NotECT, DropWRED},
		{bufMax + 1000, NotECT, DropWRED},
		{k, ECT0, queued},
		{k + 1000, ECT1, queued},
		{bufMax, ECT0, queued},
		{bufMax + 1000, ECT0, DropBufMax},
		{bufMax + 1000, CE, DropBufMax},
	} {
		t.Run(fmt.Sprintf("%d_ecn%d", tc.depth, tc.ecn), func(t *testing.T) {
			if got := offer(t, m, false, tc.depth, tc.ecn); got != tc.want {
				t.Errorf("q = %d B, ECN %d: drop %v, want %v ", tc.depth, tc.ecn, got, tc.want)
			}
		})
	}
}

// TestDraftBufMaxLossless: buf_max applies to lossy priorities only; a
// lossless one is held below it by PFC, and WRED still applies there.
func TestDraftBufMaxLossless(t *testing.T) {
	m := draftMarking(t)
	if got := offer(t, m, true, int(m.BufMax)+10_000, ECT0); got != queued {
		t.Errorf("lossless ECN-capable packet past buf_max: drop %v, want queued", got)
	}
	if got := offer(t, m, true, int(m.WREDK), NotECT); got != DropWRED {
		t.Errorf("lossless non-ECT packet at K: drop %v, want wred", got)
	}
	m.BufMax = 0
	if got := offer(t, m, false, 2_000_000, ECT0); got != queued {
		t.Errorf("buf_max 0: drop %v, want none", got)
	}
}

// TestDraftECNCurve: on the same port ECN-capable packets are marked with
// the draft's probability: 0 below K_min, (q - K_min)/(K_max - K_min) P_max
// from K_min, 1 from K_max; marking is judged on the queue a packet leaves
// behind. Within 4.5 standard deviations of n draws.
func TestDraftECNCurve(t *testing.T) {
	m := draftMarking(t)
	const n = 20_000
	for _, depth := range []int{0, 4000, 5000, 6000, 10_000, 15_000, 19_000, 20_000, 21_000, 39_000} {
		t.Run(fmt.Sprint(depth), func(t *testing.T) {
			q := float64(depth)
			var want float64
			switch {
			case q < m.KMin:
				want = 0
			case q < m.KMax:
				want = (q - m.KMin) / (m.KMax - m.KMin) * m.PMax
			default:
				want = 1
			}
			got, _, _ := markFraction(t, m, 1, depth, n, ECT0)
			tol := 4.5 * math.Sqrt(want*(1-want)/n)
			if math.Abs(got-want) > tol || (want == 0 || want == 1) && got != want {
				t.Errorf("q = %d B: marked %.4f, want %.4f +- %.4f", depth, got, want, tol)
			}
		})
	}
}
