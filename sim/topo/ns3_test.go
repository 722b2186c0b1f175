package topo

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
)

const fat320 = "testdata/fat320.topo.txt"

func TestParseNS3Benchmark(t *testing.T) {
	raw, err := os.ReadFile(fat320)
	if err != nil {
		t.Fatal(err)
	}
	top, err := ParseNS3(bytes.NewReader(raw), fat320)
	if err != nil {
		t.Fatal(err)
	}
	if top.Name != "fat320.topo.txt" {
		t.Errorf("Name = %q, want the base name fat320.topo.txt", top.Name)
	}
	if len(top.Nodes) != 376 || len(top.Switches()) != 56 || len(top.Links) != 480 {
		t.Fatalf("%d nodes, %d switches, %d links; want 376, 56, 480", len(top.Nodes), len(top.Switches()), len(top.Links))
	}
	hosts := top.Hosts()
	if len(hosts) != 320 || hosts[0] != 0 || hosts[319] != 319 {
		t.Fatalf("hosts: %d, from %d to %d; want 320 from 0 to 319", len(hosts), hosts[0], hosts[len(hosts)-1])
	}
	var at100, at400 int
	for i, l := range top.Links {
		hostLink := top.Nodes[l.A].Kind == Host || top.Nodes[l.B].Kind == Host
		switch {
		case l.Delay != 1_000_000:
			t.Fatalf("link %d: delay %d ps, want 1000 ns", i, l.Delay)
		case hostLink && l.Rate == 100e9:
			at100++
		case !hostLink && l.Rate == 400e9:
			at400++
		default:
			t.Fatalf("link %d (%d-%d): unexpected rate %g", i, l.A, l.B, l.Rate)
		}
	}
	if at100 != 320 || at400 != 160 {
		t.Errorf("%d host links at 100G and %d fabric links at 400G, want 320 and 160", at100, at400)
	}
	for _, id := range []int{0, 319, 320, 375} {
		n := top.Nodes[id]
		want := "h"
		if id >= 320 {
			want = "sw"
		}
		if n.Name != want+strconv.Itoa(id) || n.Tier != 0 || n.Group != -1 {
			t.Errorf("node %d: %+v, want name %s%d, tier 0, group -1", id, n, want, id)
		}
	}

	// Write, read, write: the two outputs are byte-identical, and the
	// first is the benchmark file itself less its trailing blank line.
	var out1, out2 bytes.Buffer
	if err := top.WriteNS3(&out1); err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimRight(string(raw), "\n") + "\n"; out1.String() != want {
		t.Errorf("WriteNS3 differs from the benchmark file:\n%s", firstDiff(out1.String(), want))
	}
	again, err := ParseNS3(&out1, "written")
	if err != nil {
		t.Fatal(err)
	}
	if err := again.WriteNS3(&out2); err != nil {
		t.Fatal(err)
	}
	out1.Reset()
	top.WriteNS3(&out1)
	if out1.String() != out2.String() {
		t.Errorf("second round differs:\n%s", firstDiff(out2.String(), out1.String()))
	}
}

// firstDiff shows the first differing line of two texts.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n got " + gl + "\nwant " + wl
		}
	}
	return "(no difference)"
}

// TestNS3RoundTripBuilders writes every builder's output and reads it back.
func TestNS3RoundTripBuilders(t *testing.T) {
	build := map[string]func() (*Topology, error){
		"fattree": func() (*Topology, error) {
			return FatTree(FatTreeOptions{K: 4, HostRate: 100e9, FabricRate: 400e9, Delay: 1500})
		},
		"leafspine": func() (*Topology, error) {
			return LeafSpine(LeafSpineOptions{Leaves: 3, Spines: 2, HostsPerLeaf: 7, HostRate: 25e9, Oversubscription: 3, LinksPerSpine: 2, Delay: 600_000})
		},
		"dumbbell": func() (*Topology, error) {
			return Dumbbell(DumbbellOptions{Left: 2, Right: 3, HostRate: 10e9, BottleneckRate: 1e9, Delay: 1})
		},
		"star":    func() (*Topology, error) { return Star(StarOptions{N: 9, Rate: 40e9}) },
		"testbed": func() (*Topology, error) { return Testbed(TestbedOptions{Delay: 2_000_000}) },
	}
	for _, name := range []string{"fattree", "leafspine", "dumbbell", "star", "testbed"} {
		t.Run(name, func(t *testing.T) {
			top, err := build[name]()
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := top.WriteNS3(&out); err != nil {
				t.Fatal(err)
			}
			text := out.String()
			back, err := ParseNS3(strings.NewReader(text), name+".txt")
			if err != nil {
				t.Fatalf("%v\n%s", err, text)
			}
			if len(back.Nodes) != len(top.Nodes) || len(back.Links) != len(top.Links) {
				t.Fatalf("read back %d nodes %d links, want %d and %d", len(back.Nodes), len(back.Links), len(top.Nodes), len(top.Links))
			}
			for i := range top.Nodes {
				if back.Nodes[i].Kind != top.Nodes[i].Kind {
					t.Fatalf("node %d: kind %v, want %v", i, back.Nodes[i].Kind, top.Nodes[i].Kind)
				}
			}
			for i := range top.Links {
				if back.Links[i] != top.Links[i] {
					t.Fatalf("link %d: %+v, want %+v", i, back.Links[i], top.Links[i])
				}
			}
			out.Reset()
			back.WriteNS3(&out)
			if out.String() != text {
				t.Errorf("second write differs:\n%s", firstDiff(out.String(), text))
			}
		})
	}
}

const smallNS3 = `6 2 5
4 5
0 4 100Gbps 1000ns 0.000000
1 4 100Gbps 1000ns 0.000000
2 5 100Gbps 1000ns 0.000000
3 5 100Gbps 1000ns 0.000000
4 5 400Gbps 1000ns 0.000000
`

func TestParseNS3Tolerates(t *testing.T) {
	tests := []struct {
		name, text string
	}{
		{"plain", smallNS3},
		{"blank lines and trailing spaces", "\n" + strings.ReplaceAll(smallNS3, "\n", "  \t\n\n") + "\n\n"},
		{"CRLF", strings.ReplaceAll(smallNS3, "\n", "\r\n")},
		{"no final newline", strings.TrimSuffix(smallNS3, "\n")},
		{"other units", strings.Replace(strings.Replace(smallNS3, "0 4 100Gbps 1000ns", "0 4 100gb/s 1us", 1), "4 5 400Gbps 1000ns", "4 5 0.4Tbps 1000000ps", 1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			top, err := ParseNS3(strings.NewReader(tc.text), "dir/small.txt")
			if err != nil {
				t.Fatal(err)
			}
			if top.Name != "small.txt" || len(top.Nodes) != 6 || len(top.Links) != 5 {
				t.Fatalf("got %v, want small.txt with 6 nodes and 5 links", top)
			}
			if l := top.Links[0]; l.Rate != 100e9 || l.Delay != 1_000_000 {
				t.Errorf("link 0: %g %d, want 1e11 1000000", l.Rate, l.Delay)
			}
			if l := top.Links[4]; l.Rate != 400e9 || l.Delay != 1_000_000 {
				t.Errorf("link 4: %g %d, want 4e11 1000000", l.Rate, l.Delay)
			}
		})
	}
}

func TestParseNS3Errors(t *testing.T) {
	// replace changes the first occurrence of old in smallNS3.
	replace := func(old, new string) string {
		if !strings.Contains(smallNS3, old) {
			panic("test input lacks " + old)
		}
		return strings.Replace(smallNS3, old, new, 1)
	}
	tests := []struct {
		name, text, want string
	}{
		{"empty", "", `t.txt: empty file: want a header line "nodes switches links"`},
		{"blank", "\n  \n", `t.txt: empty file`},
		{"header too short", replace("6 2 5\n", "6 2\n"), `t.txt:1: header: want 3 fields "nodes switches links", got 2`},
		{"header too long", replace("6 2 5\n", "6 2 5 7\n"), `t.txt:1: header: want 3 fields "nodes switches links", got 4`},
		{"non-numeric node count", replace("6 2 5", "six 2 5"), `t.txt:1: node count "six": not an integer`},
		{"non-numeric switch count", replace("6 2 5", "6 2.0 5"), `t.txt:1: switch count "2.0": not an integer`},
		{"non-numeric link count", replace("6 2 5", "6 2 5x"), `t.txt:1: link count "5x": not an integer`},
		{"zero nodes", replace("6 2 5", "0 2 5"), `t.txt:1: node count 0: out of range 1..2097152`},
		{"more switches than nodes", replace("6 2 5", "6 7 5"), `t.txt:1: switch count 7: out of range 1..6`},
		{"no switches", replace("6 2 5", "6 0 5"), `t.txt:1: switch count 0: out of range 1..6`},
		{"negative links", replace("6 2 5", "6 2 -1"), `t.txt:1: link count -1: out of range 0..8388608`},
		{"missing switch line", "6 2 5\n\n", `t.txt:2: end of file: missing the line of 2 switch ids`},
		{"too few switch ids", replace("4 5\n", "4\n"), `t.txt:2: switch ids: got 1, header says 2`},
		{"too many switch ids", replace("4 5\n", "4 5 3\n"), `t.txt:2: switch ids: got 3, header says 2`},
		{"switch id out of range", replace("4 5\n", "4 999\n"), `t.txt:2: switch id 999: out of range 0..5`},
		{"negative switch id", replace("4 5\n", "-1 5\n"), `t.txt:2: switch id -1: out of range 0..5`},
		{"non-numeric switch id", replace("4 5\n", "4 sw5\n"), `t.txt:2: switch id "sw5": not an integer`},
		{"duplicate switch id", replace("4 5\n", "4 4\n"), `t.txt:2: switch id 4: listed twice`},
		{"too few links", replace("6 2 5", "6 2 6"), `t.txt:7: end of file after 5 links, header says 6`},
		{"too many links", replace("6 2 5", "6 2 4"), `t.txt:7: extra content "4 5 400Gbps 1000ns 0.000000" after the 4 links the header declares`},
		{"trailing junk", smallNS3 + "\n# end\n", `t.txt:9: extra content "# end" after the 5 links the header declares`},
		{"bad rate unit", replace("1 4 100Gbps", "1 4 100Gbs"), `t.txt:4: link rate "100Gbs": unknown unit "Gbs" (want bps, Kbps, Mbps, Gbps or Tbps)`},
		{"rate without unit", replace("1 4 100Gbps", "1 4 100"), `t.txt:4: link rate "100": missing unit (want bps, Kbps, Mbps, Gbps or Tbps)`},
		{"non-numeric rate", replace("1 4 100Gbps", "1 4 fastGbps"), `t.txt:4: link rate "fastGbps": not a number followed by a unit`},
		{"zero rate", replace("1 4 100Gbps", "1 4 0Gbps"), `t.txt:4: link rate "0Gbps": must be positive`},
		{"bad delay unit", replace("2 5 100Gbps 1000ns", "2 5 100Gbps 1000nsec"), `t.txt:5: link delay "1000nsec": unknown unit "nsec" (want ps, ns, us, ms or s)`},
		{"negative delay", replace("2 5 100Gbps 1000ns", "2 5 100Gbps -1000ns"), `t.txt:5: link delay "-1000ns": not a number followed by a unit`},
		{"delay without unit", replace("2 5 100Gbps 1000ns", "2 5 100Gbps 1000"), `t.txt:5: link delay "1000": missing unit (want ps, ns, us, ms or s)`},
		{"non-numeric endpoint", replace("0 4 100Gbps", "zero 4 100Gbps"), `t.txt:3: link endpoint a "zero": not an integer`},
		{"endpoint out of range", replace("0 4 100Gbps", "0 6 100Gbps"), `t.txt:3: link endpoint b 6: out of range 0..5`},
		{"missing error rate", replace("0 4 100Gbps 1000ns 0.000000", "0 4 100Gbps 1000ns"), `t.txt:3: link: missing error rate (want "a b rate delay error_rate")`},
		{"missing rate", replace("0 4 100Gbps 1000ns 0.000000", "0 4"), `t.txt:3: link: missing rate`},
		{"extra field", replace("0 4 100Gbps 1000ns 0.000000", "0 4 100Gbps 1000ns 0.000000 x y"), `t.txt:3: link: extra content "x y" after the error rate`},
		{"non-numeric error rate", replace("0 4 100Gbps 1000ns 0.000000", "0 4 100Gbps 1000ns none"), `t.txt:3: link error rate "none": not a number`},
		{"non-zero error rate", replace("0 4 100Gbps 1000ns 0.000000", "0 4 100Gbps 1000ns 0.001"), `t.txt:3: link error rate "0.001": packet corruption is not modelled, use 0`},
		{"self loop", replace("4 5 400Gbps", "5 5 400Gbps"), `t.txt:7: link 5-5 joins a node to itself`},
		{"host to host", replace("1 4 100Gbps", "1 0 100Gbps"), `t.txt:4: link 1-0 joins two hosts: hosts attach to switches`},
		{"host with two links", replace("1 4 100Gbps", "0 5 100Gbps"), `t.txt:4: host 0 has a second link (the first is on line 3): hosts have one NIC`},
		{"line numbers count blank lines", replace("1 4 100Gbps", "\n\n1 4 100Gbs"), `t.txt:6: link rate "100Gbs"`},
		{"host without link", replace("3 5 100Gbps", "4 5 100Gbps"), `t.txt: host 3 (h3) has 0 links; hosts have exactly one NIC link`},
		{"host with two links, second at a switch end", replace("4 5 400Gbps", "4 2 400Gbps"), `t.txt:7: host 2 has a second link (the first is on line 5)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			top, err := ParseNS3(strings.NewReader(tc.text), "t.txt")
			if err == nil {
				t.Fatalf("parsed %v, want error %q", top, tc.want)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error\n got %q\nwant %q...", err, tc.want)
			}
		})
	}
}

func TestParseNS3Disconnected(t *testing.T) {
	// Two islands: hosts 0,1 on switch 4 and hosts 2,3 on switch 5.
	text := strings.Replace(smallNS3, "6 2 5", "6 2 4", 1)
	text = strings.Replace(text, "4 5 400Gbps 1000ns 0.000000\n", "", 1)
	_, err := ParseNS3(strings.NewReader(text), "islands.txt")
	if want := "islands.txt: host 0 (h0) cannot reach host 2 (h2)"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}

func TestWriteNS3Refuses(t *testing.T) {
	bad := twoRacks()
	bad.Links[0].Rate = 0
	var out bytes.Buffer
	if err := bad.WriteNS3(&out); err == nil || !strings.Contains(err.Error(), `WriteNS3 "two-racks": link 0 (0-4): rate must be positive`) {
		t.Errorf("invalid topology: error %v", err)
	}
	empty := &Topology{Name: "empty"}
	if err := empty.WriteNS3(&out); err == nil || !strings.Contains(err.Error(), "no switch") {
		t.Errorf("empty topology: error %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("wrote %q for refused topologies", out.String())
	}
}
