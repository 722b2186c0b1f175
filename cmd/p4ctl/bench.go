package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/p4rcm/p4rcm/internal/outdir"
	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/report"
	"github.com/p4rcm/p4rcm/sim/scenario"
	"github.com/spf13/cobra"
)

// nsReference is the ns-3 RDMA simulator's run of the benchmark input
// with one scheme's reference configuration, recorded on a machine of
// this project's class (2 cores) with its optimised build: the figure to
// beat. Its output is deterministic, so its simulated time and slowdowns
// hold anywhere; its wall time does not: --reference-seconds takes it as
// measured on the machine of the run (`make bench NS3=DIR` runs ns-3 and
// passes it), which makes the ratios same-machine ones. Figures not
// recorded are 0.
type nsReference struct {
	Config                                                           string
	WallSeconds, UserSeconds, SimMillis, DataPackets, Events, RSSMiB float64
	P50, P95, P99                                                    float64
}

// references are the recorded runs by p4rcm's name of the scheme. The
// simulated time is to the last completion (from its fct.txt); DCQCN's
// wall and CPU times are from an idle machine, the others' from one
// running other jobs, which only --reference-seconds corrects.
var references = map[string]nsReference{
	"dcqcn":  {"config_fat320_ws30_dcqcn.txt", 278, 245.6, 16.14, 11.22e6, 253.3e6, 343, 1.19, 4.23, 6.08},
	"hpcc":   {"config_fat320_ws30_hp95.txt", 855, 0, 14.90, 0, 0, 340, 1.209, 2.929, 4.406},
	"dctcp":  {"config_fat320_ws30_dctcp.txt", 779, 0, 14.56, 0, 0, 345, 1.220, 3.022, 4.601},
	"timely": {"config_fat320_ws30_timely.txt", 521, 0, 16.15, 0, 0, 363, 1.197, 4.996, 8.524},
}

// referencePreset is the scenario the reference ran.
const referencePreset = "bench-fat320"

// targetSpeedup is the target against the reference: 30 times its wall
// seconds per simulated millisecond, for each scheme.
const targetSpeedup = 30

// minThreadsSpeedup is issue 34's target for 2 threads on 2 cores.
const minThreadsSpeedup = 1.7

// BenchResult is what `p4ctl sim bench` measures.
type BenchResult struct {
	Scenario         string     `json:"scenario"`
	Runs             int        `json:"runs"`
	Flows            int        `json:"flows"`
	Completed        int        `json:"completed"`
	DataPackets      int64      `json:"data_packets"`
	PacketHops       int64      `json:"packet_hops"`
	Events           uint64     `json:"events"`
	SimMillis        float64    `json:"simulated_ms"`
	WallSeconds      float64    `json:"wall_seconds"` // the fastest run
	WallMedian       float64    `json:"wall_seconds_median"`
	UserSeconds      float64    `json:"user_cpu_seconds"` // of the fastest run
	SecondsPerSimMs  float64    `json:"wall_seconds_per_simulated_ms"`
	PacketsPerSecond float64    `json:"data_packets_per_wall_second"`
	NsPerHop         float64    `json:"ns_per_packet_hop"`
	PeakRSSMiB       float64    `json:"peak_rss_mib"`
	P50, P95, P99    float64    `json:"-"`
	Slowdown         [3]float64 `json:"fct_slowdown_p50_p95_p99"`
	SpeedupVsRef     float64    `json:"speedup_vs_reference,omitempty"`
	// TargetMet is set on the benchmark's own scenario only.
	TargetMet *bool    `json:"target_met,omitempty"`
	Faults    []string `json:"faults,omitempty"`
	Threads   int      `json:"threads"`
	// The comparison with the reference, for the benchmark's own scenario
	// only (with one of the reference's schemes): the scheme, the
	// reference's wall seconds, whether they were measured on
	// this machine (--reference-seconds) or are the recorded figure from
	// another, and the ratio of wall seconds per simulated millisecond.
	ReferenceScheme      string  `json:"reference_scheme,omitempty"`
	ReferenceWallSeconds float64 `json:"reference_wall_seconds,omitempty"`
	ReferenceThisMachine bool    `json:"reference_this_machine,omitempty"`
	// Parallel are the parallel run's figures (more than one thread).
	Parallel *sim.ParallelStats `json:"parallel,omitempty"`
	// digest is a hash of the run's results, to tell runs apart.
	digest [sha256.Size]byte
}

func newSimBenchCmd() *cobra.Command {
	o := &simOptions{}
	var runs int
	var asJSON bool
	var cpuProfile, out string
	var compare []string
	var threadsList []int
	var refSeconds float64
	var refTimeFile string
	cmd := &cobra.Command{
		Use:   "bench [SCENARIO.yaml]",
		Short: "Time the simulator on the ns-3 benchmark (320 hosts, 6,706 web-search flows)",
		Long: `bench runs the benchmark scenario (by default the ns-3 RDMA simulator's own
320-host fat tree and web-search flow file, DCQCN with its settings) and
reports wall seconds per simulated millisecond, data packets per wall
second, nanoseconds per packet-hop, peak RSS and the FCT slowdown
percentiles. With --runs N it reports the fastest run and the median.

On the benchmark scenario itself (the bench-fat320 preset, unchanged but
for --scheme dcqcn, hpcc, timely or dctcp) it sets the figures beside the
reference simulator's run of that scheme and gives their ratios.
The reference's recorded wall time comes from another machine (of this
project's class, 2 cores): a ratio against it says how the two compare
only as far as the machines do. --reference-seconds takes the
reference's wall time measured on this machine, and the ratios become
same-machine ones; 'make bench NS3=DIR' runs ns-3 built in DIR and
passes its time. Any other scenario gets its figures
alone: the reference ran another workload.

With --threads-compare 1,2 it times the scenario at each number of
threads --runs times, taking turns, and reports each one's speed-up over
the first, checking that every run gave the same results.

With --compare dcqcn,rcm it times each scheme --runs times on the same
scenario, taking turns so that the machine's drift hits all alike, and
reports each scheme's cost (fastest run, and median) against the first
scheme's: how much RCM adds to the simulator's work.`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runs < 1 {
				return usageErrorf("--runs must be at least 1")
			}
			if refTimeFile != "" {
				if refSeconds > 0 {
					return usageErrorf("give --reference-seconds or --reference-time, not both")
				}
				var err error
				if refSeconds, err = readTimeV(refTimeFile); err != nil {
					return usageErrorf("--reference-time: %v", err)
				}
			}
			s, err := o.load(cmd, args)
			if err != nil {
				return err
			}
			var dir *outdir.Dir
			if out != "" {
				if dir, err = prepareOut(out); err != nil {
					return err
				}
				defer dir.Abort()
			}
			if cpuProfile != "" {
				f, err := os.Create(cpuProfile)
				if err != nil {
					return usageErrorf("--cpuprofile %s: %v", cpuProfile, errors.Unwrap(err))
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
				defer pprof.StopCPUProfile()
			}
			if len(compare) > 0 && len(threadsList) > 0 {
				return usageErrorf("give --compare or --threads-compare, not both")
			}
			if len(compare) > 0 {
				return benchCompare(cmd, s, o, compare, runs, asJSON, dir)
			}
			if len(threadsList) > 0 {
				return benchThreads(cmd, s, o, threadsList, runs, asJSON, dir)
			}
			b := &benchRuns{keep: dir != nil}
			for i := 0; i < runs; i++ {
				if err := b.run(cmd, s, o, 0); err != nil {
					return err
				}
			}
			best := b.result()
			best.PeakRSSMiB = peakRSSMiB()
			if err := setReference(&best, s, refSeconds); err != nil {
				return err
			}
			if dir != nil {
				if err := b.write(dir.Path()); err != nil {
					return err
				}
				if err := dir.Commit(); err != nil {
					return err
				}
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), best)
			}
			return writeBench(cmd, best)
		},
	}
	o.addFlags(cmd, referencePreset)
	o.addThreadsFlag(cmd)
	cmd.Flags().IntVar(&runs, "runs", 1, "how many times to run; the fastest is reported")
	cmd.Flags().Var(&parsedValue[[]int]{dst: &threadsList, parse: parseThreadsList, typ: "list"}, "threads-compare",
		"time the scenario at each of these numbers of threads, runs interleaved, and report each one's speed-up over the first (e.g. 1,2,auto; auto: the default's choice, free to take its parts on one thread)")
	cmd.Flags().Var(&parsedValue[float64]{dst: &refSeconds, parse: parsePositive, typ: "seconds"}, "reference-seconds",
		"the reference simulator's wall time on the benchmark measured on this machine, seconds (default: the recorded figure, from another machine)")
	cmd.Flags().StringVar(&refTimeFile, "reference-time", "", "the reference simulator's wall time on this machine, read from what /usr/bin/time -v wrote of its run")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringSliceVar(&compare, "compare", nil, "time these schemes on the same scenario, runs interleaved, and report each one's cost against the first's (e.g. dcqcn,rcm)")
	cmd.Flags().StringVarP(&out, "out", "o", "", "also write the fastest run's results (what 'p4ctl sim run' writes, fct.txt included) into this directory; with --compare, one directory per scheme in it")
	cmd.Flags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the runs to this file (the build's cmd/p4ctl/default.pgo comes from one)")
	return cmd
}

// benchRuns collects the timed runs of one scenario.
type benchRuns struct {
	walls []float64
	best  BenchResult
	// keep says to hold on to the fastest run's results, for --out.
	keep bool
	// differ says that two runs gave different results.
	differ       bool
	results      *sim.Results
	rateInterval int64
}

// write writes the fastest run's results into dir (report.WriteDir).
func (b *benchRuns) write(dir string) error {
	_, err := report.WriteDir(dir, b.results, report.DirOptions{RateInterval: b.rateInterval})
	return err
}

// run simulates s once, timed, on threads threads (0: --threads, or
// the default), keeping the result if it is the fastest.
func (b *benchRuns) run(cmd *cobra.Command, s *scenario.Scenario, o *simOptions, threads int) error {
	quiet := o.quiet
	cfg, err := build(s, cmd.ErrOrStderr(), quiet)
	if err != nil {
		return err
	}
	p := newProgress(cmd.ErrOrStderr(), quiet)
	cfg.Threads = threads
	if threads == 0 {
		o.setThreads(&cfg)
	}
	userBefore := userCPU()
	start := time.Now()
	n, err := newNetwork(cmd, cfg, p, quiet)
	if err != nil {
		return err
	}
	if len(b.walls) == 0 {
		threadsNote(cmd.ErrOrStderr(), n, cfg.Threads, quiet)
	}
	n.Run()
	res := n.Results()
	wall := time.Since(start).Seconds()
	user := userCPU() - userBefore
	p.finish()
	digest := resultsDigest(res)
	if len(b.walls) > 0 && digest != b.best.digest {
		b.differ = true
	}
	if len(b.walls) == 0 || wall < b.best.WallSeconds {
		b.best = benchResult(s.Name, cfg, res, wall, user)
		b.best.Threads, b.best.digest = n.Threads(), digest
		if n.Threads() > 1 {
			st := n.ParallelStats()
			b.best.Parallel = &st
		}
		if b.keep {
			b.results, b.rateInterval = res, cfg.RateSampling.Interval
		}
	}
	b.walls = append(b.walls, wall)
	return nil
}

// resultsDigest hashes what a run writes: flows, ports and the summary.
func resultsDigest(res *sim.Results) [sha256.Size]byte {
	h := sha256.New()
	_ = report.WriteFlowsCSV(h, res.Flows)
	_ = report.WritePortsCSV(h, res.Ports)
	_ = report.WriteSummaryJSON(h, report.Summarize(res, report.SummaryOptions{}))
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

// setReference sets b's comparison with the reference when s is the
// benchmark's own scenario; seconds is --reference-seconds (0: the
// recorded figure).
func setReference(b *BenchResult, s *scenario.Scenario, seconds float64) error {
	scheme, err := referenceScheme(s)
	if err != nil || scheme == "" {
		if seconds > 0 && err == nil {
			return usageErrorf("--reference-seconds: the reference ran the %s preset as it is, with one of the schemes %s; this scenario is another", referencePreset, referenceSchemes())
		}
		return err
	}
	ref := references[scheme]
	b.ReferenceScheme = scheme
	b.ReferenceWallSeconds, b.ReferenceThisMachine = ref.WallSeconds, seconds > 0
	if seconds > 0 {
		b.ReferenceWallSeconds = seconds
	}
	if b.SecondsPerSimMs > 0 {
		b.SpeedupVsRef = (b.ReferenceWallSeconds / ref.SimMillis) / b.SecondsPerSimMs
		met := b.SpeedupVsRef >= targetSpeedup && len(b.Faults) == 0
		b.TargetMet = &met
	}
	return nil
}

// referenceScheme is the scheme of the reference run s is, "" if s is
// another scenario: the benchmark preset, nothing in it changed but the
// scheme, one of those the reference ran.
func referenceScheme(s *scenario.Scenario) (string, error) {
	scheme := s.Scheme
	if scheme == "" {
		scheme = scenario.DefaultScheme
	}
	if _, ok := references[scheme]; !ok {
		return "", nil
	}
	ref, err := scenario.LoadPreset(referencePreset)
	if err != nil {
		return "", err
	}
	if err := ref.Set("scheme", scheme); err != nil {
		return "", err
	}
	want, err := ref.Canonical()
	if err != nil {
		return "", err
	}
	own, err := s.Clone()
	if err != nil {
		return "", err
	}
	if err := own.Set("scheme", scheme); err != nil {
		return "", err
	}
	got, err := own.Canonical()
	if err != nil || !bytes.Equal(got, want) {
		return "", err
	}
	return scheme, nil
}

// referenceSchemes lists the schemes the reference ran.
func referenceSchemes() string {
	var names []string
	for n := range references {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// result is the fastest run, with the count and median of all.
func (b *benchRuns) result() BenchResult {
	walls := append([]float64(nil), b.walls...)
	sort.Float64s(walls)
	r := b.best
	r.Runs, r.WallMedian = len(walls), walls[len(walls)/2]
	return r
}

// maxRCMCost is issue 4's bound: RCM may add at most 30% to the
// simulator's cost over DCQCN on the benchmark scenario.
const maxRCMCost = 1.30

// SchemeCost is one scheme's line of `p4ctl sim bench --compare`.
type SchemeCost struct {
	Scheme string      `json:"scheme"`
	Bench  BenchResult `json:"bench"`
	// Cost and CostMedian are the fastest and the median wall time over
	// the first scheme's.
	Cost       float64 `json:"cost_vs_first"`
	CostMedian float64 `json:"cost_vs_first_median"`
}

// benchCompare times schemes on s, runs interleaved, and prints their
// costs against the first.
func benchCompare(cmd *cobra.Command, s *scenario.Scenario, o *simOptions, schemes []string, runs int, asJSON bool, dir *outdir.Dir) error {
	scens := make([]*scenario.Scenario, len(schemes))
	for i, name := range schemes {
		c, err := s.Clone()
		if err != nil {
			return err
		}
		if err := c.Set("scheme", name); err != nil {
			return usageErrorf("--compare: %v", err)
		}
		scens[i] = c
	}
	all := make([]benchRuns, len(schemes))
	for i := range all {
		all[i].keep = dir != nil
	}
	for r := 0; r < runs; r++ {
		for i := range schemes {
			if err := all[i].run(cmd, scens[i], o, 0); err != nil {
				return fmt.Errorf("--compare %s: %w", schemes[i], err)
			}
		}
	}
	if dir != nil {
		for i := range all {
			if err := all[i].write(filepath.Join(dir.Path(), schemes[i])); err != nil {
				return err
			}
		}
		if err := dir.Commit(); err != nil {
			return err
		}
	}
	costs := make([]SchemeCost, len(schemes))
	base := all[0].result()
	for i := range all {
		b := all[i].result()
		costs[i] = SchemeCost{Scheme: schemes[i], Bench: b,
			Cost: b.WallSeconds / base.WallSeconds, CostMedian: b.WallMedian / base.WallMedian}
	}
	if asJSON {
		return writeJSON(cmd.OutOrStdout(), costs)
	}
	pr := &printer{w: cmd.OutOrStdout()}
	pr.f("benchmark %s: %d flows; %d interleaved run(s) per scheme, fastest and median\n\n", s.Name, costs[0].Bench.Flows, runs)
	tw := tabwriter.NewWriter(pr, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "scheme\twall s\tmedian s\tcost vs %s\tmedian cost\tevents\tpacket-hops\tns/hop\tsimulated ms\tslowdown p50/p95/p99\tcompleted\n", schemes[0])
	for _, c := range costs {
		b := c.Bench
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.3f\t%.3f\t%.1f M\t%.1f M\t%.0f\t%.2f\t%.2f/%.2f/%.2f\t%d/%d\n", c.Scheme, b.WallSeconds, b.WallMedian,
			c.Cost, c.CostMedian, float64(b.Events)/1e6, float64(b.PacketHops)/1e6, b.NsPerHop, b.SimMillis,
			b.Slowdown[0], b.Slowdown[1], b.Slowdown[2], b.Completed, b.Flows)
	}
	tw.Flush()
	if schemes[0] == "dcqcn" {
		for _, c := range costs[1:] {
			if c.Scheme != "rcm" && c.Scheme != "rcm-rcc" {
				continue
			}
			verdict := "MET"
			if c.Cost > maxRCMCost {
				verdict = "NOT MET"
			}
			pr.f("\ntarget: %s at most %.2fx the cost of dcqcn: %.3f, %s\n", c.Scheme, maxRCMCost, c.Cost, verdict)
		}
	}
	for _, c := range costs {
		for _, f := range c.Bench.Faults {
			pr.f("FAULT (%s): %s\n", c.Scheme, f)
		}
	}
	return pr.err
}

func benchResult(name string, cfg sim.Config, res *sim.Results, wall, user float64) BenchResult {
	sum := report.Summarize(res, report.SummaryOptions{})
	first := int64(-1)
	for _, f := range cfg.Flows {
		if first < 0 || f.Start < first {
			first = f.Start
		}
	}
	simMs := float64(res.LastFinish-first) / 1e9
	b := BenchResult{Scenario: name, Flows: len(res.Flows), Completed: res.Completed, DataPackets: res.DataPackets,
		PacketHops: res.PacketHops, Events: res.Events, SimMillis: simMs, WallSeconds: wall, UserSeconds: user,
		Faults: res.Faults}
	if simMs > 0 {
		b.SecondsPerSimMs = wall / simMs
	}
	b.PacketsPerSecond = float64(res.DataPackets) / wall
	if res.PacketHops > 0 {
		b.NsPerHop = wall * 1e9 / float64(res.PacketHops)
	}
	b.Slowdown = [3]float64{sum.FCT.P50Slowdown, sum.FCT.P95Slowdown, sum.FCT.P99Slowdown}
	return b
}

func writeBench(cmd *cobra.Command, b BenchResult) error {
	pr := &printer{w: cmd.OutOrStdout()}
	pr.f("benchmark %s: %d flows, %d run(s) on %s, fastest reported\n\n", b.Scenario, b.Flows, b.Runs, threadsText(b.Threads))
	tw := tabwriter.NewWriter(pr, 0, 0, 2, ' ', 0)
	if b.ReferenceWallSeconds == 0 {
		// Another workload than the reference's: no ratio means anything.
		fmt.Fprintf(tw, "\tp4rcm\n")
		fmt.Fprintf(tw, "flows completed\t%d/%d\n", b.Completed, b.Flows)
		fmt.Fprintf(tw, "data packets\t%.2f M\n", float64(b.DataPackets)/1e6)
		fmt.Fprintf(tw, "simulated time to last completion\t%.2f ms\n", b.SimMillis)
		fmt.Fprintf(tw, "wall time\t%.1f s (median %.1f s)\n", b.WallSeconds, b.WallMedian)
		fmt.Fprintf(tw, "user CPU\t%.1f s\n", b.UserSeconds)
		fmt.Fprintf(tw, "wall seconds per simulated ms\t%.3f\n", b.SecondsPerSimMs)
		fmt.Fprintf(tw, "data packets per wall second\t%.0f k\n", b.PacketsPerSecond/1e3)
		fmt.Fprintf(tw, "events executed\t%.1f M\n", float64(b.Events)/1e6)
		fmt.Fprintf(tw, "ns per packet-hop\t%.0f\n", b.NsPerHop)
		fmt.Fprintf(tw, "peak RSS\t%.0f MiB\n", b.PeakRSSMiB)
		fmt.Fprintf(tw, "FCT slowdown p50/p95/p99\t%.2f/%.2f/%.2f\n", b.Slowdown[0], b.Slowdown[1], b.Slowdown[2])
		tw.Flush()
		pr.f("\nno comparison with the reference: it ran the %s preset as it is, another workload\n", referencePreset)
		for _, f := range b.Faults {
			pr.f("FAULT: %s\n", f)
		}
		return pr.err
	}
	ref := references[b.ReferenceScheme]
	refWall := b.ReferenceWallSeconds
	refRate := refWall / ref.SimMillis
	where := "recorded on another machine"
	if b.ReferenceThisMachine {
		where = "wall time measured on this machine"
	}
	fmt.Fprintf(tw, "\tp4rcm\treference (ns-3 %s, %s)\tratio\n", b.ReferenceScheme, where)
	fmt.Fprintf(tw, "flows completed\t%d/%d\t6706/6706\t\n", b.Completed, b.Flows)
	if ref.DataPackets > 0 {
		fmt.Fprintf(tw, "data packets\t%.2f M\t%.2f M\t\n", float64(b.DataPackets)/1e6, ref.DataPackets/1e6)
	} else {
		fmt.Fprintf(tw, "data packets\t%.2f M\t\t\n", float64(b.DataPackets)/1e6)
	}
	fmt.Fprintf(tw, "simulated time to last completion\t%.2f ms\t%.2f ms\t\n", b.SimMillis, ref.SimMillis)
	fmt.Fprintf(tw, "wall time\t%.1f s (median %.1f s)\t%.0f s\t%.1fx\n", b.WallSeconds, b.WallMedian, refWall, refWall/b.WallSeconds)
	if b.ReferenceThisMachine || ref.UserSeconds == 0 {
		fmt.Fprintf(tw, "user CPU\t%.1f s\t\t\n", b.UserSeconds)
	} else {
		fmt.Fprintf(tw, "user CPU\t%.1f s\t%.1f s\t%.1fx\n", b.UserSeconds, ref.UserSeconds, ref.UserSeconds/b.UserSeconds)
	}
	fmt.Fprintf(tw, "wall seconds per simulated ms\t%.3f\t%.1f\t%.1fx faster\n", b.SecondsPerSimMs, refRate, b.SpeedupVsRef)
	if ref.DataPackets > 0 {
		fmt.Fprintf(tw, "data packets per wall second\t%.0f k\t%.1f k\t%.1fx\n", b.PacketsPerSecond/1e3, ref.DataPackets/refWall/1e3, b.PacketsPerSecond/(ref.DataPackets/refWall))
		fmt.Fprintf(tw, "events executed\t%.1f M\t%.1f M\t\n", float64(b.Events)/1e6, ref.Events/1e6)
	} else {
		fmt.Fprintf(tw, "data packets per wall second\t%.0f k\t\t\n", b.PacketsPerSecond/1e3)
		fmt.Fprintf(tw, "events executed\t%.1f M\t\t\n", float64(b.Events)/1e6)
	}
	fmt.Fprintf(tw, "ns per packet-hop\t%.0f\t\t\n", b.NsPerHop)
	fmt.Fprintf(tw, "peak RSS\t%.0f MiB\t%.0f MiB\t%.1fx less\n", b.PeakRSSMiB, ref.RSSMiB, ref.RSSMiB/b.PeakRSSMiB)
	fmt.Fprintf(tw, "FCT slowdown p50/p95/p99\t%.2f/%.2f/%.2f\t%.2f/%.2f/%.2f\t\n", b.Slowdown[0], b.Slowdown[1], b.Slowdown[2], ref.P50, ref.P95, ref.P99)
	tw.Flush()
	verdict := "MET"
	if b.TargetMet == nil || !*b.TargetMet {
		verdict = "NOT MET"
	}
	pr.f("\ntarget: at most %.2f wall seconds per simulated ms (%dx the reference): %s", refRate/targetSpeedup, targetSpeedup, verdict)
	if !b.ReferenceThisMachine {
		pr.f(" (against a figure from another machine; give --reference-seconds for this one's)")
	}
	pr.f("\n")
	for _, f := range b.Faults {
		pr.f("FAULT: %s\n", f)
	}
	return pr.err
}

// ThreadsCost is one line of `p4ctl sim bench --threads-compare`.
type ThreadsCost struct {
	// Threads is the number asked for; 0 is auto, the default's choice.
	Threads int         `json:"threads"`
	Bench   BenchResult `json:"bench"`
	// Speedup and SpeedupMedian are the first line's fastest and median
	// wall time over this one's.
	Speedup       float64 `json:"speedup_vs_first"`
	SpeedupMedian float64 `json:"speedup_vs_first_median"`
}

// benchThreads times s at each number of threads, runs interleaved, and
// prints the speed-up of each over the first; every run must give the
// same results.
func benchThreads(cmd *cobra.Command, s *scenario.Scenario, o *simOptions, threads []int, runs int, asJSON bool, dir *outdir.Dir) error {
	all := make([]benchRuns, len(threads))
	for i := range all {
		all[i].keep = dir != nil
	}
	for r := 0; r < runs; r++ {
		for i, t := range threads {
			if err := all[i].run(cmd, s, o, t); err != nil {
				return fmt.Errorf("--threads-compare %d: %w", t, err)
			}
		}
	}
	if dir != nil {
		for i := range all {
			name := "threads" + strconv.Itoa(threads[i])
			if threads[i] == 0 {
				name = "threads-auto"
			}
			if err := all[i].write(filepath.Join(dir.Path(), name)); err != nil {
				return err
			}
		}
		if err := dir.Commit(); err != nil {
			return err
		}
	}
	costs := make([]ThreadsCost, len(threads))
	base := all[0].result()
	same := true
	for i := range all {
		b := all[i].result()
		costs[i] = ThreadsCost{Threads: threads[i], Bench: b, Speedup: base.WallSeconds / b.WallSeconds, SpeedupMedian: base.WallMedian / b.WallMedian}
		same = same && !all[i].differ && b.digest == base.digest
	}
	if !same {
		return fmt.Errorf("the runs gave different results: a simulator fault (the results must not depend on the number of threads)")
	}
	if asJSON {
		return writeJSON(cmd.OutOrStdout(), costs)
	}
	pr := &printer{w: cmd.OutOrStdout()}
	pr.f("benchmark %s: %d flows; %d interleaved run(s) per number of threads, fastest and median; results identical in all (sha256 %x)\n\n",
		s.Name, base.Flows, runs, base.digest[:8])
	tw := tabwriter.NewWriter(pr, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "threads\twall s\tmedian s\tspeed-up\tmedian speed-up\tuser CPU s\tevents\twindows\ton one thread\tevents per window\tbalance\tframes between parts\tbusy s\tcritical s\twait s\n")
	for _, c := range costs {
		b := c.Bench
		windows, alone, perWindow, balance, crossings, busy, critical, wait := "-", "-", "-", "-", "-", "-", "-", "-"
		if p := b.Parallel; p != nil && p.Windows > 0 {
			windows = fmt.Sprintf("%d", p.Windows)
			alone = fmt.Sprintf("%.0f%%", 100*float64(p.OneThread)/float64(p.Windows))
			perWindow = fmt.Sprintf("%.0f", float64(b.Events)/float64(p.Windows))
			balance = fmt.Sprintf("%.3f", float64(b.Events)/float64(p.Critical)/float64(p.Parts))
			crossings = fmt.Sprintf("%.1f M", float64(p.Crossings)/1e6)
			busy = fmt.Sprintf("%.2f", p.Busy.Seconds())
			critical = fmt.Sprintf("%.2f", p.CriticalBusy.Seconds())
			wait = fmt.Sprintf("%.2f", p.Wait.Seconds())
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.3f\t%.3f\t%.2f\t%.1f M\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", threadsLabel(c), b.WallSeconds, b.WallMedian, c.Speedup, c.SpeedupMedian,
			b.UserSeconds, float64(b.Events)/1e6, windows, alone, perWindow, balance, crossings, busy, critical, wait)
	}
	tw.Flush()
	pr.f("\nbalance: the events over the parts' share of the busiest part's, window by window (1 is perfect);\n")
	pr.f("busy: the parts' time in their windows, summed; critical: the longest part's, summed over windows;\n")
	pr.f("wait: the first part's time waiting for the others; on one thread: the windows auto ran with every part on one thread\n")
	pr.f("(all of the fastest run)\n")
	if m := speedupModel(costs); m != nil {
		pr.f("\nmodel of the run on a core per part, from this one: %.1f ns per event (1 thread), %.1f ns per frame between parts and %.1f us per window (2 threads)\n",
			m.eventNs, m.crossingNs, m.windowUs)
		tw := tabwriter.NewWriter(pr, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "parts\tcritical events\twindows\tframes between parts\tmodelled wall s\tmodelled speed-up\n")
		for _, r := range m.rows {
			fmt.Fprintf(tw, "%d\t%.1f M\t%d\t%.1f M\t%.2f\t%.2f\n", r.parts, float64(r.critical)/1e6, r.windows, float64(r.crossings)/1e6, r.wall, r.speedup)
		}
		tw.Flush()
		pr.f("modelled wall = events of the busiest part in each window, summed, + the part's share of the frames between parts + the windows' meetings\n")
	}
	if threads[0] == 1 {
		for _, c := range costs[1:] {
			if c.Threads == 2 && c.Bench.Threads == 2 {
				verdict := "MET"
				if c.Speedup < minThreadsSpeedup {
					verdict = "NOT MET"
				}
				pr.f("target: 2 threads at least %.1fx as fast as 1: %.3f, %s (%d cores)\n", minThreadsSpeedup, c.Speedup, verdict, runtime.NumCPU())
			}
		}
	}
	if v := autoVerdict(costs); v != "" {
		pr.f("%s\n", v)
	}
	for _, c := range costs {
		for _, f := range c.Bench.Faults {
			pr.f("FAULT (%s threads): %s\n", threadsLabel(c), f)
		}
	}
	return pr.err
}

// minAutoShare is how near auto must come to the faster of 1 and 2
// threads: its trials of the slower way cost a little.
const minAutoShare = 0.95

// autoVerdict holds auto against the faster of 1 and 2 threads, where
// the comparison has all three; else "".
func autoVerdict(costs []ThreadsCost) string {
	var one, two, auto float64
	for _, c := range costs {
		switch {
		case c.Threads == 1:
			one = c.Bench.WallSeconds
		case c.Threads == 2 && c.Bench.Threads == 2:
			two = c.Bench.WallSeconds
		case c.Threads == 0:
			auto = c.Bench.WallSeconds
		}
	}
	if one == 0 || two == 0 || auto == 0 {
		return ""
	}
	share := min(one, two) / auto
	verdict := "MET"
	if share < minAutoShare {
		verdict = "NOT MET"
	}
	return fmt.Sprintf("target: auto at least %.2fx the speed of the faster of 1 and 2 threads: %.3f, %s", minAutoShare, share, verdict)
}

// threadsLabel is a line's number of threads as asked: auto, with the
// parts it gave, or the number.
func threadsLabel(c ThreadsCost) string {
	if c.Threads == 0 {
		return fmt.Sprintf("auto (%d)", c.Bench.Threads)
	}
	return strconv.Itoa(c.Threads)
}

// modelRow is the modelled run on a core per part.
type modelRow struct {
	parts, windows int
	critical       uint64
	crossings      int64
	wall, speedup  float64
}

// model is a model of the speed-up on a machine with a core per part,
// from the runs on 1 and 2 threads: a window lasts as long as its busiest
// part takes (its events at the 1-thread run's time per event, plus its
// share of the frames crossing between parts at what each cost the
// 2-thread run), plus the parts' meeting at its end (what the 2-thread
// run spent beyond its busiest parts, per window). The critical events,
// frames and windows of each split are the runs' own, exact whatever
// the machine.
type model struct {
	eventNs, crossingNs, windowUs float64
	rows                          []modelRow
}

func speedupModel(costs []ThreadsCost) *model {
	var one, two *BenchResult
	for i := range costs {
		b := &costs[i].Bench
		switch {
		case costs[i].Threads == 1 && one == nil:
			one = b
		case costs[i].Threads == 2 && b.Threads == 2 && b.Parallel != nil && two == nil:
			two = b
		}
	}
	if one == nil || two == nil || one.Events == 0 || two.Parallel.Windows == 0 || two.Parallel.Crossings == 0 {
		return nil
	}
	p2 := two.Parallel
	t := one.WallSeconds / float64(one.Events)
	crit := p2.CriticalBusy.Seconds()
	m := &model{eventNs: t * 1e9}
	c := max(0, (crit-t*float64(p2.Critical))/(float64(p2.Crossings)/2))
	s := max(0, (two.WallSeconds-crit)/float64(p2.Windows))
	m.crossingNs, m.windowUs = c*1e9, s*1e6
	for _, cost := range costs {
		p := cost.Bench.Parallel
		if p == nil || p.Windows == 0 {
			continue
		}
		wall := t*float64(p.Critical) + c*float64(p.Crossings)/float64(p.Parts) + s*float64(p.Windows)
		m.rows = append(m.rows, modelRow{parts: p.Parts, windows: int(p.Windows), critical: p.Critical, crossings: p.Crossings,
			wall: wall, speedup: one.WallSeconds / wall})
	}
	return m
}

// parseThreadsList reads a comma-separated list of thread counts, auto
// (the default's choice, sim.Config.Adapt included) read as 0.
func parseThreadsList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f == "auto" {
			out = append(out, 0)
			continue
		}
		n, err := parseCount(f)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// userCPU is the process's user CPU time so far, seconds.
func userCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec) + float64(ru.Utime.Usec)/1e6
}

// peakRSSMiB is the process's peak resident set size (Linux reports KiB).
func peakRSSMiB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024
}

// readTimeV reads the wall time /usr/bin/time -v reports, "Elapsed (wall
// clock) time (h:mm:ss or m:ss): 20:21.79", in seconds.
func readTimeV(name string) (float64, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return 0, err
	}
	const key = "Elapsed (wall clock) time (h:mm:ss or m:ss):"
	for i, line := range strings.Split(string(data), "\n") {
		_, v, ok := strings.Cut(line, key)
		if !ok {
			continue
		}
		secs := 0.0
		for _, part := range strings.Split(strings.TrimSpace(v), ":") {
			f, err := strconv.ParseFloat(part, 64)
			if err != nil || f < 0 {
				return 0, fmt.Errorf("%s:%d: %q is not h:mm:ss or m:ss", name, i+1, strings.TrimSpace(v))
			}
			secs = secs*60 + f
		}
		if secs <= 0 {
			return 0, fmt.Errorf("%s:%d: a wall time of 0", name, i+1)
		}
		return secs, nil
	}
	return 0, fmt.Errorf("%s: no %q line (the output of /usr/bin/time -v)", name, key)
}
