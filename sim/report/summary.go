// Package report turns a simulation's results (sim.Results) into files and
// summaries: per-flow and per-port CSV, the ns-3 RDMA simulator's fct.txt,
// queue and rate sample CSV, and a summary of flow completion times,
// slowdowns, drops and PFC activity as text and JSON.
//
// Conventions shared by every output:
//
//   - Statistics of flow completion time (FCT) and slowdown cover completed
//     flows only (FlowRecord.Finish != 0). Flows that did not complete are
//     counted, never averaged in.
//   - Percentiles use the nearest-rank definition: the p-th percentile of n
//     sorted values is the value at 1-based rank ceil(p*n/100), clamped to
//     [1, n]. No interpolation, so every percentile is an observed value;
//     for the values 1..100 the p50, p95 and p99 are 50, 95 and 99.
//   - Times in the summary are nanoseconds (float64, converted exactly from
//     the simulator's integer picoseconds); the text report shows
//     microseconds.
//   - 1 KB is 1000 bytes and 1 MB is 1000000 bytes.
//   - An empty input (no flows, no completed flows, no ports) gives zero
//     counts and zero statistics, never NaN, and empty (not null) JSON
//     arrays.
//   - Output is deterministic: maps are read in sorted key order and every
//     sort is stable with a total tie-break, so equal inputs give identical
//     bytes.
package report

import (
	"cmp"
	"math"
	"slices"

	"github.com/p4rcm/p4rcm/sim"
)

// DefaultEqualCountBins is the number of equal-count size bins Summarize
// makes when SummaryOptions.EqualCountBins is zero.
const DefaultEqualCountBins = 20

// SummaryOptions tune Summarize. The zero value is the usual report.
type SummaryOptions struct {
	// EqualCountBins is the number of equal-count size bins over the
	// completed flows sorted by size: 0 means DefaultEqualCountBins, a
	// negative number means none. With fewer completed flows than bins,
	// there is one bin per flow, so no bin is ever empty.
	EqualCountBins int
}

// FCTStats are completion-time and slowdown statistics over a set of
// completed flows. All fields are zero when Count is zero.
type FCTStats struct {
	Count        int     `json:"count"`
	MeanFCTNs    float64 `json:"mean_fct_ns"`
	P50FCTNs     float64 `json:"p50_fct_ns"`
	P95FCTNs     float64 `json:"p95_fct_ns"`
	P99FCTNs     float64 `json:"p99_fct_ns"`
	MeanSlowdown float64 `json:"mean_slowdown"`
	P50Slowdown  float64 `json:"p50_slowdown"`
	P95Slowdown  float64 `json:"p95_slowdown"`
	P99Slowdown  float64 `json:"p99_slowdown"`
}

// FixedBin is one of the fixed flow-size bins [0,10KB), [10KB,100KB),
// [100KB,1MB), [1MB,10MB) and [10MB,inf): it holds the completed flows
// with LoBytes <= size < HiBytes, where HiBytes 0 means no upper bound.
type FixedBin struct {
	Label   string `json:"label"`
	LoBytes int64  `json:"lo_bytes"`
	HiBytes int64  `json:"hi_bytes"`
	FCTStats
}

// EqualBin is one of the equal-count size bins: a run of consecutive
// completed flows in (size, ID) order. MinBytes and MaxBytes are the
// smallest and largest sizes in it, both inclusive; flows of one size may
// straddle two neighbouring bins.
type EqualBin struct {
	MinBytes int64 `json:"min_bytes"`
	MaxBytes int64 `json:"max_bytes"`
	FCTStats
}

// ClassStats are the statistics of the flows of one class. Flows counts
// all of them, FCTStats.Count the completed ones. ThroughputGbps is the
// mean size of the completed flows in bits over their mean FCT (bits per
// nanosecond, which is Gbit/s); MeanSizeBytes is that mean size.
// GoodputGbps is the mean over all the class's flows, completed or not, of
// the payload delivered over the time the flow was active (from its start
// to its finish, or to the end of the run): what long-running flows get.
type ClassStats struct {
	Class          string  `json:"class"`
	Flows          int     `json:"flows"`
	MeanSizeBytes  float64 `json:"mean_size_bytes"`
	ThroughputGbps float64 `json:"throughput_gbps"`
	GoodputGbps    float64 `json:"goodput_gbps"`
	FCTStats
}

// ReasonCount is the number of packets dropped for one reason.
type ReasonCount struct {
	Reason string `json:"reason"`
	Count  int64  `json:"count"`
}

// DropStats sum the switches' drops. ByReason is sorted by reason name.
// Lossless counts drops on lossless priorities, which PFC must prevent: a
// non-zero value is a fault of the run.
type DropStats struct {
	Total    int64         `json:"total"`
	ByReason []ReasonCount `json:"by_reason"`
	Lossless int64         `json:"lossless"`
}

// PFCStats sum the switch ports' PFC counters. PortsPausing counts ports
// that sent at least one PAUSE frame, PortsPaused those whose egress was
// held by PFC for some time, Ports all switch ports. PAUSE frames
// (quanta > 0) and RESUME frames (quanta 0) are counted apart everywhere:
// PausesReceived and ResumesReceived by switch ports, HostPauses and
// HostResumes by host NICs.
type PFCStats struct {
	PausesSent      int64   `json:"pauses_sent"`
	ResumesSent     int64   `json:"resumes_sent"`
	PausesReceived  int64   `json:"pauses_received"`
	ResumesReceived int64   `json:"resumes_received"`
	HostPauses      int64   `json:"host_pauses"`
	HostResumes     int64   `json:"host_resumes"`
	PausedNs        float64 `json:"paused_ns"`
	PortsPausing    int     `json:"ports_pausing"`
	PortsPaused     int     `json:"ports_paused"`
	Ports           int     `json:"ports"`
}

// RunStats are the run's own figures. EndNs is the simulated time at the
// end, LastFinishNs the completion time of the last flow.
type RunStats struct {
	Events       uint64  `json:"events"`
	DataPackets  int64   `json:"data_packets"`
	PacketHops   int64   `json:"packet_hops"`
	EndNs        float64 `json:"end_ns"`
	LastFinishNs float64 `json:"last_finish_ns"`
	// OutOfOrder counts data packets that arrived past a gap (losses, or
	// reordering by SAR detours).
	OutOfOrder int64 `json:"out_of_order"`
	// Retransmits counts data packets sent again (go-back-N), and
	// RetransmitFlows the flows that sent any.
	Retransmits     int64 `json:"retransmits"`
	RetransmitFlows int   `json:"retransmit_flows"`
	// RateSamples counts the samples of rates.csv (0: rates not sampled).
	RateSamples int `json:"rate_samples"`
}

// RCMStats are the switches' RCM counters summed; all zero without RCM.
// The two kinds of CN sent are disjoint: CongestionCNsSent name harmful
// flows with a degree, ClearingCNsSent (degree 0) say a region has
// cleared; CNsReceived counts both kinds.
type RCMStats struct {
	CongestionCNsSent int64 `json:"congestion_cns_sent"`
	ClearingCNsSent   int64 `json:"clearing_cns_sent"`
	CNsReceived       int64 `json:"cns_received"`
	Held              int64 `json:"held_packets"`
	Cuts              int64 `json:"window_cuts"`
	Detours           int64 `json:"detours"`
}

// Summary is what a run amounts to. FCT covers all completed flows;
// Classes is empty unless some flow has a non-empty class, and is then
// sorted by class name with the flows without a class under "".
type Summary struct {
	Flows      int          `json:"flows"`
	Completed  int          `json:"completed"`
	Incomplete int          `json:"incomplete"`
	FCT        FCTStats     `json:"fct"`
	SizeBins   []FixedBin   `json:"size_bins"`
	EqualBins  []EqualBin   `json:"equal_count_bins"`
	Classes    []ClassStats `json:"classes"`
	Drops      DropStats    `json:"drops"`
	PFC        PFCStats     `json:"pfc"`
	CNPs       int64        `json:"cnps"`
	RCM        RCMStats     `json:"rcm"`
	Run        RunStats     `json:"run"`
	Faults     []string     `json:"faults"`
	// NotMeasured is the run's (sim.Results.NotMeasured): figures above
	// that are 0 because the run could not measure them.
	NotMeasured []string `json:"not_measured"`
}

// fixedBins are the bounds of the fixed size bins; hi 0 is unbounded.
var fixedBins = []struct {
	label  string
	lo, hi int64
}{
	{"[0,10KB)", 0, 10_000},
	{"[10KB,100KB)", 10_000, 100_000},
	{"[100KB,1MB)", 100_000, 1_000_000},
	{"[1MB,10MB)", 1_000_000, 10_000_000},
	{"[10MB,inf)", 10_000_000, 0},
}

// fixedBinIndex is the index in fixedBins of the bin holding size. Sizes
// below zero (not produced by the simulator) fall in the first bin.
func fixedBinIndex(size int64) int {
	for i := len(fixedBins) - 1; i > 0; i-- {
		if size >= fixedBins[i].lo {
			return i
		}
	}
	return 0
}

// Summarize computes the summary of r. A nil r summarises as an empty run.
func Summarize(r *sim.Results, opts SummaryOptions) Summary {
	if r == nil {
		r = &sim.Results{}
	}
	s := Summary{
		Flows:       len(r.Flows),
		CNPs:        r.CNPs,
		Classes:     []ClassStats{},
		Faults:      append([]string{}, r.Faults...),
		NotMeasured: append([]string{}, r.NotMeasured...),
		Run: RunStats{
			Events: r.Events, DataPackets: r.DataPackets, PacketHops: r.PacketHops,
			EndNs: psToNs(r.End), LastFinishNs: psToNs(r.LastFinish), OutOfOrder: r.OutOfOrder,
			Retransmits: r.Retransmits, RetransmitFlows: r.RetransmitFlows,
			RateSamples: len(r.RateSamples),
		},
		RCM: RCMStats{CongestionCNsSent: r.RCM.CNsSent, ClearingCNsSent: r.RCM.ClearCNsSent,
			CNsReceived: r.RCM.CNsReceived, Held: r.RCM.Held, Cuts: r.RCM.Cuts, Detours: r.RCM.Detours},
	}
	done := make([]sim.FlowRecord, 0, len(r.Flows))
	hasClass := false
	for _, f := range r.Flows {
		if completed(f) {
			done = append(done, f)
		}
		hasClass = hasClass || f.Class != ""
	}
	s.Completed = len(done)
	s.Incomplete = s.Flows - s.Completed
	s.FCT = fctStats(done)

	// Fixed bins.
	byBin := make([][]sim.FlowRecord, len(fixedBins))
	for _, f := range done {
		i := fixedBinIndex(f.Size)
		byBin[i] = append(byBin[i], f)
	}
	s.SizeBins = make([]FixedBin, len(fixedBins))
	for i, b := range fixedBins {
		s.SizeBins[i] = FixedBin{Label: b.label, LoBytes: b.lo, HiBytes: b.hi, FCTStats: fctStats(byBin[i])}
	}

	s.EqualBins = equalBins(done, opts.EqualCountBins)

	if hasClass {
		s.Classes = classStats(r.Flows, r.End)
	}

	// Drops, in reason order.
	s.Drops.ByReason = make([]ReasonCount, 0, len(r.Drops))
	for reason, n := range r.Drops {
		s.Drops.ByReason = append(s.Drops.ByReason, ReasonCount{Reason: reason, Count: n})
		s.Drops.Total += n
	}
	slices.SortFunc(s.Drops.ByReason, func(a, b ReasonCount) int { return cmp.Compare(a.Reason, b.Reason) })
	s.Drops.Lossless = r.LosslessDrops

	// PFC.
	s.PFC.HostPauses, s.PFC.HostResumes = r.HostPauses, r.HostResumes
	s.PFC.Ports = len(r.Ports)
	var paused int64
	for _, p := range r.Ports {
		s.PFC.PausesSent += p.PausesSent
		s.PFC.ResumesSent += p.Resumes
		s.PFC.PausesReceived += p.PausesReceived
		s.PFC.ResumesReceived += p.ResumesReceived
		paused += p.PausedTime
		if p.PausesSent > 0 {
			s.PFC.PortsPausing++
		}
		if p.PausedTime > 0 {
			s.PFC.PortsPaused++
		}
	}
	s.PFC.PausedNs = psToNs(paused)
	return s
}

// completed tells whether the flow finished.
func completed(f sim.FlowRecord) bool { return f.Finish != 0 }

// psToNs converts picoseconds to nanoseconds.
func psToNs(ps int64) float64 { return float64(ps) / 1e3 }

// finite replaces NaN and infinities (which only hand-made records can
// hold) by 0, so that no statistic or JSON encoding is poisoned.
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// percentile is the nearest-rank p-th percentile (0 < p <= 100) of the
// ascending values: the value at 1-based rank ceil(p*n/100), clamped to
// [1, n]; the zero value for no values.
func percentile[T int64 | float64](sorted []T, p int) T {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := (p*n + 99) / 100
	rank = max(1, min(rank, n))
	return sorted[rank-1]
}

// meanInt64 is the mean of values, summed in the given order.
func meanInt64(values []int64) float64 {
	if len(values) == 0 {
		return 0
	}
	var sum float64
	for _, v := range values {
		sum += float64(v)
	}
	return sum / float64(len(values))
}

// meanFloat is the mean of values, summed in the given order.
func meanFloat(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	var sum float64
	for _, v := range values {
		sum += v
	}
	return sum / float64(len(values))
}

// fctStats computes the statistics of completed flows. Means are summed
// over the sorted values, so they do not depend on the flows' order.
func fctStats(flows []sim.FlowRecord) FCTStats {
	if len(flows) == 0 {
		return FCTStats{}
	}
	fct := make([]int64, len(flows))
	slow := make([]float64, len(flows))
	for i, f := range flows {
		fct[i] = f.FCT
		slow[i] = finite(f.Slowdown)
	}
	slices.Sort(fct)
	slices.Sort(slow)
	return FCTStats{
		Count:        len(flows),
		MeanFCTNs:    finite(meanInt64(fct) / 1e3),
		P50FCTNs:     psToNs(percentile(fct, 50)),
		P95FCTNs:     psToNs(percentile(fct, 95)),
		P99FCTNs:     psToNs(percentile(fct, 99)),
		MeanSlowdown: finite(meanFloat(slow)),
		P50Slowdown:  percentile(slow, 50),
		P95Slowdown:  percentile(slow, 95),
		P99Slowdown:  percentile(slow, 99),
	}
}

// equalBins splits the completed flows, sorted by size then ID, into
// min(bins, len(done)) runs whose lengths differ by at most one; bins 0
// means DefaultEqualCountBins and a negative bins none.
func equalBins(done []sim.FlowRecord, bins int) []EqualBin {
	if bins == 0 {
		bins = DefaultEqualCountBins
	}
	n := len(done)
	k := min(max(bins, 0), n)
	out := make([]EqualBin, 0, k)
	if k == 0 {
		return out
	}
	sorted := slices.Clone(done)
	slices.SortStableFunc(sorted, func(a, b sim.FlowRecord) int {
		return cmp.Or(cmp.Compare(a.Size, b.Size), cmp.Compare(a.ID, b.ID))
	})
	for i := range k {
		part := sorted[i*n/k : (i+1)*n/k]
		out = append(out, EqualBin{
			MinBytes: part[0].Size,
			MaxBytes: part[len(part)-1].Size,
			FCTStats: fctStats(part),
		})
	}
	return out
}

// classStats groups all flows by class, sorted by class name.
func classStats(flows []sim.FlowRecord, runEnd int64) []ClassStats {
	type group struct {
		all   int
		done  []sim.FlowRecord
		rates []float64 // goodput of each flow, Gb/s
	}
	groups := map[string]*group{}
	for _, f := range flows {
		g := groups[f.Class]
		if g == nil {
			g = &group{}
			groups[f.Class] = g
		}
		g.all++
		if completed(f) {
			g.done = append(g.done, f)
		}
		end := f.Finish
		if end == 0 {
			end = runEnd
		}
		if end > f.Start {
			g.rates = append(g.rates, float64(f.Delivered)*8/float64(end-f.Start)*1e3) // bits/ps to Gb/s
		}
	}
	names := make([]string, 0, len(groups))
	for name := range groups {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make([]ClassStats, 0, len(names))
	for _, name := range names {
		g := groups[name]
		cs := ClassStats{Class: name, Flows: g.all, FCTStats: fctStats(g.done)}
		if len(g.rates) > 0 {
			slices.Sort(g.rates)
			sum := 0.0
			for _, r := range g.rates {
				sum += r
			}
			cs.GoodputGbps = finite(sum / float64(len(g.rates)))
		}
		if len(g.done) > 0 {
			sizes := make([]int64, len(g.done))
			for i, f := range g.done {
				sizes[i] = f.Size
			}
			slices.Sort(sizes)
			cs.MeanSizeBytes = finite(meanInt64(sizes))
			if cs.MeanFCTNs > 0 {
				cs.ThroughputGbps = finite(cs.MeanSizeBytes * 8 / cs.MeanFCTNs)
			}
		}
		out = append(out, cs)
	}
	return out
}
