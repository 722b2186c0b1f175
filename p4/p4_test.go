package p4

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"

	"github.com/p4rcm/p4rcm/roce"
)

// The committed P4Info holds every name the Go code uses, with the match
// fields and parameters it fills and their bit widths.
func TestP4InfoHoldsWhatGoUses(t *testing.T) {
	info, err := P4Info()
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string][]field{
		TableIPv4LPM:           {{"hdr.ipv4.dst_addr", 32}},
		TableECMPMember:        {{"meta.ecmp_base", 16}, {"meta.ecmp_offset", 16}},
		TableSARGroup:          {{"meta.ecmp_base", 16}},
		TableIngressPortConfig: {{"standard_metadata.ingress_port", 9}},
		TableRCMConfig:         {{"standard_metadata.egress_spec", 9}},
		TableREDConfig:         {{"standard_metadata.egress_port", 9}},
		TableINTConfig:         {{"standard_metadata.egress_port", 9}},
	}
	actions := map[string][]field{
		ActionSetNexthop:   {{"port", 9}, {"src_mac", 48}, {"dst_mac", 48}},
		ActionSetECMPGroup: {{"base", 16}, {"size", 16}},
		ActionSetSARMembers: {{"members", 8}, {"p0", 9}, {"p1", 9}, {"p2", 9}, {"p3", 9},
			{"pin_idle_ns", 32}},
		ActionDrop: nil,
		ActionSetPort: {{"mac", 48}, {"xoff_bytes", 32}, {"xon_bytes", 32}, {"pause_quanta", 16},
			{"quantum_ns", 32}, {"pfc_priority", 3}, {"cn_enabled", 1}, {"cn_interval_ns", 32},
			{"cn_ingress_bytes", 32}, {"cn_hold_ns", 32}},
		ActionSetRCM: {{"sample_every", 16}, {"qeq_bytes", 32}, {"wq_shift", 8}, {"fb_shift", 8},
			{"cam_min_hits", 8}, {"window_bytes", 32}, {"window_ns", 32}, {"high_priority", 3}, {"low_priority", 3}},
		ActionSetRED: {{"kmin_bytes", 32}, {"kmax_bytes", 32}, {"pmax_slope", 32}, {"wred_k_bytes", 32}, {"buf_max_bytes", 32}},
		ActionSetINT: {{"rate_kbps", 32}},
	}
	counters := []string{CounterRxFrames, CounterNoRoute, CounterDetours, CounterPausesSent, CounterResumesSent, CounterResumesReceived,
		CounterPausesReceived, CounterCNsSent, CounterCNsReceived, CounterHeld, CounterCAMHits,
		CounterWindowHolds, CounterLimitHolds, CounterECNMarks, CounterWREDDrops, CounterBufMaxDrops,
		CounterINTHops, CounterINTExceeded, CounterINTMalformed}

	for name, want := range tables {
		got := fieldsOf(info.Tables, name, (*p4configv1.Table).GetPreamble, func(x *p4configv1.Table) (f []field) {
			for _, m := range x.MatchFields {
				f = append(f, field{m.Name, m.Bitwidth})
			}
			return f
		})
		checkFields(t, "table "+name, got, want)
	}
	for name, want := range actions {
		got := fieldsOf(info.Actions, name, (*p4configv1.Action).GetPreamble, func(x *p4configv1.Action) (f []field) {
			for _, p := range x.Params {
				f = append(f, field{p.Name, p.Bitwidth})
			}
			return f
		})
		checkFields(t, "action "+name, got, want)
	}
	for _, name := range counters {
		found := false
		for _, c := range info.Counters {
			found = found || c.Preamble.Name == name && c.Size == Ports
		}
		if !found {
			t.Errorf("counter %s (%d ports) missing", name, Ports)
		}
	}
	for _, name := range []string{RegisterQueueBytes, RegisterINTTxBytes} {
		found := false
		for _, r := range info.Registers {
			found = found || r.Preamble.Name == name && r.Size == Ports
		}
		if !found {
			t.Errorf("register %s missing", name)
		}
	}

	// The CAM and named-flows digests: the port, then the entries.
	want := []field{{"port", 9}}
	for i := range CAMDepth {
		want = append(want, field{fmt.Sprintf("entry%d", i), 32})
	}
	for _, name := range []string{DigestCAM, DigestNamed} {
		var digest []field
		for _, d := range info.Digests {
			if d.Preamble.Name == name {
				digest = []field{}
				for _, m := range info.TypeInfo.GetStructs()[d.TypeSpec.GetStruct().GetName()].GetMembers() {
					digest = append(digest, field{m.Name, m.TypeSpec.GetBitstring().GetBit().GetBitwidth()})
				}
			}
		}
		checkFields(t, "digest "+name, digest, want)
	}

	if len(DeviceConfig()) == 0 || !bytes.Contains(DeviceConfig(), []byte(`"pipelines"`)) {
		t.Error("the BMv2 JSON is missing or not a BMv2 program")
	}
}

// field is a match field or an action parameter: its name and bit width.
type field struct {
	name  string
	width int32
}

// fieldsOf is what fields gives for the entity of xs named name: nil when
// there is none, empty (not nil) when it has no fields.
func fieldsOf[T any](xs []*T, name string, preamble func(*T) *p4configv1.Preamble, fields func(*T) []field) []field {
	for _, x := range xs {
		if preamble(x).GetName() == name {
			return append([]field{}, fields(x)...)
		}
	}
	return nil
}

// checkFields compares what the P4Info has for an entity (nil when it is
// missing) with what the Go code expects.
func checkFields(t *testing.T, entity string, got, want []field) {
	t.Helper()
	switch {
	case got == nil:
		t.Errorf("%s missing", entity)
	case len(got) != len(want):
		t.Errorf("%s: %d fields %v, want %v", entity, len(got), got, want)
	default:
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s field %d: %s/%d, want %s/%d", entity, i, got[i].name, got[i].width, want[i].name, want[i].width)
			}
		}
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

// Where p4c is installed, the Go target's test programs' committed JSON
// is what their sources compile to (warnings allowed: the profiles
// program is warned that action profile tables take no default action).
func TestTestdataBuildMatchesSource(t *testing.T) {
	if _, err := exec.LookPath("p4c-bm2-ss"); err != nil {
		t.Skip("skipping: p4c-bm2-ss is not installed (build p4lang/p4c; see p4/README.md)")
	}
	for _, name := range []string{"parse", "tables", "exprs", "externs", "profiles", "ipv6", "stackindex", "runtime", "l3"} {
		dir := t.TempDir()
		cmd := exec.Command("p4c-bm2-ss", "--p4v", "16", "--p4runtime-files", filepath.Join(dir, name+".p4info.txtpb"),
			"-o", filepath.Join(dir, name+".json"), name+".p4")
		cmd.Dir = "testdata"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("p4c-bm2-ss %s.p4: %v\n%s", name, err, out)
		}
		for _, f := range []string{name + ".p4info.txtpb", name + ".json"} {
			got, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			committed, err := os.ReadFile(filepath.Join("testdata", "build", f))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, committed) {
				t.Errorf("testdata/build/%s differs from what %s.p4 compiles to: run make -C p4/testdata and commit", f, name)
			}
		}
	}
}

// The INT headers the program parses and pushes are the ones the agents
// write and read (package roce): the shim's fields, a record's four
// 32-bit words, the hop bound.
func TestINTFormatMatchesAgents(t *testing.T) {
	var doc struct {
		HeaderTypes []struct {
			Name   string  `json:"name"`
			Fields [][]any `json:"fields"`
		} `json:"header_types"`
		HeaderStacks []struct {
			Name      string `json:"name"`
			HeaderIDs []int  `json:"header_ids"`
		} `json:"header_stacks"`
	}
	if err := json.Unmarshal(DeviceConfig(), &doc); err != nil {
		t.Fatal(err)
	}
	layout := map[string]string{}
	for _, h := range doc.HeaderTypes {
		var s []string
		for _, f := range h.Fields {
			s = append(s, fmt.Sprintf("%v/%v", f[0], f[1]))
		}
		layout[h.Name] = strings.Join(s, " ")
	}
	if got, want := layout["int_shim_t"], "version/4 exceeded/1 reserved1/3 hop_count/8 remaining/8 reserved2/8"; got != want {
		t.Errorf("int_shim_t: %s, want %s (%d bytes, roce.INTShimLen)", got, want, roce.INTShimLen)
	}
	if got, want := layout["int_hop_t"], "ts_ns/32 tx_bytes/32 qlen_bytes/32 rate_kbps/32"; got != want {
		t.Errorf("int_hop_t: %s, want %s (%d bytes, roce.INTHopLen)", got, want, roce.INTHopLen)
	}
	for _, s := range doc.HeaderStacks {
		if s.Name == "int_hops" && len(s.HeaderIDs) != roce.MaxINTHops {
			t.Errorf("int_hops holds %d records, the agents %d", len(s.HeaderIDs), roce.MaxINTHops)
		}
	}
}
