package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p4rcm/p4rcm/sim"
)

// ns3Dir lays out an ns-3 simulation directory in a temporary directory:
// mix/ holding the benchmark's topology and flows under the names the
// reference configurations give them, and the configuration named, with
// edit applied to its text. It returns the configuration's path.
func ns3Dir(t *testing.T, config string, edit func(string) string) string {
	t.Helper()
	mix := filepath.Join(t.TempDir(), "mix")
	if err := os.MkdirAll(mix, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, builtin := range map[string]string{"fat320.txt": "fat320.topo.txt", "ws30.txt": "websearch30_10ms.flows.txt"} {
		data, err := builtinData(builtin)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mix, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	text, err := os.ReadFile(filepath.Join("testdata", "ns3", config))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		text = []byte(edit(string(text)))
	}
	p := filepath.Join(mix, config)
	if err := os.WriteFile(p, text, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNS3ConfigsRunThePresets imports the ns-3 simulator's four reference
// configurations and finds each the benchmark preset with that scheme:
// the same network, NIC and scheme parameters, so the same run. They differ
// only where the file says more: its stop time, and for HPCC and TIMELY
// the ECN marking ns-3 applies though neither scheme reads it.
func TestNS3ConfigsRunThePresets(t *testing.T) {
	for _, tc := range []struct {
		config, scheme string
		kmin, kmax     float64 // bytes at 100 Gb/s
	}{
		{"config_fat320_ws30_dcqcn.txt", "dcqcn", 400e3, 1600e3},
		{"config_fat320_ws30_hp95.txt", "hpcc", 400e3, 1600e3},
		{"config_fat320_ws30_dctcp.txt", "dctcp", 300e3, 300e3},
		{"config_fat320_ws30_timely.txt", "timely", 400e3, 1600e3},
	} {
		t.Run(tc.scheme, func(t *testing.T) {
			s, notes, err := FromNS3Config(ns3Dir(t, tc.config, nil))
			if err != nil {
				t.Fatal(err)
			}
			if len(notes) != 10 || !strings.Contains(strings.Join(notes, "\n"), ":10: FCT_OUTPUT_FILE ignored") {
				t.Errorf("notes %q: want the ten output keys, FCT_OUTPUT_FILE on line 10 among them", notes)
			}
			got, err := s.BuildNetwork()
			if err != nil {
				t.Fatal(err)
			}
			p, err := LoadPreset("bench-fat320")
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Set("scheme", tc.scheme); err != nil {
				t.Fatal(err)
			}
			want, err := p.BuildNetwork()
			if err != nil {
				t.Fatal(err)
			}
			if got.StopAt != 4e12 {
				t.Errorf("stop %d ps, want SIMULATOR_STOP_TIME's 4 s", got.StopAt)
			}
			if got.ECN == nil || got.ECN.KMin != tc.kmin || got.ECN.KMax != tc.kmax || got.ECN.RefRate != 100e9 {
				t.Errorf("ECN %+v, want the KMIN_MAP and KMAX_MAP at 100 Gb/s", got.ECN)
			}
			got.StopAt, got.ECN, got.ECNMarking = 0, want.ECN, want.ECNMarking
			got.Topology, want.Topology = nil, nil
			if d := diffConfigs(got, want); d != "" {
				t.Errorf("the imported configuration differs from the preset's: %s", d)
			}
		})
	}
}

// diffConfigs names the first field of two network configurations that
// differ, "" if none: the parameters of the scheme that runs, not of the
// others (ns-3's RATE_AI is every scheme's); the topology is compared by
// the caller. Rate steps
// compare by what they are at 100 Gb/s: ns-3 gives them absolute, the
// presets per line rate.
func diffConfigs(a, b sim.Config) string {
	for _, c := range []*sim.Config{&a, &b} {
		c.DCQCN.RAI, c.DCQCN.RHAI = c.DCQCN.Steps(100e9)
		c.HPCC.RAI = c.HPCC.AI(100e9)
		if c.TIMELY.ScaleWithRate {
			c.TIMELY.RAI, c.TIMELY.RHAI = c.TIMELY.RAI*100e9/c.TIMELY.RefRate, c.TIMELY.RHAI*100e9/c.TIMELY.RefRate
		}
		c.DCQCN.Name, c.DCQCN.RefRate, c.DCQCN.ScaleWithRate = "", 0, false
		c.HPCC.RefRate, c.HPCC.ScaleWithRate = 0, false
		c.TIMELY.RefRate, c.TIMELY.ScaleWithRate = 0, false
	}
	for _, f := range []struct {
		name string
		same bool
	}{
		{"cc", a.CC == b.CC}, {"mtu", a.MTU == b.MTU}, {"ack_interval", a.AckInterval == b.AckInterval}, {"wire", a.Wire == b.Wire},
		{"dcqcn", a.CC != "dcqcn" || a.DCQCN == b.DCQCN}, {"hpcc", a.CC != "hpcc" || a.HPCC == b.HPCC},
		{"timely", a.CC != "timely" || a.TIMELY == b.TIMELY}, {"dctcp", a.CC != "dctcp" || a.DCTCP == b.DCTCP},
		{"window", a.Window == b.Window}, {"ack_in_data", a.AckInData == b.AckInData}, {"ack_obeys_pfc", a.AckObeysPFC == b.AckObeysPFC},
		{"pfc", a.PFC == b.PFC}, {"buffer", a.Buffer == b.Buffer}, {"pfc_beta", a.PFCBeta == b.PFCBeta},
		{"pfc_beta_scale", a.PFCBetaScale == b.PFCBetaScale}, {"ecn", (a.ECN == nil) == (b.ECN == nil) && (a.ECN == nil || *a.ECN == *b.ECN)},
	} {
		if !f.same {
			return f.name
		}
	}
	return ""
}

// TestNS3ConfigRefusesWhatItCannotHonour: each key p4rcm cannot honour,
// and each malformed value, is named with its file and line.
func TestNS3ConfigRefusesWhatItCannotHonour(t *testing.T) {
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"unknown key", "RATE_BOUND 1", "RATE_BOUND 1\nBOGUS_KEY 3", ":45: BOGUS_KEY is not a key p4rcm can honour"},
		{"PINT", "CC_MODE 3", "CC_MODE 10", ":15: CC_MODE: 10 is HPCC-PINT"},
		{"mode", "CC_MODE 3", "CC_MODE 2", ":15: CC_MODE: 2 is not a mode p4rcm runs"},
		{"duplicate", "U_TARGET 0.95", "U_TARGET 0.95\nU_TARGET 0.9", ":37: U_TARGET is given twice (first on line 36)"},
		{"missing", "RATE_AI 40Mb/s\n", "", "RATE_AI missing"},
		{"eta", "U_TARGET 0.95", "U_TARGET 1.5", ":36: U_TARGET: hpcc.eta: must be in (0, 1]"},
		{"bad rate", "RATE_AI 40Mb/s", "RATE_AI fast", ":22: RATE_AI: "},
		{"map", "KMAX_MAP 2 100000000000 1600 400000000000 6400", "KMAX_MAP 2 100000000000 1600 400000000000 5000", ":52: KMAX_MAP: at 4e+11 the value is 5e+06, not 6.4e+06"},
		{"ack interval", "L2_ACK_INTERVAL 1", "L2_ACK_INTERVAL 1500", ":29: L2_ACK_INTERVAL: 1500 bytes is not a whole number"},
		{"errors", "ERROR_RATE_PER_LINK 0.0000", "ERROR_RATE_PER_LINK 0.01", ":27: ERROR_RATE_PER_LINK: 0.01 is not supported"},
		{"link down", "LINK_DOWN 0 0 0", "LINK_DOWN 1000 320 336", ":48: LINK_DOWN: 1000 320 336 is not supported"},
		{"topology", "mix/fat320.txt", "mix/none.txt", ":6: TOPOLOGY_FILE: mix/none.txt not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := ns3Dir(t, "config_fat320_ws30_hp95.txt", func(s string) string {
				if !strings.Contains(s, tc.old) {
					t.Fatalf("the reference has no %q", tc.old)
				}
				return strings.Replace(s, tc.old, tc.new, 1)
			})
			s, _, err := FromNS3Config(p)
			if err == nil {
				_, err = s.Build()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), p) {
				t.Errorf("error %v, want one starting with the file and saying %q", err, tc.want)
			}
		})
	}
}

// TestNS3ConfigDefaults: keys a file leaves out take the ns-3 simulator's
// own defaults (third.cc), not the scheme's preset: without HAS_WIN and
// MULTI_RATE an HPCC run has a window (HAS_WIN 1) of fixed size (VAR_WIN
// 0) and per-hop rates (MULTI_RATE 1).
func TestNS3ConfigDefaults(t *testing.T) {
	p := ns3Dir(t, "config_fat320_ws30_hp95.txt", func(s string) string {
		for _, k := range []string{"HAS_WIN 1\n", "VAR_WIN 1\n", "MULTI_RATE 0\n"} {
			s = strings.Replace(s, k, "", 1)
		}
		return s
	})
	s, _, err := FromNS3Config(p)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := s.BuildNetwork()
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Window.Enabled || cfg.Window.Variable || !cfg.HPCC.MultiRate {
		t.Errorf("window %+v, multi-rate %t: want ns-3's defaults (a fixed window, per-hop rates)", cfg.Window, cfg.HPCC.MultiRate)
	}
}
