package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/p4rcm/p4rcm/sim"
)

func TestNS3Addr(t *testing.T) {
	tests := []struct {
		node int
		want string
	}{
		{0, "0b000001"},
		{1, "0b000101"},
		{255, "0b00ff01"},
		{256, "0b010001"},
		{300, "0b012c01"},
		{65535, "0bffff01"},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.node), func(t *testing.T) {
			if got := fmt.Sprintf("%08x", NS3Addr(tt.node)); got != tt.want {
				t.Errorf("NS3Addr(%d) = %s, want %s", tt.node, got, tt.want)
			}
		})
	}
}

func TestWriteNS3FCT(t *testing.T) {
	flows := []sim.FlowRecord{
		// finishes last
		{ID: 0, Src: 0, Dst: 300, SPort: 10000, DPort: 100, Size: 5000, Start: 1_000_499, Finish: 9_000_000, FCT: 7_999_501, Ideal: 2_000_500},
		// incomplete: left out
		{ID: 1, Src: 1, Dst: 2, SPort: 10001, DPort: 100, Size: 7, Start: 3, Ideal: 1000},
		// finishes first, together with flow 3: ID breaks the tie
		{ID: 2, Src: 1, Dst: 2, SPort: 10002, DPort: 100, Size: 1000, Start: 0, Finish: 5_000_000, FCT: 5_000_000, Ideal: 1_999_999},
		{ID: 3, Src: 256, Dst: 2, SPort: 10003, DPort: 100, Size: 1000, Start: 2_000_000, Finish: 5_000_000, FCT: 3_000_000, Ideal: 1_000_000},
	}
	want := "0b000101 0b000201 10002 100 1000 0 5000 2000\n" +
		"0b010001 0b000201 10003 100 1000 2000 3000 1000\n" +
		"0b000001 0b012c01 10000 100 5000 1000 8000 2001\n"
	var buf bytes.Buffer
	if err := WriteNS3FCT(&buf, flows); err != nil {
		t.Fatal(err)
	}
	if buf.String() != want {
		t.Errorf("fct.txt =\n%s\nwant\n%s", buf.String(), want)
	}
}

// parseNs reads a three-decimal nanosecond field back to picoseconds.
func parseNs(t *testing.T, s string) int64 {
	t.Helper()
	whole, frac, ok := strings.Cut(s, ".")
	if !ok || len(frac) != 3 {
		t.Fatalf("time %q does not have three decimals", s)
	}
	v, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return v
}

func TestFlowsCSVRoundTrip(t *testing.T) {
	flows := []sim.FlowRecord{
		{ID: 0, Src: 3, Dst: 9, SPort: 10000, DPort: 100, Size: 123456, Start: 1_234_567, Finish: 98_765_432_101,
			FCT: 98_764_197_534, Ideal: 5_000_001, Slowdown: 98764197534.0 / 5000001, Class: `web, "front"`,
			Retransmits: 2, CNPs: 17, RateCuts: 5},
		{ID: 1, Src: 4, Dst: 5, SPort: 10001, DPort: 100, Size: 1, Start: 7, Ideal: 999, Class: ""},
		{ID: 2, Src: 0, Dst: 1, SPort: 1, DPort: 2, Size: 10, Start: 0, Finish: 1000, FCT: 1000, Ideal: 1000, Slowdown: 1},
	}
	var buf bytes.Buffer
	if err := WriteFlowsCSV(&buf, flows); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rows[0], flowsHeader) {
		t.Fatalf("header %v, want %v", rows[0], flowsHeader)
	}
	if len(rows) != len(flows)+1 {
		t.Fatalf("%d rows, want %d", len(rows), len(flows)+1)
	}
	for i, f := range flows {
		t.Run(strconv.Itoa(f.ID), func(t *testing.T) {
			row := rows[i+1]
			atoi := func(s string) int {
				v, err := strconv.Atoi(s)
				if err != nil {
					t.Fatalf("%q: %v", s, err)
				}
				return v
			}
			var got sim.FlowRecord
			got.ID, got.Src, got.Dst, got.SPort, got.DPort = atoi(row[0]), atoi(row[1]), atoi(row[2]), atoi(row[3]), atoi(row[4])
			got.Size = int64(atoi(row[5]))
			got.Start = parseNs(t, row[6])
			if f.Finish != 0 {
				got.Finish, got.FCT = parseNs(t, row[7]), parseNs(t, row[8])
				if got.Slowdown, err = strconv.ParseFloat(row[10], 64); err != nil {
					t.Fatal(err)
				}
			} else if row[7] != "" || row[8] != "" || row[10] != "" {
				t.Errorf("incomplete flow has finish %q fct %q slowdown %q, want empty", row[7], row[8], row[10])
			}
			got.Ideal = parseNs(t, row[9])
			got.Class = row[11]
			got.Retransmits = int64(atoi(row[12]))
			got.CNPs, got.RateCuts = atoi(row[13]), atoi(row[14])
			if got != f {
				t.Errorf("round trip\n got %+v\nwant %+v", got, f)
			}
		})
	}
}

func TestPortsCSV(t *testing.T) {
	ports := []sim.PortRecord{
		{Node: 4, Port: 1, NodeName: "tor0", Peer: 0, Rate: 100e9, TxPackets: 10, TxBytes: 10_000, CtrlPackets: 3,
			Marked: 2, PausesSent: 4, Resumes: 3, PausesReceived: 1, ResumesReceived: 5, PausedTime: 1_234_567, Drops: 9,
			MaxQueueBytes: 1500.5, MaxIngressBytes: 2000, MaxHeadroomBytes: 0.25, Utilisation: 0.1},
	}
	var buf bytes.Buffer
	if err := WritePortsCSV(&buf, ports); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{portsHeader, {"4", "tor0", "1", "0", "100", "10", "10000", "3", "2", "4", "3", "1", "5", "1.234567", "9",
		"1500.5", "2000", "0.25", "0.1"}}
	if !slices.EqualFunc(rows, want, slices.Equal) {
		t.Errorf("rows\n%q\nwant\n%q", rows, want)
	}

	// Columns a run could not measure (an emulation's) are left empty,
	// not written as the 0 the record holds.
	buf.Reset()
	if err := WritePortsCSV(&buf, ports, "tx_bytes", "utilisation", "window_cuts"); err != nil {
		t.Fatal(err)
	}
	if rows, err = csv.NewReader(&buf).ReadAll(); err != nil {
		t.Fatal(err)
	}
	want[1][6], want[1][18] = "", ""
	if !slices.EqualFunc(rows, want, slices.Equal) {
		t.Errorf("with tx_bytes and utilisation not measured, rows\n%q\nwant\n%q", rows, want)
	}
}

func TestQueuesAndRatesCSV(t *testing.T) {
	queues := []sim.QueueSample{{Time: 1_000_000, Node: 5, Port: 2, Prio: 3, Bytes: 4096}, {Time: 2_000_001, Node: 6, Port: 0, Prio: 0, Bytes: 1.5}}
	rates := []sim.RateSample{{Time: 1_000_000, Flow: 0, Bytes: 1000}, {Time: 2_000_000, Flow: 0, Bytes: 12_500}, {Time: 2_000_000, Flow: 7, Bytes: 0}}
	tests := []struct {
		name  string
		write func(*bytes.Buffer) error
		want  string
	}{
		{"queues", func(b *bytes.Buffer) error { return WriteQueuesCSV(b, queues) },
			"time_ns,node,port,prio,bytes\n1000.000,5,2,3,4096\n2000.001,6,0,0,1.5\n"},
		{"rates", func(b *bytes.Buffer) error { return WriteRatesCSV(b, rates, 1_000_000) },
			"time_ns,flow,bytes,gbps\n1000.000,0,1000,8\n2000.000,0,12500,100\n2000.000,7,0,0\n"},
		{"no queues", func(b *bytes.Buffer) error { return WriteQueuesCSV(b, nil) }, "time_ns,node,port,prio,bytes\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.write(&buf); err != nil {
				t.Fatal(err)
			}
			if buf.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", buf.String(), tt.want)
			}
		})
	}
	if err := WriteRatesCSV(&bytes.Buffer{}, rates, 0); err == nil {
		t.Error("WriteRatesCSV with interval 0: no error")
	}
}

func TestInferRateInterval(t *testing.T) {
	tests := []struct {
		name    string
		times   []int64
		want    int64
		wantErr bool
	}{
		{"regular", []int64{3000, 1000, 2000, 2000, 1000}, 1000, false},
		{"one time", []int64{5000, 5000}, 5000, false},
		{"none", nil, 0, true},
		{"at zero", []int64{0}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var samples []sim.RateSample
			for _, tm := range tt.times {
				samples = append(samples, sim.RateSample{Time: tm})
			}
			got, err := InferRateInterval(samples)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("InferRateInterval = %d, %v; want %d, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestFormatHelpers(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{fixed(0, 3), "0.000"},
		{fixed(1, 3), "0.001"},
		{fixed(1_234_567, 3), "1234.567"},
		{fixed(-1_500, 3), "-1.500"},
		{fixed(math.MinInt64, 3), "-9223372036854775.808"},
		{fixed(1_234_567, 6), "1.234567"},
		{float(0.1), "0.1"},
		{float(1e21), "1000000000000000000000"},
		{strconv.FormatInt(roundNs(1499), 10), "1"},
		{strconv.FormatInt(roundNs(1500), 10), "2"},
		{strconv.FormatInt(roundNs(-1500), 10), "-2"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("case %d: %q, want %q", i, tt.got, tt.want)
		}
	}
}
