package sim

import (
	"math"
	"testing"

	"github.com/p4rcm/p4rcm/dataplane"
	"github.com/p4rcm/p4rcm/dcqcn"
	"github.com/p4rcm/p4rcm/sim/topo"
	"github.com/p4rcm/p4rcm/sim/workload"
)

// pfcCycle is one PAUSE-to-RESUME stretch of an ingress queue in a run:
// its occupancy when the PAUSE went, the most it held before the RESUME,
// and what it held when the RESUME went; the shared buffer in use when
// the PAUSE went.
type pfcCycle struct {
	atPause, peak, atResume, sharedAtPause float64
	resumed                                bool
}

// frameBytes is a data frame of 1000 bytes of payload on the wire.
const frameBytes = 1000 + dataplane.RoCEHeaders + dataplane.EthOverhead

// pfcRun runs a 2:1 incast of PFC alone (no congestion control) on a
// star of three 100 Gb/s hosts, each sender 400 KB to host 2, event by
// event, and returns each ingress port's PAUSE/RESUME cycles as the
// switch sent them, by port, with the switch.
func pfcRun(t *testing.T, cfg Config) ([][]pfcCycle, *dataplane.Switch) {
	t.Helper()
	tp, err := topo.Star(topo.StarOptions{N: 3, Rate: 100e9, Delay: us})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seed, cfg.Topology, cfg.MTU, cfg.AckInterval, cfg.CC = 1, tp, 1000, 1, "none"
	cfg.DCQCN, cfg.PFC, cfg.RTO = dcqcn.Mellanox(), true, ms
	cfg.Flows = []workload.Flow{{Src: 0, Dst: 2, Size: 400_000, Priority: 3}, {Src: 1, Dst: 2, Size: 400_000, Priority: 3}}
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var sw *dataplane.Switch
	for _, s := range n.switches {
		if s != nil {
			sw = s.sw
		}
	}
	for _, h := range n.hosts {
		if h != nil {
			h.scheduleStart()
		}
	}
	pt := n.parts[0]
	cycles := make([][]pfcCycle, sw.NumPorts())
	pauses := make([]int64, sw.NumPorts())
	resumes := make([]int64, sw.NumPorts())
	before := make([]float64, sw.NumPorts())
	shared := 0.0
	for pt.q.Step() && pt.done < len(n.flows) {
		now := pt.q.Now()
		for p := range sw.NumPorts() {
			st := sw.Stats(p, now)
			occ := sw.IngressBytes(p, 3)
			cs := cycles[p]
			if st.PausesSent > pauses[p] && (len(cs) == 0 || cs[len(cs)-1].resumed) {
				// The PAUSE went as the frame that crossed the
				// threshold arrived, which the same event may have
				// sent on at once: count it on what was there before.
				cs = append(cs, pfcCycle{atPause: before[p] + frameBytes, sharedAtPause: shared})
			}
			if len(cs) > 0 && !cs[len(cs)-1].resumed {
				c := &cs[len(cs)-1]
				c.peak = max(c.peak, occ)
				if st.ResumesSent > resumes[p] {
					c.atResume, c.resumed = occ, true
				}
			}
			cycles[p] = cs
			pauses[p], resumes[p], before[p] = st.PausesSent, st.ResumesSent, occ
		}
		shared = sw.SharedUsed()
	}
	if pt.done != len(n.flows) {
		t.Fatalf("%d of %d flows completed", pt.done, len(n.flows))
	}
	return cycles, sw
}

// TestPFCThresholdsInARun: PFC as a run sees it, each of a switch's
// PAUSE and RESUME frames at the occupancy its thresholds give. With
// 1,082-byte frames (1000 bytes of payload) and XOFF = 50 KB, an ingress
// queue pauses its sender when the frame that takes it past XOFF
// arrives, at 47 frames (46 in the shared buffer, the 47th in the
// headroom); the frames the sender had in flight then go into the
// headroom, never past the port's headroom (buffercalc's t_flight); and
// it resumes when it has drained to XOFF less the XON offset (two
// frames): 44 frames. With a shared buffer too small for XOFF, the
// pause comes when a frame would take the shared buffer past what the
// headroom reserved for every port leaves of it.
func TestPFCThresholdsInARun(t *testing.T) {
	const frame = frameBytes
	t.Run("xoff", func(t *testing.T) {
		const xoff, xon = 50e3, 2.0 * frame
		cycles, sw := pfcRun(t, Config{Buffer: 4e6, PFCXOFF: xoff})
		headroom := HeadroomFor(100e9, us, 1000)
		wantPause := (math.Floor(xoff/frame) + 1) * frame
		wantResume := math.Floor((xoff-xon)/frame) * frame
		n := 0
		for p, cs := range cycles {
			for i, c := range cs {
				n++
				if c.atPause != wantPause || c.resumed && c.atResume != wantResume {
					t.Errorf("port %d, cycle %d: PAUSE at %.0f bytes, RESUME at %.0f; want %.0f (past XOFF %.0f) and %.0f (XOFF less the XON offset %.0f)",
						p, i, c.atPause, c.atResume, wantPause, xoff, wantResume, xon)
				}
				if used := c.peak - (wantPause - frame); used <= frame || used > headroom {
					t.Errorf("port %d, cycle %d: %.0f bytes past the shared part after the PAUSE; want the frames in flight, more than one and within the headroom %.0f", p, i, used, headroom)
				}
			}
			st := sw.Stats(p, 0)
			most := 0.0
			for _, c := range cs {
				most = max(most, c.peak-(wantPause-frame))
			}
			if st.MaxHeadroomBytes[3] != most || st.Drops != [len(st.Drops)]int64{} {
				t.Errorf("port %d: the headroom held %.0f bytes at most, drops %v; want the %.0f beyond the shared part, no drop", p, st.MaxHeadroomBytes[3], st.Drops, most)
			}
		}
		if n < 4 {
			t.Errorf("%d PAUSE cycles; want the incast to pause both senders repeatedly", n)
		}
		t.Logf("%d cycles; PAUSE at %.0f, RESUME at %.0f bytes, headroom %.0f", n, wantPause, wantResume, headroom)
	})
	t.Run("shared buffer", func(t *testing.T) {
		headroom := HeadroomFor(100e9, us, 1000)
		reserved := 3 * headroom // three ports, one lossless priority
		const pool = 30e3        // shared buffer left after the headroom
		cycles, _ := pfcRun(t, Config{Buffer: reserved + pool, PFCXOFF: 1e6})
		n := 0
		for p, cs := range cycles {
			for i, c := range cs {
				n++
				// The pausing frame went into the headroom: the shared
				// buffer had no room for it.
				if c.sharedAtPause > pool || c.sharedAtPause+frame <= pool {
					t.Errorf("port %d, cycle %d: PAUSE with %.0f bytes of the shared buffer in use; want the last frame to fit in the %.0f headroom leaves, the next not", p, i, c.sharedAtPause, pool)
				}
			}
		}
		if n < 2 {
			t.Errorf("%d PAUSE cycles; want the shared buffer to pause the senders", n)
		}
	})
}
