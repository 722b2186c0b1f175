package ldcp_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/p4rcm/p4rcm/ldcp"
)

func TestPresetNamesSorted(t *testing.T) {
	want := []string{"delayed", "draft"}
	if got := ldcp.PresetNames(); !slices.Equal(got, want) {
		t.Fatalf("PresetNames() = %v, want %v", got, want)
	}
}

func TestPresetsValidate(t *testing.T) {
	for _, name := range ldcp.PresetNames() {
		t.Run(name, func(t *testing.T) {
			p, err := ldcp.Preset(strings.ToUpper(name))
			if err != nil {
				t.Fatalf("Preset(%q): %v", name, err)
			}
			if p.Name != name {
				t.Errorf("Preset(%q).Name = %q", name, p.Name)
			}
			if err := p.Validate(); err != nil {
				t.Errorf("Preset(%q).Validate() = %v", name, err)
			}
		})
	}
}

func TestPresetUnknownListsNames(t *testing.T) {
	for _, name := range []string{"", "dcqcn", "draft "} {
		p, err := ldcp.Preset(name)
		if err == nil {
			t.Fatalf("Preset(%q) = %+v, want an error", name, p)
		}
		if msg := err.Error(); !strings.Contains(msg, `"`+name+`"`) || !strings.Contains(msg, "delayed, draft") {
			t.Errorf("Preset(%q) error %q should quote the name and list the known ones", name, msg)
		}
	}
}

func TestPresetReturnsCopy(t *testing.T) {
	a, _ := ldcp.Preset("draft")
	a.Alpha, a.AckEvery = 0.1, 9
	b, _ := ldcp.Preset("draft")
	if b.Alpha != 1 || b.AckEvery != 1 {
		t.Fatalf("second Preset(draft) sees the first caller's change: %+v", b)
	}
}

// TestPresetDocumentedValues pins the values Draft's doc comment states.
func TestPresetDocumentedValues(t *testing.T) {
	want := ldcp.Params{
		Name: "draft", Alpha: 1, Beta: 0.5, Gamma: 1.0 / 16, Eta: 0.5, MaxWindow: 2, IW: 1,
		AckEvery: 1, ProbeTimeout: 100 * us,
		KMin: 5e3, KMax: 20e3, PMax: 0.5, K: 40e3, BufMax: 400e3, RefRate: 100e9,
	}
	if got := ldcp.Draft(); got != want {
		t.Errorf("Draft():\n got  %+v\n want %+v", got, want)
	}
	want.Name, want.AckEvery = "delayed", 2
	if got := ldcp.Delayed(); got != want {
		t.Errorf("Delayed():\n got  %+v\n want %+v", got, want)
	}
}

func TestValidateNamesBadField(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name  string
		set   func(p *ldcp.Params)
		field string // "" for valid
	}{
		{"alpha zero", func(p *ldcp.Params) { p.Alpha = 0 }, "alpha"},
		{"alpha above one", func(p *ldcp.Params) { p.Alpha = 1.5 }, "alpha"},
		{"alpha NaN", func(p *ldcp.Params) { p.Alpha = nan }, "alpha"},
		{"beta zero", func(p *ldcp.Params) { p.Beta = 0 }, "beta"},
		{"beta above one", func(p *ldcp.Params) { p.Beta = 1.01 }, "beta"},
		{"beta NaN", func(p *ldcp.Params) { p.Beta = nan }, "beta"},
		{"gamma zero", func(p *ldcp.Params) { p.Gamma = 0 }, "gamma"},
		{"gamma one", func(p *ldcp.Params) { p.Gamma = 1 }, "gamma"},
		{"gamma NaN", func(p *ldcp.Params) { p.Gamma = nan }, "gamma"},
		{"eta zero", func(p *ldcp.Params) { p.Eta = 0 }, "eta"},
		{"eta one", func(p *ldcp.Params) { p.Eta = 1 }, "eta"},
		{"eta NaN", func(p *ldcp.Params) { p.Eta = nan }, "eta"},
		{"iw negative", func(p *ldcp.Params) { p.IW = -1 }, "iw"},
		{"iw infinite", func(p *ldcp.Params) { p.IW, p.MaxWindow = inf, inf }, "iw"},
		{"iw NaN", func(p *ldcp.Params) { p.IW = nan }, "iw"},
		{"max window below iw", func(p *ldcp.Params) { p.MaxWindow = 0.5 }, "max_window"},
		{"max window zero", func(p *ldcp.Params) { p.IW, p.MaxWindow = 0, 0 }, "max_window"},
		{"max window NaN", func(p *ldcp.Params) { p.MaxWindow = nan }, "max_window"},
		{"ack every zero", func(p *ldcp.Params) { p.AckEvery = 0 }, "ack_every"},
		{"probe timeout zero", func(p *ldcp.Params) { p.ProbeTimeout = 0 }, "probe_timeout"},
		{"kmin negative", func(p *ldcp.Params) { p.KMin = -1 }, "kmin"},
		{"kmax below kmin", func(p *ldcp.Params) { p.KMin, p.KMax = 10, 9 }, "kmax"},
		{"kmin NaN", func(p *ldcp.Params) { p.KMin = nan }, "kmin"},
		{"kmax NaN", func(p *ldcp.Params) { p.KMax = nan }, "kmax"},
		{"pmax zero", func(p *ldcp.Params) { p.PMax = 0 }, "pmax"},
		{"pmax above one", func(p *ldcp.Params) { p.PMax = 1.01 }, "pmax"},
		{"pmax NaN", func(p *ldcp.Params) { p.PMax = nan }, "pmax"},
		{"k zero", func(p *ldcp.Params) { p.K = 0 }, "k"},
		{"k NaN", func(p *ldcp.Params) { p.K = nan }, "k"},
		{"buf max below k", func(p *ldcp.Params) { p.BufMax = p.K - 1 }, "buf_max"},
		{"buf max below kmax", func(p *ldcp.Params) { p.K, p.BufMax = 1000, p.KMax-1 }, "buf_max"},
		{"buf max NaN", func(p *ldcp.Params) { p.BufMax = nan }, "buf_max"},
		{"ref rate zero", func(p *ldcp.Params) { p.RefRate = 0 }, "ref_rate"},
		{"ref rate NaN", func(p *ldcp.Params) { p.RefRate = nan }, "ref_rate"},
		{"first of two bad fields", func(p *ldcp.Params) { p.Eta, p.Beta = 2, 2 }, "beta"},

		{"no fast start", func(p *ldcp.Params) { p.IW = 0 }, ""},
		{"no window cap", func(p *ldcp.Params) { p.MaxWindow = inf }, ""},
		{"alpha and beta one", func(p *ldcp.Params) { p.Alpha, p.Beta = 1, 1 }, ""},
		{"step marking", func(p *ldcp.Params) { p.KMin, p.KMax, p.PMax = 8000, 8000, 1 }, ""},
		{"delayed acks", func(p *ldcp.Params) { p.AckEvery = 16 }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := ldcp.Draft()
			tc.set(&p)
			err := p.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error naming %s", tc.field)
			}
			if prefix := "ldcp " + tc.field + ":"; !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("Validate() = %q, want it to start with %q", err, prefix)
			}
			// The constructors refuse what Validate refuses.
			if _, err := ldcp.NewSender(&p, path100G); err == nil {
				t.Errorf("NewSender accepted params with a bad %s", tc.field)
			}
			if _, err := ldcp.NewRateSender(&p, path100G); err == nil {
				t.Errorf("NewRateSender accepted params with a bad %s", tc.field)
			}
		})
	}
}

func TestPathValidate(t *testing.T) {
	tests := []struct {
		name  string
		set   func(p *ldcp.Path)
		field string
	}{
		{"line rate zero", func(p *ldcp.Path) { p.LineRate = 0 }, "line_rate"},
		{"line rate NaN", func(p *ldcp.Path) { p.LineRate = math.NaN() }, "line_rate"},
		{"line rate infinite", func(p *ldcp.Path) { p.LineRate = math.Inf(1) }, "line_rate"},
		{"rtt zero", func(p *ldcp.Path) { p.RTT = 0 }, "rtt"},
		{"mss zero", func(p *ldcp.Path) { p.MSS = 0 }, "mss"},
		{"wire negative", func(p *ldcp.Path) { p.Wire = -1 }, "wire"},
		{"wire below mss", func(p *ldcp.Path) { p.Wire = 999 }, "wire"},
		{"wire with headers", func(p *ldcp.Path) { p.Wire = 1058 }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := path100G
			tc.set(&path)
			err := path.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), "ldcp path "+tc.field+":") {
				t.Fatalf("Validate() = %v, want an error naming %s", err, tc.field)
			}
			p := ldcp.Draft()
			if _, err := ldcp.NewSender(&p, path); err == nil {
				t.Errorf("NewSender accepted a path with a bad %s", tc.field)
			}
		})
	}
}

// TestBDPAndIW: the BDP is LineRate*RTT/8 over the wire size of a full
// packet; the initial window is IW BDPs rounded up to whole packets.
func TestBDPAndIW(t *testing.T) {
	tests := []struct {
		name   string
		path   ldcp.Path
		iw     float64
		bdp    float64
		wantIW int
	}{
		{"100G 8us 1KB", path100G, 1, 100, 100},
		// 100e9 * 8e-6 / 8 = 100000 bytes = 94.5 packets of 1058 bytes.
		{"wire size", ldcp.Path{LineRate: 100e9, RTT: 8 * us, MSS: 1000, Wire: 1058}, 1, 100000.0 / 1058, 95},
		{"half a BDP", path100G, 0.5, 100, 50},
		{"25G 2us", ldcp.Path{LineRate: 25e9, RTT: 2 * us, MSS: 1000}, 1, 6.25, 7},
		{"tiny path", ldcp.Path{LineRate: 1e9, RTT: 1 * us, MSS: 1000}, 1, 0.125, 1},
		{"no fast start", path100G, 0, 100, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.path.BDP(); !near(got, tc.bdp, 1e-12) {
				t.Errorf("BDP() = %g, want %g", got, tc.bdp)
			}
			p := ldcp.Draft()
			p.IW = tc.iw
			s := newSender(t, &p, tc.path)
			if s.IW() != tc.wantIW {
				t.Errorf("IW() = %d, want %d", s.IW(), tc.wantIW)
			}
		})
	}
}
