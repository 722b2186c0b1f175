package fluid

import (
	"math"
	"strings"
	"testing"
)

func TestPaperParams(t *testing.T) {
	p := PaperParams(40e9)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	want := Params{
		LineRate: 40e9, Capacity: 40e9, PacketSize: 1500,
		Kmin: 5000, Kmax: 200000, Pmax: 0.01, G: 1.0 / 256,
		RAI: 40e6, ByteCounter: 10e6, Timer: 55e-6, F: 5,
		Tau: 50e-6, TauPrime: 55e-6, TauStar: 50e-6,
	}
	if p != want {
		t.Errorf("PaperParams(40e9) = %+v, want %+v", p, want)
	}
	// In the solver's units: 40 Gb/s is 3.33 M packets/s, 10 MB is 6667
	// packets, and a timer period at line rate is 183 packets.
	m := newModel(p)
	if !near(m.line, 40e9/12000, 1e-15) || !near(m.b, 1e7/1500, 1e-15) || !near(m.t*m.line, 183.33333333333334, 1e-12) {
		t.Errorf("model units: line %g pkt/s, B %g pkt, T*line %g pkt", m.line, m.b, m.t*m.line)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Params)
		want   string // substring of the error; "" for none
	}{
		{"paper", func(*Params) {}, ""},
		{"no delay", func(p *Params) { p.TauStar = 0 }, ""},
		{"cut-off marking", func(p *Params) { p.Kmin, p.Kmax = 40e3, 40e3 }, ""},
		{"zero line rate", func(p *Params) { p.LineRate = 0 }, "LineRate"},
		{"NaN capacity", func(p *Params) { p.Capacity = math.NaN() }, "Capacity"},
		{"infinite timer", func(p *Params) { p.Timer = math.Inf(1) }, "Timer"},
		{"negative Kmin", func(p *Params) { p.Kmin = -1 }, "Kmin"},
		{"negative delay", func(p *Params) { p.TauStar = -1e-6 }, "TauStar"},
		{"Kmax below Kmin", func(p *Params) { p.Kmax = 1e3 }, "Kmax"},
		{"Pmax over 1", func(p *Params) { p.Pmax = 1.5 }, "Pmax"},
		{"zero Pmax", func(p *Params) { p.Pmax = 0 }, "Pmax"},
		{"g over 1", func(p *Params) { p.G = 2 }, "G"},
		{"negative F", func(p *Params) { p.F = -1 }, "F"},
		{"zero R_AI", func(p *Params) { p.RAI = 0 }, "RAI"},
		{"byte counter under a packet", func(p *Params) { p.ByteCounter = 100 }, "ByteCounter"},
	} {
		p := PaperParams(40e9)
		tc.change(&p)
		err := p.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one naming %s", tc.name, err, tc.want)
		}
	}
}
