package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestParseGoBench(t *testing.T) {
	out := `goos: linux
BenchmarkStep/pending=1024-2         	51472311	        30.52 ns/op	       0 B/op	       0 allocs/op
BenchmarkStep/pending=1024-2         	51472311	        28.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkStep/pending=1024-2         	51472311	        29.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkIncastRate/69M-2    1  1688153251 ns/op  0.3361 agents-cores  0.9831 link-busy  0.3543 switch-cores
BenchmarkApply/k=4   1  0 ns/op  688 entries  886.2 first-entries/s
BenchmarkHostileProbe-2   	       1	  22381849 ns/op	         2.410 alone-ms	         5.617 probed-ms	         2.330 x-alone
PASS
`
	g := parseGoBench(out)
	for _, c := range []struct {
		name, unit string
		want       float64
	}{
		{"BenchmarkStep/pending=1024", "ns/op", 29},
		{"BenchmarkIncastRate/69M", "link-busy", 0.9831},
		{"BenchmarkApply/k=4", "first-entries/s", 886.2},
		{"BenchmarkHostileProbe", "x-alone", 2.33},
	} {
		got, err := g.median(c.name, c.unit)
		if err != nil || got != c.want {
			t.Errorf("%s %s: %v, %v; want %v", c.name, c.unit, got, err, c.want)
		}
	}
	if _, err := g.median("BenchmarkStep/pending=64", "ns/op"); err == nil {
		t.Error("a benchmark the output lacks: no error")
	}
}

func TestRigSummary(t *testing.T) {
	out := `over rounds (medians)  rounds        pkt/s     cpu-ns/pkt   p50-us
relay/64B                  10       372021           2592       54
go/rcm/64B                 10       265353           3436       55
relay-process-ring/64B     10       912345           1234       30
go/rcm/64B / relay over 10 rounds: rate median 71.7%, mean 72.8% [67.4, 78.1]; idle latency median 1.13x, mean 1.06x [0.92, 1.20]
relay-ring/64B / relay over 10 rounds: rate median 250.5%, mean 251.0% [240.1, 262.0]; idle latency median 0.91x, mean 0.90x [0.80, 1.00]
`
	if r := rigRatios(out)["go/rcm/64B / relay"]; r != [2]float64{71.7, 1.13} {
		t.Errorf("ratios %v", r)
	}
	if r := rigRatios(out)["relay-ring/64B / relay"]; r != [2]float64{250.5, 0.91} {
		t.Errorf("ring relay's ratios %v", r)
	}
	rates := rigRates(out)
	if rates["relay/64B"] != 372021 || rates["go/rcm/64B"] != 265353 || rates["relay-process-ring/64B"] != 912345 {
		t.Errorf("rates %v", rates)
	}
	if sw, ceiling := rigTargets("go/rcm/64B / relay"); sw != "go/rcm/64B" || ceiling != "relay/64B" {
		t.Errorf("targets %q %q", sw, ceiling)
	}
	if sw, ceiling := rigTargets("go-mmsg/rcm/64B / relay-ring"); sw != "go-mmsg/rcm/64B" || ceiling != "relay-ring/64B" {
		t.Errorf("targets %q %q", sw, ceiling)
	}
}

func TestParseJSONAfterProgress(t *testing.T) {
	var lines []simCompare
	out := "building... {50%}\n[\n  {\"scheme\": \"dcqcn\", \"cost_vs_first\": 1},\n  {\"scheme\": \"rcm\", \"cost_vs_first\": 1.16}\n]\n"
	if err := parseJSON(out, &lines); err != nil || len(lines) != 2 || lines[1].Cost != 1.16 {
		t.Errorf("%v %+v", err, lines)
	}
	if err := parseJSON("no json here", &lines); err == nil {
		t.Error("no JSON: no error")
	}
}

// BENCHMARKS.md is what make bench writes from measured.json: a page
// edited by hand, or figures kept without their page, fail here.
func TestPageIsRendered(t *testing.T) {
	data, err := os.ReadFile("measured.json")
	if err != nil {
		t.Fatal(err)
	}
	m := measured{}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	writePage(&want, m)
	got, err := os.ReadFile("../../BENCHMARKS.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want.String() {
		t.Error("BENCHMARKS.md is not what measured.json renders: run make bench (or go run ./internal/benchtable -render from the root)")
	}
	for _, a := range areas {
		if !strings.Contains(string(got), "## "+a.Title) {
			t.Errorf("BENCHMARKS.md has no table for %s", a.Title)
		}
	}
}
