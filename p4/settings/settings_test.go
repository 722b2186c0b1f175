package settings

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/rcm"
)

// The simulator's RCM defaults on ports of other rates: byte figures
// scale with the rate, sampling stays about every 10 KB of 1 KB frames,
// the CAM threshold never falls to one sample.
func TestRCMFromModel(t *testing.T) {
	for _, c := range []struct {
		rate       float64
		want       RCM
		wantShifts [2]byte
	}{
		{100e9, RCM{SampleEvery: 10, QEq: 25e3, Wq: 2, FbQuantum: 25e3 * 5 / 63, CAMMinHits: 2, Window: 8e3}, [2]byte{1, 11}},
		{10e9, RCM{SampleEvery: 1, QEq: 2.5e3, Wq: 2, FbQuantum: 2.5e3 * 5 / 63, CAMMinHits: 2, Window: 1e3}, [2]byte{1, 8}},
	} {
		got := RCMFromModel(rcm.Defaults(), c.rate, 1000)
		if got != c.want {
			t.Errorf("at %g b/s: %+v, want %+v", c.rate, got, c.want)
		}
		e, err := got.Entry(2)
		if err != nil {
			t.Fatal(err)
		}
		if e.Params[2].Name != "wq_shift" || e.Params[2].Value[0] != c.wantShifts[0] || e.Params[3].Value[0] != c.wantShifts[1] {
			t.Errorf("at %g b/s: shifts %v %v, want %v", c.rate, e.Params[2], e.Params[3], c.wantShifts)
		}
	}
	// RCC as a rate limit: W's time at the rate, 8 KB at 100 Gb/s.
	p := rcm.Defaults()
	p.WorkConserving = false
	if got := RCMFromModel(p, 100e9, 1000).WindowTime; got != 640*time.Nanosecond {
		t.Errorf("not work-conserving at 100 Gb/s: window time %v, want 640ns", got)
	}
}

// Settings out of range are refused naming the setting.
func TestRefused(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{func() error { _, err := (RED{Kmin: 10, Kmax: 5}).Entry(1); return err }(), "kmax"},
		{func() error { _, err := (RED{Kmin: 1, Kmax: 5, Pmax: 2}).Entry(1); return err }(), "pmax"},
		{func() error { _, err := (RED{Kmin: 1, Kmax: 5, BufMax: 1 << 32}).Entry(1); return err }(), "buf-max"},
		{func() error {
			_, err := (PFC{MAC: make([]byte, 6), XOFF: 10, XON: 20, LinkRate: 1e9}).Params()
			return err
		}(), "xon"},
		{func() error { _, err := (PFC{MAC: make([]byte, 6), LinkRate: 1e9, Priority: 8}).Params(); return err }(), "priority"},
		{func() error {
			_, err := (RCM{SampleEvery: 1, Wq: 1, FbQuantum: 1, CAMMinHits: 9, Window: 1}).Entry(1)
			return err
		}(), "cam-min-hits"},
		{func() error {
			_, err := (RCM{SampleEvery: 1, Wq: 1, FbQuantum: 1, CAMMinHits: 2, Window: 1, WindowTime: 5 * time.Second}).Entry(1)
			return err
		}(), "window-time"},
		{func() error { _, err := (INT{Rate: 400}).Entry(1); return err }(), "int rate"},
		{func() error { _, err := (INT{Rate: 5e12}).Entry(1); return err }(), "int rate"},
	} {
		if c.err == nil || !strings.HasPrefix(c.err.Error(), c.want) {
			t.Errorf("error %v, want one about %s", c.err, c.want)
		}
	}
}

// INT's rate goes in kb/s: a 69.2 Mb/s emulated link is 69,200.
func TestINTEntry(t *testing.T) {
	e, err := INT{Rate: 69.2e6}.Entry(3)
	if err != nil {
		t.Fatal(err)
	}
	if e.Table != "RcmEgress.int_config" || e.Action != "RcmEgress.set_int" || e.Params[0].Name != "rate_kbps" ||
		!bytes.Equal(e.Params[0].Value, []byte{0, 1, 0x0e, 0x50}) || !bytes.Equal(e.Match[0].Value, []byte{0, 3}) {
		t.Errorf("%+v", e)
	}
}
