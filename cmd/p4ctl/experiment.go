package main

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/p4rcm/p4rcm/internal/outdir"
	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/experiment"
	"github.com/p4rcm/p4rcm/sim/scenario"
	"github.com/p4rcm/p4rcm/stats"
	"github.com/spf13/cobra"
)

// defaultExperimentPreset is the built-in scenario `p4ctl experiment` runs
// when given no file. It is a variable so that a preset made for RCM can
// take its place without touching the command.
var defaultExperimentPreset = "default"

// defaultExperimentSchemes are the schemes compared by default: DCQCN
// (the baseline), RCM and PFC alone.
var defaultExperimentSchemes = []string{"dcqcn", "rcm", "pfc"}

// defaultSeedCount is how many seeds a study runs when --seeds is not
// given: five give Student-t intervals (t = 2.78) narrow enough to decide
// the differences the RCM paper reports, at five times a run's cost.
const defaultSeedCount = 5

// maxSeedCount bounds --seeds N, which would otherwise accept a typo such
// as 1000000 and start that many runs per scheme.
const maxSeedCount = 10000

// seedsFlag is --seeds: a list of seeds, or a count of seeds starting at
// the scenario's seed.
type seedsFlag struct {
	list  []uint64
	count int
}

// parseSeeds reads "1,2,3" (a list: more than one seed, comma-separated)
// or "3" (a count).
func parseSeeds(s string) (seedsFlag, error) {
	if !strings.Contains(s, ",") {
		n, err := parseCount(s)
		if err != nil {
			return seedsFlag{}, fmt.Errorf("%w (a count of seeds, or a list such as 1,2,3)", err)
		}
		if n > maxSeedCount {
			return seedsFlag{}, fmt.Errorf("%q: at most %d seeds", s, maxSeedCount)
		}
		return seedsFlag{count: n}, nil
	}
	var f seedsFlag
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		seed, err := strconv.ParseUint(part, 10, 64)
		switch {
		case part == "":
			return seedsFlag{}, fmt.Errorf("%q: empty seed in the list", s)
		case err != nil:
			return seedsFlag{}, fmt.Errorf("%q: seed %q is not a whole number", s, part)
		case seed == 0:
			return seedsFlag{}, fmt.Errorf("%q: seeds start at 1", s)
		}
		for _, x := range f.list {
			if x == seed {
				return seedsFlag{}, fmt.Errorf("%q: seed %d given twice", s, seed)
			}
		}
		f.list = append(f.list, seed)
	}
	return f, nil
}

// resolve turns the flag into seeds, a count starting at the scenario's
// own seed; an error is the user's to fix.
func (f seedsFlag) resolve(s *scenario.Scenario) ([]uint64, error) {
	if f.count == 0 {
		return f.list, nil
	}
	first := s.Seed
	if first == 0 {
		first = scenario.DefaultSeed
	}
	if first > math.MaxUint64-uint64(f.count-1) {
		return nil, usageErrorf("--seeds %d from seed %d: past the largest seed", f.count, first)
	}
	seeds := make([]uint64, f.count)
	for i := range seeds {
		seeds[i] = first + uint64(i)
	}
	return seeds, nil
}

// errUnknownScheme is parseSchemes' error for a name no scheme has.
var errUnknownScheme = errors.New("unknown scheme")

// parseStudySchemes is parseSchemes for a study, where an unknown name
// is often a variant's: variants join the study by their own names.
func parseStudySchemes(s string) ([]string, error) {
	out, err := parseSchemes(s)
	if errors.Is(err, errUnknownScheme) {
		err = fmt.Errorf("%w; a --variant joins the study under its own name, so leave it out of --schemes", err)
	}
	return out, err
}

// parseSchemes reads a comma-separated list of scheme names, each one the
// simulator knows (scenario.Schemes): a typo is a usage error, found
// before anything runs.
func parseSchemes(s string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("%q: empty scheme in the list (want e.g. %s)", s, strings.Join(defaultExperimentSchemes, ","))
		}
		if err := experiment.CheckScheme(part); err != nil {
			return nil, err
		}
		if !slices.Contains(scenario.Schemes, part) {
			return nil, fmt.Errorf("%w %q (known: %s)", errUnknownScheme, part, strings.Join(scenario.Schemes, ", "))
		}
		for _, x := range out {
			if x == part {
				return nil, fmt.Errorf("%q: scheme %q given twice", s, part)
			}
		}
		out = append(out, part)
	}
	return out, nil
}

// newExperimentCmd is `p4ctl experiment`, the main job: it compares schemes
// on a scenario, optionally swept over some of its values, with
// sim/experiment and writes its outputs.
func newExperimentCmd() *cobra.Command {
	o := &simOptions{}
	schemes := append([]string(nil), defaultExperimentSchemes...)
	seeds := seedsFlag{count: defaultSeedCount}
	var vary, variants []string
	var shard experiment.Shard
	level := stats.DefaultLevel
	jobs := runtime.NumCPU()
	var out string
	var asJSON, listRuns bool
	cmd := &cobra.Command{
		Use:   "experiment [SCENARIO.yaml]",
		Short: "Compare congestion-control schemes over seeds and swept parameters, with confidence intervals",
		Long: `experiment runs a scenario (a YAML file, or --preset for a built-in one) once
per scheme and seed, several runs at a time, and compares the schemes by flow
completion time for mice (< 1 MB), medium (1-10 MB) and elephant (>= 10 MB)
flows and all flows, and by goodput per flow class, against the baseline
(dcqcn when compared, else the first scheme).

Statistics take the run as the sample: each figure is the mean over seeds of
each run's own figure (its mean FCT of mice, its p99, ...), with its
confidence interval (Student t, --confidence, 95% by default); each scheme is
compared with the baseline seed by seed (the same seed gives both the same
flows), and the mean paired difference comes with its interval and the
paired t test's verdict: better, worse, or no significant difference. The
default is 5 seeds from the scenario's; one seed gives no interval.

--vary PATH=V1,V2,... sweeps any value --set reaches (or PATH=LO:HI:STEP, a
range of numbers with both ends included); several --vary make their
cartesian product, the first varying slowest. Each point is a comparison of
its own, in a directory of its own, and the study adds curves of each metric
against the first swept value (a line per scheme, its interval as a band),
study.csv, study.json and report.html.

--variant NAME=SCHEME,PATH=VALUE,... compares, under NAME, a scheme run with
values of its own (an ablation such as no-sar=rcm,rcm.sar=false, or a
tuning) beside the schemes.

Runs share the cores: --jobs runs go at once (one per CPU by default), and
each gets the CPUs left to it (CPUs / runs at once) as threads when its
network has enough hosts to gain from them, as 'p4ctl sim run --threads'
does; --threads T gives every run T and makes the default --jobs
CPUs / T. Many small runs are best run side by side on one thread each;
one large run on every core. The results do not depend on either.

Each run (point, seed, scheme) has a stable index; --list-runs prints them
and writes nothing. --shard i/N runs only the i-th of N near-equal blocks of
runs (from 0) and writes a partial directory that records the study it
belongs to; 'p4ctl experiment merge' joins the parts into what one machine
would have written. deploy/slurm and deploy/kubernetes run shards as a Slurm
job array or a Kubernetes Indexed Job.

The output directory holds comparison.csv, comparison.json, plots (FCT
slowdown by flow size, CDF of the mice flows' FCT, throughput over time when
the scenario samples rates) as PNG and SVG, report.html (one page, no
outside resources), and a directory <scheme>-seed<N> per run with what 'p4ctl
sim run' writes; a sweep has these per point. It is checked before anything
runs and replaced whole when the study ends (see 'p4ctl sim run --help').

The scheme names, the swept values and the scenario under each scheme at
each point are checked before anything runs: a bad one is a usage error and
nothing is written. A run that fails or has faults (a drop under PFC, a
deadlock) is left out of the comparison; the others complete and are
written, and the command exits 1.`,
		Example: `  p4ctl experiment
  p4ctl experiment --schemes dcqcn,pfc --seeds 5 --jobs 2
  p4ctl experiment --preset rcm-fct-websearch --vary workload.load=0.3,0.6 --seeds 5 --schemes dcqcn,rcm
  p4ctl experiment --vary workload.load=0.3:0.9:0.2 --vary topology.k=4,6 --seeds 3 --list-runs
  p4ctl experiment --vary workload.load=0.3,0.6 --seeds 5 --shard 0/4 -o parts/0
  p4ctl experiment merge parts/0 parts/1 parts/2 parts/3 -o results/load`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			if f.Changed("scheme") {
				return usageErrorf("--scheme picks one scheme; an experiment compares several: use --schemes, e.g. --schemes %s", strings.Join(defaultExperimentSchemes, ","))
			}
			if f.Changed("seed") && seeds.count == 0 && len(seeds.list) > 0 {
				return usageErrorf("--seed is the first of --seeds N; with a list of --seeds it has no use")
			}
			s, err := o.load(cmd, args)
			if err != nil {
				return err
			}
			list, err := seeds.resolve(s)
			if err != nil {
				return err
			}
			var sweep []experiment.Vary
			for _, v := range vary {
				x, err := experiment.ParseVary(v)
				if err != nil {
					return usageErrorf("--vary %v", err)
				}
				sweep = append(sweep, x)
			}
			all := slices.Clone(schemes)
			var vs []experiment.Variant
			for _, v := range variants {
				x, err := experiment.ParseVariant(v)
				if err != nil {
					return usageErrorf("--variant %v", err)
				}
				if !slices.Contains(scenario.Schemes, x.Scheme) {
					return usageErrorf("--variant %s: unknown scheme %q (known: %s)", v, x.Scheme, strings.Join(scenario.Schemes, ", "))
				}
				if slices.Contains(all, x.Name) {
					return usageErrorf("--variant %s: %s is already a scheme or variant; name it otherwise", v, x.Name)
				}
				all = append(all, x.Name)
				vs = append(vs, x)
			}
			p := newProgress(cmd.ErrOrStderr(), o.quiet)
			if o.threads > 0 && !f.Changed("jobs") {
				jobs = max(1, runtime.NumCPU()/o.threads) // the cores shared between runs and threads
			}
			spec := experiment.Spec{Scenario: s, Vary: sweep, Schemes: all, Variants: vs, Seeds: list, Level: level, Jobs: jobs,
				Threads: o.threads, Shard: shard, Version: versionString(), Progress: p.runs}
			if err := experiment.Check(spec); err != nil {
				return usageErrorf("%v", trimPrefix(err))
			}
			if listRuns {
				return listStudyRuns(cmd, spec, asJSON)
			}
			if out == "" {
				out = filepath.Join("p4rcm-out", strings.TrimSuffix("experiment-"+s.Name, "-"))
				if shard.Count > 0 {
					out += fmt.Sprintf("-shard%dof%d", shard.Index, shard.Count)
				}
			}
			// Each scheme's own parameters (rcm:, say) are checked at each
			// point before anything runs, so that a bad value writes
			// nothing. The memory check takes the largest run's as every
			// run's.
			cfgs, err := experiment.Configs(spec)
			if err != nil {
				return usageErrorf("%v", trimPrefix(err))
			}
			var biggest sim.Config
			for _, c := range cfgs {
				if biggest.Topology == nil || sim.EstimateMemory(c.Config).Total() > sim.EstimateMemory(biggest).Total() {
					biggest = c.Config
				}
			}
			planned, _, err := experiment.Plan(spec)
			if err != nil {
				return usageErrorf("%v", trimPrefix(err))
			}
			atOnce := min(jobs, len(planned))
			what := "this scenario"
			if atOnce > 1 {
				what = fmt.Sprintf("%d runs at once (--jobs)", atOnce)
			}
			if _, err := checkMemory(cmd.ErrOrStderr(), o.quiet, biggest, atOnce, what); err != nil {
				return err
			}
			dir, err := prepareOut(out)
			if err != nil {
				return err
			}
			defer dir.Abort()
			st, err := experiment.Run(cmd.Context(), spec)
			p.finish()
			if err != nil {
				return err
			}
			if st.Shard != nil {
				return writeShard(cmd, dir, out, st)
			}
			return writeExperiment(cmd, dir, out, st, asJSON, "")
		},
	}
	o.addFlags(cmd, defaultExperimentPreset)
	o.addThreadsFlag(cmd)
	fs := cmd.Flags()
	_ = fs.MarkHidden("scheme") // --schemes instead; kept to say so when used
	fs.Lookup("seed").Usage = "the scenario's seed, the first of --seeds N"
	fs.Var(&parsedValue[[]string]{dst: &schemes, parse: parseStudySchemes, typ: "list", text: strings.Join(schemes, ",")},
		"schemes", "schemes to compare, comma-separated: "+strings.Join(scenario.Schemes, ", "))
	fs.Var(&parsedValue[seedsFlag]{dst: &seeds, parse: parseSeeds, typ: "seeds"},
		"seeds", "seeds to run each scheme with: a list (1,2,3) or a count N (N seeds from the scenario's seed)")
	fs.Lookup("seeds").DefValue = strconv.Itoa(defaultSeedCount)
	fs.StringArrayVar(&vary, "vary", nil, "sweep a scenario value: PATH=V1,V2,... or PATH=LO:HI:STEP, e.g. workload.load=0.3:0.9:0.2 (repeatable: the cartesian product)")
	fs.StringArrayVar(&variants, "variant", nil, "also compare a scheme with values of its own: NAME=SCHEME,PATH=VALUE,..., e.g. no-sar=rcm,rcm.sar=false (repeatable; compared after --schemes)")
	fs.BoolVar(&listRuns, "list-runs", false, "print the study's runs with their indexes (of --shard's only, if given) and write nothing")
	fs.Var(&parsedValue[experiment.Shard]{dst: &shard, parse: experiment.ParseShard, typ: "i/N"},
		"shard", "run only shard i of N (from 0) and write a partial directory for 'p4ctl experiment merge'")
	fs.Var(&parsedValue[float64]{dst: &level, parse: parseLevel, typ: "fraction", text: strconv.FormatFloat(level, 'f', -1, 64)},
		"confidence", "confidence level of the intervals and tests")
	fs.Var(&parsedValue[int]{dst: &jobs, parse: parseCount, typ: "int", text: strconv.Itoa(jobs)},
		"jobs", "how many runs go at once; the default is the number of CPUs, or with --threads T the number of CPUs / T. By default each run gets the CPUs / jobs threads (if its network is large enough)")
	fs.StringVarP(&out, "out", "o", "", "output directory (default p4rcm-out/experiment-<scenario name>[-shard<i>of<N>])")
	fs.BoolVar(&asJSON, "json", false, "print the result as JSON (comparison.json, or study.json for a sweep) instead of the table")
	cmd.AddCommand(newExperimentMergeCmd())
	return cmd
}

// parseLevel reads a confidence level, a fraction strictly between 0 and
// 1.
func parseLevel(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !(f > 0 && f < 1) {
		return 0, fmt.Errorf("%q: want a fraction between 0 and 1, such as 0.95", s)
	}
	return f, nil
}

// trimPrefix drops the package's "experiment: " from a message for the
// user.
func trimPrefix(err error) string { return strings.TrimPrefix(err.Error(), "experiment: ") }

// listStudyRuns prints the study's runs, one a line, or as JSON.
func listStudyRuns(cmd *cobra.Command, spec experiment.Spec, asJSON bool) error {
	runs, id, err := experiment.Plan(spec)
	if err != nil {
		return usageErrorf("%v", trimPrefix(err))
	}
	w := cmd.OutOrStdout()
	if asJSON {
		return writeJSON(w, struct {
			Study string                  `json:"study"`
			Runs  []experiment.PlannedRun `json:"runs"`
		}{id, runs})
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "index\t"
	if len(spec.Vary) > 0 {
		head += "point\t"
	}
	fmt.Fprintf(tw, "%sscheme\tseed\n", head)
	for _, r := range runs {
		fmt.Fprintf(tw, "%d\t", r.Index)
		if len(spec.Vary) > 0 {
			fmt.Fprintf(tw, "%s\t", experiment.PointName(r.Point))
		}
		fmt.Fprintf(tw, "%s\t%d\n", r.Scheme, r.Seed)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	what := "runs"
	if spec.Shard.Count > 0 {
		what = "runs of shard " + spec.Shard.String()
	}
	_, err = fmt.Fprintf(w, "%d %s of study %s; nothing written\n", len(runs), what, id)
	return err
}

// writeShard writes a shard's runs into dir and says how to merge them.
func writeShard(cmd *cobra.Command, dir *outdir.Dir, out string, st *experiment.Study) error {
	if _, err := experiment.WriteShard(dir.Path(), st); err != nil {
		return err
	}
	if err := dir.Commit(); err != nil {
		return err
	}
	n := 0
	for _, p := range st.Points {
		n += len(p.Runs)
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "shard %s of study %s (%s): %d of %d runs in %.2f s\n", st.Shard, st.ID, st.Scenario, n, st.Runs(), st.WallSeconds)
	_, err := fmt.Fprintf(w, "results in %s; when every shard is done: p4ctl experiment merge DIR... (the %d shards' directories)\n", out, st.Shard.Count)
	if err != nil {
		return err
	}
	return st.Err()
}

// newExperimentMergeCmd is `p4ctl experiment merge`: shards into a study.
func newExperimentMergeCmd() *cobra.Command {
	var out string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "merge SHARD_DIR...",
		Short: "Merge the shards of a study into its comparison, as one machine would have written it",
		Long: `merge reads the directories written by 'p4ctl experiment --shard i/N' for
every i and writes the study into the output directory exactly as
'p4ctl experiment' without --shard would have (wall times aside): the
comparison, intervals, verdicts, plots, report.html and each run's
directory. Shards of different studies (another scenario, sweep, schemes,
seeds or confidence level) or different p4ctl versions, a run in two shards
and a study with runs missing are refused, by name, and nothing is written.`,
		Example: `  p4ctl experiment merge parts/0 parts/1 parts/2 parts/3 -o results/load
  p4ctl experiment merge parts/* -o results/load`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("give the shards' directories; see '%s --help'", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := experiment.Merge(args)
			if err != nil {
				return usageErrorf("%v", trimPrefix(err))
			}
			if out == "" {
				out = filepath.Join("p4rcm-out", strings.TrimSuffix("experiment-"+st.Scenario, "-"))
			}
			dir, err := prepareOut(out)
			if err != nil {
				return err
			}
			defer dir.Abort()
			return writeExperiment(cmd, dir, out, st, asJSON, fmt.Sprintf("merged from %d shards", len(args)))
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "output directory (default p4rcm-out/experiment-<scenario name>)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON instead of the table")
	return cmd
}

// buildSchemes builds the scenario under each scheme, so that a scheme's
// own bad parameters (rcm:, say) are a usage error before anything runs.
func buildSchemes(s *scenario.Scenario, schemes []string) ([]sim.Config, error) {
	var out []sim.Config
	for _, name := range schemes {
		c, err := s.Clone()
		if err == nil {
			err = c.Set("scheme", name)
		}
		var cfg sim.Config
		if err == nil {
			cfg, err = c.Build()
		}
		if err != nil {
			return nil, usageErrorf("%s: %v", name, err)
		}
		out = append(out, cfg)
	}
	return out, nil
}

// writeExperiment writes a study's results into dir, replacing its target
// whole, and prints the comparison (or its JSON) with where the results
// are; what says what ran them, if not the simulator.
func writeExperiment(cmd *cobra.Command, dir *outdir.Dir, out string, st *experiment.Study, asJSON bool, what string) error {
	start := time.Now()
	paths, err := experiment.WriteDir(dir.Path(), st)
	if err != nil {
		return err
	}
	if err := dir.Commit(); err != nil {
		return err
	}
	st.AddReportTime(time.Since(start))
	w := cmd.OutOrStdout()
	if asJSON {
		var err error
		if st.Swept() {
			err = experiment.WriteStudyJSON(w, st)
		} else {
			err = experiment.WriteJSON(w, st.Points[0])
		}
		if err != nil {
			return err
		}
		return st.Err()
	}
	if err := experiment.WriteStudyText(w, st); err != nil {
		return err
	}
	pr := &printer{w: w}
	if what != "" {
		what += "; "
	}
	pr.f("%sresults in %s (%s)\n", what, out, describeOutputs(dir.Path(), paths, st))
	if pr.err != nil {
		return pr.err
	}
	return st.Err()
}

// describeOutputs names what WriteDir wrote in dir: its own files, the
// number of plots and of run directories, and for a sweep the number of
// point directories.
func describeOutputs(dir string, paths []string, st *experiment.Study) string {
	var files []string
	plots, runs := 0, map[string]bool{}
	for _, p := range paths {
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			continue
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		name := parts[len(parts)-1]
		switch {
		case len(parts) > 1 && st.Swept() && len(parts) > 2 || len(parts) > 1 && !st.Swept():
			runs[strings.Join(parts[:len(parts)-1], "/")] = true
		case len(parts) > 1:
			// a point's own files
		case strings.HasSuffix(name, ".png"):
			plots++
		case strings.HasSuffix(name, ".svg"):
		default:
			files = append(files, name)
		}
	}
	files = append(files, count(plots, "plot", "plots")+" as PNG and SVG")
	if st.Swept() {
		files = append(files, count(len(st.Points), "point directory", "point directories"))
	}
	files = append(files, count(len(runs), "run directory", "run directories"))
	return strings.Join(files, ", ")
}

// count is "1 plot", "2 plots".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// runs shows an experiment's progress once it has taken two seconds: the
// flows completed over all runs, those in flight included, and the runs
// ended, as update does for the flows of one run.
func (p *progress) runs(e experiment.Progress) {
	if e.Flows == 0 || !p.shown(e.Flows, "flows", true) {
		return
	}
	if p.bar.GetMax() != e.Flows {
		p.bar.ChangeMax(e.Flows)
	}
	p.bar.Describe(fmt.Sprintf("runs %d/%d ended, flows", e.RunsEnded, e.Runs))
	_ = p.bar.Set(e.FlowsDone)
}
