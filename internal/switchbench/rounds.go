package switchbench

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/p4rcm/p4rcm/stats"
)

// Rounds collects the results of the rig run several times over (go test
// -bench Rig -args -rounds N runs every target once a round, in turn), by
// what was measured ("relay/64B", "go/rcm/64B"). A single round's ratio of a
// switch to the relay moves by 15 to 20 points on this class of machine,
// most of it the relay's own spread, so the figures worth quoting are
// over rounds: Summary gives them.
type Rounds struct {
	names []string
	by    map[string][]Result
}

// Add records one round's result of name.
func (rs *Rounds) Add(name string, r Result) {
	if rs.by == nil {
		rs.by = map[string][]Result{}
	}
	if _, ok := rs.by[name]; !ok {
		rs.names = append(rs.names, name)
	}
	rs.by[name] = append(rs.by[name], r)
}

// Repeated says whether anything was measured more than once.
func (rs *Rounds) Repeated() bool {
	for _, r := range rs.by {
		if len(r) > 1 {
			return true
		}
	}
	return false
}

// Summary is, for every name measured, its median rate, CPU per packet
// and idle latency over the rounds; and, paired round by round, for
// every switch its rate and median idle latency against each relay of
// the same frame size, for the Go target on rings (go, go-ring,
// go-ring-v3) against itself on recvmmsg and sendmmsg (go-mmsg) with the
// same program, and for each relay on rings against the same relay on
// recvmmsg and sendmmsg: the median of the rounds' ratios and their mean
// with its 95% interval. Rounds one of the two lacks are left out of a
// ratio.
func (rs *Rounds) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-22s %6s %12s %14s %8s\n", "over rounds (medians)", "rounds", "pkt/s", "cpu-ns/pkt", "p50-us")
	for _, name := range rs.names {
		r := rs.by[name]
		fmt.Fprintf(&b, "%-22s %6d %12.0f %14.0f %8.0f\n", name, len(r),
			median(r, func(x Result) float64 { return x.PPS }),
			median(r, func(x Result) float64 { return float64(x.CPUPerPacket.Nanoseconds()) }),
			median(r, func(x Result) float64 { return float64(x.P50) / float64(time.Microsecond) }))
	}
	pair := func(name, baseName string) {
		base := rs.by[baseName]
		if len(base) == 0 {
			return
		}
		sw := rs.by[name]
		n := min(len(sw), len(base))
		rates, lats := make([]float64, n), make([]float64, n)
		for i := range n {
			rates[i] = 100 * sw[i].PPS / base[i].PPS
			lats[i] = float64(sw[i].P50) / float64(base[i].P50)
		}
		baseTarget, _, _ := strings.Cut(baseName, "/")
		fmt.Fprintf(&b, "%s / %s over %d rounds: rate %s; idle latency %s\n", name, baseTarget, n, spread(rates, "%.1f", "%%"), spread(lats, "%.2f", "x"))
	}
	for _, name := range rs.names {
		target, rest, _ := strings.Cut(name, "/")
		size := rest[strings.LastIndex(rest, "/")+1:] // "rcm/64B": "64B"
		switch {
		case target == "go" || strings.HasPrefix(target, "go-") || target == "bmv2":
			for _, ceiling := range []string{"relay", "relay-process", "relay-ring", "relay-process-ring"} {
				pair(name, ceiling+"/"+size)
			}
			if target == "go" || target == "go-ring" || target == "go-ring-v3" {
				pair(name, "go-mmsg/"+rest)
			}
		case target == "relay-ring" || target == "relay-process-ring":
			pair(name, strings.TrimSuffix(target, "-ring")+"/"+size)
		}
	}
	return b.String()
}

// spread is the median of xs and, for two or more, their mean with its
// 95% interval, each number in format followed by unit (a format too:
// "%%" for a percent).
func spread(xs []float64, format, unit string) string {
	s := fmt.Sprintf("median "+format+unit, medianOf(xs))
	if iv := stats.MeanInterval(xs, 0.95); iv.Defined() {
		s += fmt.Sprintf(", mean "+format+unit+" ["+format+", "+format+"]", iv.Mean, iv.Lo, iv.Hi)
	}
	return s
}

func median(rs []Result, f func(Result) float64) float64 {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = f(r)
	}
	return medianOf(xs)
}

func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
