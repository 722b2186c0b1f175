package buffercalc

import (
	"math"
	"testing"
)

func TestHeadroomTermsAt40G(t *testing.T) {
	h, err := StandardLink(40e9, 1500).Headroom()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"frame in transmission at this port": 1542,
		"PAUSE frame":                        84,
		"cable, both ways":                   5000, // 2 x 100 m x 5 ns/m x 5 B/ns
		"interfaces, both ends":              6144, // 2 x 24576 bits
		"peer response time":                 7552, // 118 quanta x 64 B
		"frame in transmission at the peer":  1542,
	}
	if len(h.Terms) != len(want) {
		t.Fatalf("got %d terms, want %d", len(h.Terms), len(want))
	}
	sum := 0.0
	for _, term := range h.Terms {
		if w, ok := want[term.Name]; !ok || math.Abs(term.Bytes-w) > 1e-9 {
			t.Errorf("term %q = %g B, want %g", term.Name, term.Bytes, w)
		}
		if term.Basis == "" {
			t.Errorf("term %q does not say how it was obtained", term.Name)
		}
		sum += term.Bytes
	}
	if h.Total != sum || sum != 21864 {
		t.Errorf("total = %g, terms sum to %g, want 21864", h.Total, sum)
	}
}

// The paper's 22.4 KB at 40 Gb/s and 1500 B MTU leaves the cable length
// unstated; with the standard delays the model reaches it at about 110.7 m.
func TestCableForPaperHeadroom(t *testing.T) {
	l := StandardLink(40e9, 1500)
	m, ok := l.CableFor(22400)
	if !ok {
		t.Fatal("22.4 KB not reachable at 40 Gb/s")
	}
	if math.Abs(m-110.72) > 0.005 {
		t.Errorf("cable for 22.4 KB = %.3f m, want 110.72 m", m)
	}
	l.CableMeters = m
	h, _ := l.Headroom()
	if math.Abs(h.Total-22400) > 1e-6 {
		t.Errorf("headroom at the fitted cable = %g B, want 22400", h.Total)
	}
	if _, ok := l.CableFor(1000); ok {
		t.Error("1000 B of headroom should be too small for any cable at 40 Gb/s")
	}
}

func TestHeadroomGrowsWithCableRateAndMTU(t *testing.T) {
	base, _ := StandardLink(100e9, 1500).Headroom()
	longer := StandardLink(100e9, 1500)
	longer.CableMeters = 300
	for name, l := range map[string]Link{
		"300 m cable": longer,
		"9000 B MTU":  StandardLink(100e9, 9000),
		"400 Gb/s":    StandardLink(400e9, 1500),
	} {
		h, err := l.Headroom()
		if err != nil {
			t.Fatal(err)
		}
		if h.Total <= base.Total {
			t.Errorf("%s: headroom %g B not above the 100 Gb/s, 100 m, 1500 B figure %g B", name, h.Total, base.Total)
		}
	}
}

func TestStandardFiguresForOddRates(t *testing.T) {
	tests := []struct {
		rate       float64
		quanta     float64
		interfaceB float64
	}{
		{1e9, 60, 8192},           // below the table: the 10 GbE bit times
		{10e9, 60, 8192},          // exact
		{25e9, 80, 6144},          // exact
		{50e9, 394, 122880},       // between 40 and 100: the 100 GbE bit times
		{100e9, 394, 122880},      // exact
		{200e9, 905, 491520},      // between 100 and 400
		{800e9, 1810, 2 * 491520}, // above: 400 Gb/s delays kept in time
	}
	for _, tt := range tests {
		l := StandardLink(tt.rate, 1500)
		if l.ResponseQuanta != tt.quanta || l.InterfaceBits != tt.interfaceB {
			t.Errorf("%s: response %g quanta, interface %g bits; want %g, %g (%s)",
				FormatRate(tt.rate), l.ResponseQuanta, l.InterfaceBits, tt.quanta, tt.interfaceB, l.FiguresFrom)
		}
	}
}

func TestLinkValidate(t *testing.T) {
	for field, edit := range map[string]func(*Link){
		"rate":            func(l *Link) { l.Rate = 0 },
		"mtu":             func(l *Link) { l.MTU = -1 },
		"cable":           func(l *Link) { l.CableMeters = -1 },
		"ns-per-meter":    func(l *Link) { l.NsPerMeter = 0 },
		"interface-bits":  func(l *Link) { l.InterfaceBits = -1 },
		"response-quanta": func(l *Link) { l.ResponseQuanta = -1 },
	} {
		l := StandardLink(40e9, 1500)
		edit(&l)
		_, err := l.Headroom()
		fe, ok := err.(*FieldError)
		if !ok || fe.Field != field {
			t.Errorf("%s: Headroom() error = %v, want a FieldError on it", field, err)
		}
	}
}
