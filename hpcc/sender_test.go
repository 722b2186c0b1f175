package hpcc

import (
	"errors"
	"math"
	"testing"
	"unsafe"
)

const (
	gbps = 1e9
	us   = int64(1e6)
)

// path is a 100 Gb/s sender on a fabric whose longest RTT is 12 us.
var path = Path{LineRate: 100 * gbps, BaseRTT: 12 * us, Window: 150_000}

// exact is NS3 with the telemetry's finest units (128 bytes sent, 80
// queued), fine enough that the figures below hold to 0.1%.
func exact() *Params {
	p := NS3()
	p.INTMulti = 1
	return &p
}

// hop is a sample of a port of rate gbps at time t (ps) that had sent
// tx bytes and holds q bytes.
func hop(t, tx, q int64, rate float64) Hop {
	return Hop{Time: t, TxBytes: tx, QLen: q, Rate: rate * gbps}
}

// busy returns the bytes a port of rate gbps sends in d picoseconds at
// utilisation u.
func busy(rate, u float64, d int64) int64 { return int64(rate * gbps * u * float64(d) / 8e12) }

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }

// tol is the agreement the telemetry's units allow.
const tol = 1e-3

func TestFirstAckStartsTheRecord(t *testing.T) {
	s := NewSender(exact(), path)
	if s.OnAck(1000, 5000, []Hop{hop(0, 0, 0, 100)}) {
		t.Fatal("the first ACK changed the rate; it has nothing to take differences from")
	}
	if s.Rate() != 100*gbps {
		t.Fatalf("rate %g, want line rate", s.Rate())
	}
}

// TestFullUpdate checks one full update by hand: a hop busy at 120% of its
// rate for one base RTT moves U from 1 to 1.2 (the moving average takes the
// whole new sample when tau = T), and the rate becomes R_c / (1.2 / 0.95)
// + R_AI.
func TestFullUpdate(t *testing.T) {
	p := exact()
	s := NewSender(p, path)
	s.OnAck(1000, 5000, []Hop{hop(0, 0, 0, 100)})
	T := path.BaseRTT
	if !s.OnAck(6000, 9000, []Hop{hop(T, busy(100, 1.2, T), 0, 100)}) {
		t.Fatal("a full update at U = 1.2 left the rate as it was")
	}
	want := 100*gbps/(1.2/0.95) + p.RAI
	if !near(s.Rate(), want, tol) || !near(s.Utilisation(), 1.2, tol) {
		t.Errorf("rate %.6g, U %.6g; want %.6g, 1.2", s.Rate(), s.Utilisation(), want)
	}
}

// TestMostUtilisedHop is HPCC's choice of the bottleneck: with a hop at
// 50% and the next at 150%, the rate follows the second. A sender that read
// the first hop only would not cut at all.
func TestMostUtilisedHop(t *testing.T) {
	s := NewSender(exact(), path)
	s.OnAck(1000, 5000, []Hop{hop(0, 0, 0, 400), hop(0, 0, 0, 100)})
	T := path.BaseRTT
	s.OnAck(6000, 9000, []Hop{hop(T, busy(400, 0.5, T), 0, 400), hop(T, busy(100, 1.5, T), 0, 100)})
	if want := 100*gbps/(1.5/0.95) + s.ai; !near(s.Rate(), want, tol) {
		t.Errorf("rate %.6g Gb/s, want %.6g (the 150%% hop's)", s.Rate()/gbps, want/gbps)
	}
}

// TestQueueTerm: an idle-rate hop with a standing queue still counts as
// utilised, by qlen / (B T) with B T the window: a queue of one window
// alone is U = 1 (plus the link's own load).
func TestQueueTerm(t *testing.T) {
	s := NewSender(exact(), path)
	q := int64(path.Window)
	s.OnAck(1000, 5000, []Hop{hop(0, 0, q, 100)})
	T := path.BaseRTT
	s.OnAck(6000, 9000, []Hop{hop(T, busy(100, 0.5, T), q, 100)})
	if !near(s.Utilisation(), 1.5, tol) {
		t.Errorf("U %.6g, want 1.5 (0.5 of the link and a window's queue)", s.Utilisation())
	}
}

// TestFastReactKeepsTheReference: ACKs within the round react from the
// last full update's R_c without moving it, so a run of them does not
// compound; the next full update starts from R_c again.
func TestFastReactKeepsTheReference(t *testing.T) {
	s := NewSender(exact(), path)
	s.OnAck(1000, 50_000, []Hop{hop(0, 0, 0, 100)})
	T := path.BaseRTT
	tx := int64(0)
	var rates []float64
	for i := int64(1); i <= 3; i++ {
		// Within the round (ACK below 50 000): each sees the hop at 150%.
		tx += busy(100, 1.5, T/10)
		s.OnAck(1000+i*1000, 50_000, []Hop{hop(i*T/10, tx, 0, 100)})
		rates = append(rates, s.Rate())
	}
	if rates[0] >= 100*gbps {
		t.Fatalf("fast reaction did not cut: %v", rates)
	}
	// From the same reference and a rising U each cuts a little deeper,
	// but never compounds: the third is far from three cuts in a row.
	third := 100 * gbps / math.Pow(1.5/0.95, 3)
	if rates[2] < 2*third || s.rc != 100*gbps {
		t.Errorf("rates %v, reference %g: fast reactions compounded or moved R_c", rates, s.rc)
	}
	np := NS3()
	np.INTMulti, np.FastReact = 1, false
	slow := NewSender(&np, path)
	slow.OnAck(1000, 50_000, []Hop{hop(0, 0, 0, 100)})
	if slow.OnAck(2000, 50_000, []Hop{hop(T/10, busy(100, 1.5, T/10), 0, 100)}) {
		t.Error("without FastReact an ACK within the round changed the rate")
	}
}

// TestAdditiveStages: with MIThresh 5, a hop below eta gets five additive
// steps before a multiplicative one.
func TestAdditiveStages(t *testing.T) {
	p := exact()
	p.MIThresh = 5
	s := NewSender(p, Path{LineRate: 100 * gbps, BaseRTT: 12 * us, Window: 150_000})
	s.rate, s.rc = 50*gbps, 50*gbps
	T := path.BaseRTT
	seq, tx := int64(1000), int64(0)
	s.OnAck(seq, seq+1000, []Hop{hop(0, 0, 0, 100)})
	var got []float64
	for i := int64(1); i <= 6; i++ {
		seq += 2000
		tx += busy(100, 0.5, T)
		s.OnAck(seq, seq+1000, []Hop{hop(i*T, tx, 0, 100)})
		got = append(got, s.Rate()/gbps)
	}
	for i := 0; i < 5; i++ {
		if want := 50 + float64(i+1)*p.RAI/gbps; !near(got[i], want, 1e-9) {
			t.Fatalf("step %d: %.4f Gb/s, want %.4f (additive): %v", i+1, got[i], want, got)
		}
	}
	if got[5] <= got[4]+2*p.RAI/gbps {
		t.Errorf("sixth step %.4f after %.4f: want the multiplicative step towards eta", got[5], got[4])
	}
}

// TestMultiRate: per-hop reference rates, the flow sending at the least.
func TestMultiRate(t *testing.T) {
	p := exact()
	p.MultiRate = true
	s := NewSender(p, path)
	s.OnAck(1000, 5000, []Hop{hop(0, 0, 0, 100), hop(0, 0, 0, 100)})
	T := path.BaseRTT
	s.OnAck(6000, 9000, []Hop{hop(T, busy(100, 0.5, T), 0, 100), hop(T, busy(100, 1.9, T), 0, 100)})
	if want := 100*gbps/(1.9/0.95) + s.ai; !near(s.Rate(), want, tol) {
		t.Errorf("rate %.6g Gb/s, want %.6g (the busier hop's)", s.Rate()/gbps, want/gbps)
	}
	if s.hops[0].rc != 100*gbps {
		t.Errorf("the idle hop's reference rate %g moved", s.hops[0].rc)
	}
}

// TestTelemetryUnits reads hops as the ns-3 simulator encodes them: bytes
// in units of 128 x INT_MULTI, so that 511 bytes sent read as 0 with
// INT_MULTI 4.
func TestTelemetryUnits(t *testing.T) {
	p := NS3()
	s := NewSender(&p, path)
	a, b := s.encode(hop(0, 0, 319, 100)), s.encode(hop(1000, 511, 0, 100))
	if d := (b.tx - a.tx) * s.txUnit.d; d != 0 {
		t.Errorf("511 bytes read as %d, want 0 (units of 512)", d)
	}
	if a.qlen != 0 {
		t.Errorf("a 319-byte queue read as %d, want 0 (units of 320)", a.qlen)
	}
	if d := (s.encode(hop(2499, 0, 0, 100)).ns - s.encode(hop(1500, 0, 0, 100)).ns) * 1000; d != 1000 {
		t.Errorf("times 1500 and 2499 ps read %d ps apart, want 1000 (whole nanoseconds)", d)
	}
}

func TestBoundsAndValidate(t *testing.T) {
	p := exact()
	s := NewSender(p, path)
	s.OnAck(1000, 5000, []Hop{hop(0, 0, 0, 100)})
	T := path.BaseRTT
	s.OnAck(6000, 9000, []Hop{hop(T, busy(100, 1, T), 10*int64(path.Window), 100)})
	if s.Rate() < p.MinRate {
		t.Errorf("rate %g below the floor %g", s.Rate(), p.MinRate)
	}
	for _, tc := range []struct {
		field string
		edit  func(*Params)
	}{
		{"eta", func(p *Params) { p.Eta = 1.2 }},
		{"eta", func(p *Params) { p.Eta = math.NaN() }},
		{"mi_thresh", func(p *Params) { p.MIThresh = -1 }},
		{"rai", func(p *Params) { p.RAI = 0 }},
		{"min_rate", func(p *Params) { p.MinRate = -1 }},
		{"int_multi", func(p *Params) { p.INTMulti = 0 }},
	} {
		q := NS3()
		tc.edit(&q)
		var pe *ParamError
		if err := q.Validate(); !errors.As(err, &pe) || pe.Field != tc.field {
			t.Errorf("%s: Validate() = %v, want an error naming it", tc.field, err)
		}
	}
	if _, err := Preset("nope"); err == nil {
		t.Error("an unknown preset was accepted")
	}
}

// TestSenderLayout keeps what an ACK reads of a Sender in its first four
// cache lines (Sender's comment says why): the last samples start a line,
// and MultiRate's per-hop state comes after them.
func TestSenderLayout(t *testing.T) {
	var s Sender
	if at := unsafe.Offsetof(s.txUnit); at < 64 || unsafe.Offsetof(s.nhops)+4 > 128 {
		t.Errorf("units at %d, nhops at %d: want both in line 1", at, unsafe.Offsetof(s.nhops))
	}
	if at, end := unsafe.Offsetof(s.last), unsafe.Offsetof(s.last)+unsafe.Sizeof(s.last); at != 128 || end > 256 {
		t.Errorf("last samples at bytes %d-%d: want them in lines 2 and 3", at, end-1)
	}
	if unsafe.Offsetof(s.hops) < unsafe.Offsetof(s.last) {
		t.Errorf("per-hop state at %d: want it after the samples", unsafe.Offsetof(s.hops))
	}
}
