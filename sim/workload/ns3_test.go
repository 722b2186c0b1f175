package workload

import (
	"bytes"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

const benchFlows = "testdata/websearch30_10ms.flows.txt"

func TestParseNS3FlowsBench(t *testing.T) {
	data, err := os.ReadFile(benchFlows)
	if err != nil {
		t.Fatal(err)
	}
	isHost := func(n int) bool { return n < 320 } // fat320: hosts are nodes 0..319
	flows, err := ParseNS3Flows(bytes.NewReader(data), benchFlows, isHost)
	if err != nil {
		t.Fatal(err)
	}
	if len(flows) != 6706 {
		t.Fatalf("%d flows, want 6706", len(flows))
	}
	first := Flow{ID: 0, Src: 13, Dst: 6, Priority: 3, DstPort: 100, Size: 24375, Start: 2_000_000_962_000}
	if flows[0] != first {
		t.Errorf("first flow %+v, want %+v", flows[0], first)
	}
	var sum float64
	lo, hi := flows[0].Start, flows[0].Start
	for i, f := range flows {
		if f.ID != i {
			t.Fatalf("flow %d has ID %d", i, f.ID)
		}
		sum += float64(f.Size)
		lo, hi = min(lo, f.Start), max(hi, f.Start)
	}
	if lo != 2e12+962e3 || hi < 2.009e12 || hi >= 2.010e12 {
		t.Errorf("starts from %d to %d ps, want 2 s to about 2.01 s", lo, hi)
	}
	// Web-search sizes have a standard deviation of about 4.0 MB, so the
	// mean of 6706 has a standard error of about 48 KB; 15% (257 KB) is
	// over 5 of them.
	ws := mustBuiltin(t, "websearch")
	mean := sum / float64(len(flows))
	t.Logf("mean size %.0f bytes, web search CDF %.0f", mean, ws.Mean())
	if math.Abs(mean-ws.Mean()) > 0.15*ws.Mean() {
		t.Errorf("mean size %.0f, want about %.0f (web search)", mean, ws.Mean())
	}

	// Writing gives back the file, but for the trailing space after the
	// count on its first line.
	var out bytes.Buffer
	if err := WriteNS3Flows(&out, flows); err != nil {
		t.Fatal(err)
	}
	want := bytes.Replace(data, []byte("6706 \n"), []byte("6706\n"), 1)
	if !bytes.Equal(out.Bytes(), want) {
		gotLines, wantLines := strings.Split(out.String(), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gotLines), len(wantLines)) {
			if gotLines[i] != wantLines[i] {
				t.Fatalf("written line %d %q, the file has %q", i+1, gotLines[i], wantLines[i])
			}
		}
		t.Fatalf("written %d lines, the file has %d", len(gotLines), len(wantLines))
	}
}

// TestNS3RoundTrip writes generated flows, including starts that need 12
// decimals, and reads them back; the file's order is kept, not re-sorted.
func TestNS3RoundTrip(t *testing.T) {
	flows, err := Poisson(PoissonOptions{
		Hosts: hostRange(0, 8), CDF: mustBuiltin(t, "alistorage"), Load: 0.4, HostRate: 25e9,
		Start: 3e12, Duration: 2e9, Seed: 11, Priority: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	flows = append(flows,
		Flow{Src: 1, Dst: 2, Size: 1, Start: 0, DstPort: 65535},
		Flow{Src: 2, Dst: 1, Size: 1 << 40, Start: 123_456_789_012_345, Priority: 7},
	)
	slices.Reverse(flows)
	for i := range flows {
		flows[i].ID = i
		flows[i].Class = ""
	}
	var out bytes.Buffer
	if err := WriteNS3Flows(&out, flows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), " 123.456789012345\n") || !strings.Contains(out.String(), " 0.000000000\n") {
		t.Errorf("output lacks the expected start times:\n%.300s", out.String())
	}
	back, err := ParseNS3Flows(&out, "roundtrip", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back, flows) {
		t.Fatal("flows read back differ from those written")
	}
}

func TestParseSeconds(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  string
	}{
		{"2.000000962", 2_000_000_962_000, ""},
		{"2.009970521", 2_009_970_521_000, ""},
		{"0", 0, ""},
		{"0.000000000", 0, ""},
		{"1", 1e12, ""},
		{"+1.", 1e12, ""},
		{".5", 5e11, ""},
		{"0.000000000001", 1, ""},
		{"123.456789012345", 123_456_789_012_345, ""},
		{"2.0000009620000000", 2_000_000_962_000, ""},
		{"1.5e-3", 1_500_000_000, ""},
		{"15E-4", 1_500_000_000, ""},
		{"1e-12", 1, ""},
		{"0e999", 0, ""},
		{"9223372.036854775807", math.MaxInt64, ""},
		{"0.0000000000001", 0, "finer than a picosecond"},
		{"1e-13", 0, "finer than a picosecond"},
		{"9223372.036854775808", 0, "too large"},
		{"1e7", 0, "too large"},
		{"-1", 0, "negative"},
		{"", 0, "not a decimal number"},
		{".", 0, "not a decimal number"},
		{"1.2.3", 0, "not a decimal number"},
		{"0x10", 0, "not a decimal number"},
		{"1e", 0, "bad exponent"},
		{"nan", 0, "not a decimal number"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSeconds(tt.in)
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("ParseSeconds(%q): %v", tt.in, err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("ParseSeconds(%q) = %d, %v; want error %q", tt.in, got, err, tt.err)
			case tt.err == "" && got != tt.want:
				t.Fatalf("ParseSeconds(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestFormatSeconds(t *testing.T) {
	tests := []struct {
		ps   int64
		want string
	}{
		{0, "0.000000000"},
		{2_000_000_962_000, "2.000000962"},
		{2_000_000_962_001, "2.000000962001"},
		{1, "0.000000000001"},
		{math.MaxInt64, "9223372.036854775807"},
		{-1_500_000_000_000, "-1.500000000"},
		{math.MinInt64, "-9223372.036854775808"},
	}
	for _, tt := range tests {
		if got := FormatSeconds(tt.ps); got != tt.want {
			t.Errorf("FormatSeconds(%d) = %q, want %q", tt.ps, got, tt.want)
		}
		if tt.ps < 0 {
			continue
		}
		if back, err := ParseSeconds(FormatSeconds(tt.ps)); err != nil || back != tt.ps {
			t.Errorf("ParseSeconds(FormatSeconds(%d)) = %d, %v", tt.ps, back, err)
		}
	}
}

func TestParseNS3FlowsErrors(t *testing.T) {
	onlyBelow10 := func(n int) bool { return n < 10 }
	tests := []struct {
		name   string
		text   string
		isHost func(int) bool
		want   string
	}{
		{"fewer flows than the count", "3\n1 2 3 100 1000 2.0\n2 1 3 100 1000 2.0\n", nil,
			"f.txt:3: the count on line 1 says 3 flows, the file has 2"},
		{"more flows than the count", "1\n1 2 3 100 1000 2.0\n2 1 3 100 1000 2.0\n", nil,
			"f.txt:3: more flow lines than the count 1 on line 1"},
		{"count not a number", "many\n", nil, `f.txt:1: flow count "many": not a non-negative whole number`},
		{"count with more fields", "1 2 3 100 1000 2.0\n", nil, "f.txt:1: want the flow count alone on the first line, got 6 fields"},
		{"empty", "\n\n", nil, "f.txt: empty: want the flow count on the first line"},
		{"src not a number", "1\nx 2 3 100 1000 2.0\n", nil, `f.txt:2: src "x": not a whole number`},
		{"dst negative", "1\n1 -2 3 100 1000 2.0\n", nil, "f.txt:2: dst -2: node ID is negative"},
		{"size not a number", "1\n1 2 3 100 1k 2.0\n", nil, `f.txt:2: size_bytes "1k": not a whole number of bytes`},
		{"negative size", "2\n1 2 3 100 10 2.0\n\n1 2 3 100 -1000 2.0\n", nil, "f.txt:4: size_bytes -1000: must be positive"},
		{"zero size", "1\n1 2 3 100 0 2.0\n", nil, "f.txt:2: size_bytes 0: must be positive"},
		{"src is dst", "1\n4 4 3 100 1000 2.0\n", nil, "f.txt:2: dst 4: same as src: a flow needs two different hosts"},
		{"unknown src", "1\n12 4 3 100 1000 2.0\n", onlyBelow10, "f.txt:2: src 12: not a host"},
		{"unknown dst", "1\n1 40 3 100 1000 2.0\n", onlyBelow10, "f.txt:2: dst 40: not a host"},
		{"priority", "1\n1 2 8 100 1000 2.0\n", nil, "f.txt:2: priority_group 8: must be 0..7"},
		{"priority not a number", "1\n1 2 high 100 1000 2.0\n", nil, `f.txt:2: priority_group "high": not a whole number`},
		{"port", "1\n1 2 3 70000 1000 2.0\n", nil, "f.txt:2: dst_port 70000: must be 0..65535"},
		{"start", "1\n1 2 3 100 1000 2.0s\n", nil, `f.txt:2: start_seconds "2.0s": not a decimal number of seconds`},
		{"start too fine", "1\n1 2 3 100 1000 2.0000000000001\n", nil, `f.txt:2: start_seconds "2.0000000000001": finer than a picosecond`},
		{"negative start", "1\n1 2 3 100 1000 -2\n", nil, `f.txt:2: start_seconds "-2": negative time`},
		{"five fields", "1\n1 2 3 100 1000\n", nil, `f.txt:2: want 6 fields "src dst priority_group dst_port size_bytes start_seconds", got 5`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			flows, err := ParseNS3Flows(strings.NewReader(tt.text), "f.txt", tt.isHost)
			if err == nil {
				t.Fatalf("no error (%d flows), want %q", len(flows), tt.want)
			}
			if err.Error() != tt.want {
				t.Fatalf("error\n got %q\nwant %q", err, tt.want)
			}
		})
	}
}

func TestParseNS3FlowsKeepsOrder(t *testing.T) {
	text := "3\n5 1 3 100 10 3.0\n\n2 7 3 100 20 1.0\n9 4 0 0 30 2.5\n"
	flows, err := ParseNS3Flows(strings.NewReader(text), "f.txt", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Flow{
		{ID: 0, Src: 5, Dst: 1, Priority: 3, DstPort: 100, Size: 10, Start: 3e12},
		{ID: 1, Src: 2, Dst: 7, Priority: 3, DstPort: 100, Size: 20, Start: 1e12},
		{ID: 2, Src: 9, Dst: 4, Priority: 0, DstPort: 0, Size: 30, Start: 2.5e12},
	}
	if !slices.Equal(flows, want) {
		t.Fatalf("got %+v\nwant %+v", flows, want)
	}
	zero, err := ParseNS3Flows(strings.NewReader("0\n"), "f.txt", nil)
	if err != nil || len(zero) != 0 {
		t.Fatalf("empty flow list: %v, %v", zero, err)
	}
}

func TestWriteNS3FlowsErrors(t *testing.T) {
	tests := []struct {
		name string
		flow Flow
		want string
	}{
		{"src is dst", Flow{ID: 4, Src: 3, Dst: 3, Size: 1}, "flow 1 (ID 4): src and dst are both 3"},
		{"size", Flow{ID: 4, Src: 3, Dst: 2}, "flow 1 (ID 4): size 0: must be positive"},
		{"start", Flow{ID: 4, Src: 3, Dst: 2, Size: 1, Start: -1}, "flow 1 (ID 4): start -1 ps: must not be negative"},
		{"priority", Flow{ID: 4, Src: 3, Dst: 2, Size: 1, Priority: 8}, "flow 1 (ID 4): priority 8: must be 0..7"},
		{"port", Flow{ID: 4, Src: 3, Dst: 2, Size: 1, DstPort: -1}, "flow 1 (ID 4): dst port -1: must be 0..65535"},
		{"negative node", Flow{ID: 4, Src: -3, Dst: 2, Size: 1}, "flow 1 (ID 4): node ID is negative (-3 -> 2)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := WriteNS3Flows(&out, []Flow{{Src: 0, Dst: 1, Size: 5}, tt.flow})
			wantErr(t, err, "workload: WriteNS3Flows: "+tt.want)
			if out.Len() != 0 {
				t.Errorf("wrote %q before failing", out.String())
			}
		})
	}
}
