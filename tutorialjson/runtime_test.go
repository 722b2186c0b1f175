package tutorialjson

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A runtime file in the tutorials' format reads with every field and
// the line of each object, writes back, and reads again the same.
func TestRuntimeRoundTrip(t *testing.T) {
	rt, err := LoadRuntime("testdata/s1-runtime.json")
	if err != nil {
		t.Fatal(err)
	}
	if rt.Target != "bmv2" || rt.P4Info != "build/basic.p4.p4info.txtpb" || rt.BMv2JSON != "build/basic.json" {
		t.Errorf("target, p4info, bmv2_json = %q, %q, %q", rt.Target, rt.P4Info, rt.BMv2JSON)
	}
	if len(rt.Entries) != 3 || !rt.Entries[0].Default || rt.Entries[2].Priority != 10 || rt.Entries[1].Line != 12 {
		t.Fatalf("entries %+v", rt.Entries)
	}
	if len(rt.Multicast) != 1 || len(rt.Multicast[0].Replicas) != 2 || len(rt.Clones) != 1 || rt.Clones[0].ID != 100 {
		t.Errorf("multicast %+v, clones %+v", rt.Multicast, rt.Clones)
	}
	if got := rt.At(rt.Entries[2].Pos); got != "testdata/s1-runtime.json:23" {
		t.Errorf("At = %q", got)
	}
	out, err := rt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "out.json")
	if err := WriteFile(path, out); err != nil {
		t.Fatal(err)
	}
	again, err := LoadRuntime(path)
	if err != nil {
		t.Fatal(err)
	}
	out2, _ := again.Marshal()
	if !bytes.Equal(out, out2) {
		t.Errorf("written, read and written again differs:\n%s\n%s", out, out2)
	}
	var generic, orig map[string]any
	json.Unmarshal(out, &generic)
	data, _ := os.ReadFile("testdata/s1-runtime.json")
	json.Unmarshal(data, &orig)
	for _, k := range []string{"target", "p4info", "bmv2_json", "multicast_group_entries", "clone_session_entries"} {
		a, _ := json.Marshal(generic[k])
		b, _ := json.Marshal(orig[k])
		if !bytes.Equal(a, b) {
			t.Errorf("%s: wrote %s, read %s", k, a, b)
		}
	}
}

// Malformed files are refused naming the line.
func TestRuntimeErrors(t *testing.T) {
	for doc, want := range map[string]string{
		`[]`:                          "1: want a JSON object",
		"{\n\"table_entries\": {}\n}": "2: table_entries: want a list",
		"{\"table_entries\": [\n{\"table\": 5}\n]}": "2: table_entries",
		"{\"target\": 3}":                          "target: want a string",
		"{\"table_entries\": [\n{}\n,\n{\"x\": ]}": "4:",
		"{} {}": "more after the object",
		"{\n\"hosts\": {}, \"switches\": {}, \"links\": []}": `2: "hosts": this is a topology.json (hosts, switches, links), not a runtime file`,
		"{\"table_entrie\": []}":                             `"table_entrie" is no key of a runtime file: want target`,
	} {
		_, err := ParseRuntime([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRuntime(%q) = %v, want an error with %q", doc, err, want)
		}
	}
}

// Values as the tutorials write them become big-endian bytes of the
// field's width; a value too wide names both widths; Format writes them
// back.
func TestValues(t *testing.T) {
	for _, c := range []struct {
		text  string
		width int
		want  []byte
		kind  Kind
	}{
		{"10.0.1.1", 32, []byte{10, 0, 1, 1}, IPv4},
		{"08:00:00:00:01:11", 48, []byte{8, 0, 0, 0, 1, 0x11}, MAC},
		{"2001:db8::1", 128, append([]byte{0x20, 0x01, 0x0d, 0xb8}, append(make([]byte, 11), 1)...), IPv6},
		{"511", 9, []byte{1, 0xff}, Number},
		{"0x1ff", 9, []byte{1, 0xff}, Number},
		{"0xffffffffffffffffff", 72, bytes.Repeat([]byte{0xff}, 9), Number},
	} {
		got, err := Bytes(c.text, c.width)
		if err != nil || !bytes.Equal(got, c.want) {
			t.Errorf("Bytes(%q, %d) = %x, %v; want %x", c.text, c.width, got, err, c.want)
			continue
		}
		back, _ := Text(Format(got, c.kind))
		if again, err := Bytes(back, c.width); err != nil || !bytes.Equal(again, c.want) {
			t.Errorf("Format(%x) = %s, which reads as %x, %v", got, back, again, err)
		}
	}
	for text, want := range map[string]string{
		"512":        "512 needs 10 bits; the field has 9",
		"10.0.1":     "is not a number",
		"10.0.1.256": "not an IPv4 address",
		"-1":         "is not a number",
	} {
		if _, err := Bytes(text, 9); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Bytes(%q, 9) = %v, want %q", text, err, want)
		}
	}
}

// The tutorials' topology.json reads with hosts, switches and links
// (latency and bandwidth optional); bad ends are refused.
func TestTopology(t *testing.T) {
	topo, err := LoadTopology("testdata/topology.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(topo.Hosts) != 2 || topo.Hosts["h1"].MAC != "08:00:00:00:01:11" || len(topo.Hosts["h1"].Commands) != 2 {
		t.Errorf("hosts %+v", topo.Hosts)
	}
	if topo.Switches["s2"].RuntimeJSON != "s2-runtime.json" {
		t.Errorf("switches %+v", topo.Switches)
	}
	if l := topo.Links[2]; l.A != "s1-p2" || l.B != "s2-p2" || l.Latency != 5*time.Millisecond || l.Bandwidth != 10 {
		t.Errorf("link %+v", l)
	}
	if n, p := End("s1-p2"); n != "s1" || p != 2 {
		t.Errorf("End(s1-p2) = %s, %d", n, p)
	}
	b, _ := json.Marshal(topo.Links[2])
	if string(b) != `["s1-p2","s2-p2","5ms",10]` {
		t.Errorf("link written as %s", b)
	}
	dir := t.TempDir()
	for doc, want := range map[string]string{
		`{"hosts": {}, "switches": {"s1": {}}, "links": [["h9", "s1-p1"]]}`:                                                                                          `"h9" is neither`,
		`{"hosts": {}, "switches": {"s1": {}}, "links": [["s1", "s1-p1"]]}`:                                                                                          "without its port",
		`{"hosts": {}, "switches": {"s1": {}, "s2": {}}, "links": [["s2-p1", "s1-p1"], ["s1-p1", "s2-p2"]]}`:                                                         "s1-p1 is already linked",
		`{"hosts": {"h1": {"ip": "10.0.0.300", "mac": "08:00:00:00:01:11"}}, "switches": {}, "links": []}`:                                                           "hosts.h1.ip",
		`{"hosts": {}, "switches": {"s1": {}}, "links": [["s1-p1"]]}`:                                                                                                "a link is",
		`{"hosts": {}, "switches": {"s1": {}, "s2": {}}, "links": [["s1-p1", "s2-p1", "fast"]]}`:                                                                     "link latency",
		`{"hosts": {"h1": {"ip": "10.0.1.1/24", "mac": "08:00:00:00:01:11"}, "h2": {"ip": "10.0.1.1/24", "mac": "08:00:00:00:02:22"}}, "switches": {}, "links": []}`: "hosts.h2.ip: 10.0.1.1 is hosts.h1's address too",
		`{"hosts": {"h1": {"ip": "10.0.1.1/24", "mac": "08:00:00:00:01:11"}, "h2": {"ip": "10.0.2.2/24", "mac": "08:00:00:00:01:11"}}, "switches": {}, "links": []}`: "hosts.h2.mac: 08:00:00:00:01:11 is hosts.h1's MAC too",
	} {
		path := filepath.Join(dir, "t.json")
		os.WriteFile(path, []byte(doc), 0o644)
		if _, err := LoadTopology(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadTopology(%s) = %v, want %q", doc, err, want)
		}
	}
}
