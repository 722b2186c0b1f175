package p4

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
)

// The committed P4Info holds every name the Go code uses, with the match
// fields and parameters it fills and their bit widths.
func TestP4InfoHoldsWhatGoUses(t *testing.T) {
	info, err := P4Info()
	if err != nil {
		t.Fatal(err)
	}
	type field struct {
		name  string
		width int32
	}
	tables := map[string][]field{
		TableIPv4LPM:    {{"hdr.ipv4.dst_addr", 32}},
		TableECMPMember: {{"meta.ecmp_member", 16}},
		TableREDConfig:  {{"standard_metadata.egress_port", 9}},
	}
	actions := map[string][]field{
		ActionSetNexthop:   {{"port", 9}, {"src_mac", 48}, {"dst_mac", 48}},
		ActionSetECMPGroup: {{"base", 16}, {"size", 16}},
		ActionDrop:         nil,
		ActionSetRED:       {{"kmin_bytes", 32}, {"kmax_bytes", 32}, {"pmax_slope", 32}, {"wred_k_bytes", 32}},
	}
	counters := []string{CounterRxFrames, CounterNoRoute, CounterECNMarks, CounterWREDDrops}

	for name, want := range tables {
		var tb *p4configv1.Table
		for _, x := range info.Tables {
			if x.Preamble.Name == name {
				tb = x
			}
		}
		if tb == nil {
			t.Errorf("table %s missing", name)
			continue
		}
		if len(tb.MatchFields) != len(want) {
			t.Errorf("table %s: %d match fields, want %d", name, len(tb.MatchFields), len(want))
			continue
		}
		for i, f := range want {
			if m := tb.MatchFields[i]; m.Name != f.name || m.Bitwidth != f.width {
				t.Errorf("table %s field %d: %s/%d, want %s/%d", name, i, m.Name, m.Bitwidth, f.name, f.width)
			}
		}
	}
	for name, want := range actions {
		var ac *p4configv1.Action
		for _, x := range info.Actions {
			if x.Preamble.Name == name {
				ac = x
			}
		}
		if ac == nil {
			t.Errorf("action %s missing", name)
			continue
		}
		if len(ac.Params) != len(want) {
			t.Errorf("action %s: %d parameters, want %d", name, len(ac.Params), len(want))
			continue
		}
		for i, f := range want {
			if p := ac.Params[i]; p.Name != f.name || p.Bitwidth != f.width {
				t.Errorf("action %s parameter %d: %s/%d, want %s/%d", name, i, p.Name, p.Bitwidth, f.name, f.width)
			}
		}
	}
	for _, name := range counters {
		found := false
		for _, c := range info.Counters {
			found = found || c.Preamble.Name == name && c.Size == 512
		}
		if !found {
			t.Errorf("counter %s (512 ports) missing", name)
		}
	}
	found := false
	for _, r := range info.Registers {
		found = found || r.Preamble.Name == RegisterQueueBytes && r.Size == 512
	}
	if !found {
		t.Errorf("register %s missing", RegisterQueueBytes)
	}
	if len(DeviceConfig()) == 0 || !bytes.Contains(DeviceConfig(), []byte(`"pipelines"`)) {
		t.Error("the BMv2 JSON is missing or not a BMv2 program")
	}
}

// Where p4c is installed, the committed outputs are what the source
// compiles to, and the compiler has nothing to warn about.
func TestCommittedBuildMatchesSource(t *testing.T) {
	if _, err := exec.LookPath("p4c-bm2-ss"); err != nil {
		t.Skip("skipping: p4c-bm2-ss is not installed (build p4lang/p4c; see p4/README.md)")
	}
	dir := t.TempDir()
	cmd := exec.Command("p4c-bm2-ss", "--p4v", "16", "--p4runtime-files", filepath.Join(dir, "rcm.p4info.txtpb"),
		"-o", filepath.Join(dir, "rcm.json"), "rcm.p4")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("p4c-bm2-ss: %v\n%s", err, out)
	}
	if len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("p4c-bm2-ss warns:\n%s", out)
	}
	for _, f := range []string{"rcm.p4info.txtpb", "rcm.json"} {
		got, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(filepath.Join("build", f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(normalise(got), normalise(committed)) {
			t.Errorf("build/%s differs from what rcm.p4 compiles to: run make -C p4 and commit", f)
		}
	}
}

// normalise drops what differs between two compilations of the same
// source: the JSON names the program by the path it was given.
func normalise(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte(`"program" : "rcm.p4"`), nil)
}
