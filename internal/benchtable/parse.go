package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// goBench is the metrics of `go test -bench` output: for each
// benchmark's name without its -GOMAXPROCS suffix, each unit's values, one
// per line the benchmark printed (one per -count).
type goBench map[string]map[string][]float64

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// parseGoBench reads `go test -bench` output.
func parseGoBench(out string) goBench {
	g := goBench{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		f := strings.Fields(m[2])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			if g[m[1]] == nil {
				g[m[1]] = map[string][]float64{}
			}
			g[m[1]][f[i+1]] = append(g[m[1]][f[i+1]], v)
		}
	}
	return g
}

// median is the median of name's values in unit.
func (g goBench) median(name, unit string) (float64, error) {
	vs := g[name][unit]
	if len(vs) == 0 {
		return 0, fmt.Errorf("no %s of %s in the output", unit, name)
	}
	return median(vs), nil
}

func median(vs []float64) float64 {
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// simBench is what `p4ctl sim bench --json` prints of one scenario.
type simBench struct {
	Runs            int     `json:"runs"`
	Completed       int     `json:"completed"`
	Flows           int     `json:"flows"`
	WallSeconds     float64 `json:"wall_seconds"`
	WallMedian      float64 `json:"wall_seconds_median"`
	SecondsPerSimMs float64 `json:"wall_seconds_per_simulated_ms"`
	SpeedupVsRef    float64 `json:"speedup_vs_reference"`
	ReferenceWall   float64 `json:"reference_wall_seconds"`
	Threads         int     `json:"threads"` // the parts the run took
}

// simCompare is one line of `p4ctl sim bench --compare ... --json` or
// `--threads-compare ... --json`.
type simCompare struct {
	Scheme  string   `json:"scheme"`
	Threads int      `json:"threads"`
	Bench   simBench `json:"bench"`
	Cost    float64  `json:"cost_vs_first"`
	Speedup float64  `json:"speedup_vs_first"`
}

// parseJSON decodes the JSON that ends out (progress lines may come
// before it).
func parseJSON(out string, v any) error {
	start := strings.IndexAny(out, "[{")
	for start >= 0 {
		if err := json.Unmarshal([]byte(out[start:]), v); err == nil {
			return nil
		}
		next := strings.IndexAny(out[start+1:], "[{")
		if next < 0 {
			break
		}
		start += 1 + next
	}
	return fmt.Errorf("no JSON in the output")
}

// rigRatio is a line of the switch rig's summary over rounds:
// "go/rcm/64B / relay over 3 rounds: rate median 71.7%, mean ...;
// idle latency median 1.13x, mean ...".
var rigRatio = regexp.MustCompile(`(?m)^(\S+) / (\S+) over (\d+) rounds: rate median ([0-9.]+)%.*; idle latency median ([0-9.]+)x`)

// rigRatios maps "switch / ceiling" to the medians of the rate ratio
// (percent) and of the idle latency ratio.
func rigRatios(out string) map[string][2]float64 {
	r := map[string][2]float64{}
	for _, m := range rigRatio.FindAllStringSubmatch(out, -1) {
		rate, _ := strconv.ParseFloat(m[4], 64)
		lat, _ := strconv.ParseFloat(m[5], 64)
		r[m[1]+" / "+m[2]] = [2]float64{rate, lat}
	}
	return r
}

// rigMedian is a line of the rig's table of medians over rounds:
// "go/rcm/64B   3   265353   3436   55".
var rigMedian = regexp.MustCompile(`(?m)^(\S+/\d+B)\s+(\d+)\s+([0-9.]+)\s`)

// rigRates maps each target of the rig's summary to its median pkt/s.
func rigRates(out string) map[string]float64 {
	r := map[string]float64{}
	for _, m := range rigMedian.FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(m[3], 64)
		r[m[1]] = v
	}
	return r
}

// studyCost is the last line p4ctl experiment prints: "wall time 127.39
// s for 60 runs, 1.50 s of it (1.2%) comparing, plotting and writing".
var studyCost = regexp.MustCompile(`wall time ([0-9.]+) s for (\d+) runs, ([0-9.]+) s of it \(([0-9.]+)%\)`)
