package main

import (
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/p4rcm/p4rcm/internal/outdir"
	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/experiment"
	"github.com/p4rcm/p4rcm/sim/scenario"
	"github.com/spf13/cobra"
)

// defaultExperimentPreset is the built-in scenario `p4ctl experiment` runs
// when given no file. It is a variable so that a preset made for RCM can
// take its place without touching the command.
var defaultExperimentPreset = "default"

// defaultExperimentSchemes are the schemes compared by default: DCQCN
// (the baseline), RCM and PFC alone.
var defaultExperimentSchemes = []string{"dcqcn", "rcm", "pfc"}

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
			return nil, fmt.Errorf("unknown scheme %q (known: %s)", part, strings.Join(scenario.Schemes, ", "))
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
// on a scenario with sim/experiment and writes its outputs.
func newExperimentCmd() *cobra.Command {
	o := &simOptions{}
	schemes := append([]string(nil), defaultExperimentSchemes...)
	var seeds seedsFlag
	jobs := runtime.NumCPU()
	var out string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "experiment [SCENARIO.yaml]",
		Short: "Compare congestion-control schemes on one scenario over several seeds",
		Long: `experiment runs a scenario (a YAML file, or --preset for a built-in one) once
per scheme and seed, several runs at a time, and compares the schemes by flow
completion time for mice (< 1 MB), medium (1-10 MB) and elephant (>= 10 MB)
flows and all flows, and by goodput per flow class, against the baseline
(dcqcn when compared, else the first scheme). It prints the comparison and
writes into the output directory: comparison.csv, comparison.json, plots
(FCT slowdown by flow size, CDF of the mice flows' FCT, throughput over time
when the scenario samples rates) as PNG and SVG, report.html (one page, no
outside resources), and a directory <scheme>-seed<N> per run with what
'p4ctl sim run' writes. The output directory is checked before anything
runs and replaced whole when the experiment ends (see 'p4ctl sim run --help').

The scheme names, and the scenario under each scheme, are checked before
anything runs: a bad one is a usage error and nothing is written. A run
that fails or has faults (a drop under PFC, a deadlock) is left out of the
comparison; the others complete and are written, and the command exits 1.`,
		Example: `  p4ctl experiment
  p4ctl experiment --schemes dcqcn,pfc --seeds 3 --jobs 2
  p4ctl experiment my.yaml --seeds 1,5,9 --load 0.7 --workload datamining -o results/dm70`,
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
			if out == "" {
				out = filepath.Join("p4rcm-out", strings.TrimSuffix("experiment-"+s.Name, "-"))
			}

			p := newProgress(cmd.ErrOrStderr(), o.quiet)
			spec := experiment.Spec{Scenario: s, Schemes: schemes, Seeds: list, Jobs: jobs, Progress: p.runs}
			if err := experiment.Check(spec); err != nil {
				return usageErrorf("%v", err)
			}
			// Each scheme's own parameters (rcm:, say) are checked before
			// anything runs, so that a bad value writes nothing.
			// The memory check takes the largest scheme's as every run's.
			cfgs, err := buildSchemes(s, schemes)
			if err != nil {
				return err
			}
			var biggest sim.Config
			for _, cfg := range cfgs {
				if biggest.Topology == nil || sim.EstimateMemory(cfg).Total() > sim.EstimateMemory(biggest).Total() {
					biggest = cfg
				}
			}
			atOnce := min(jobs, len(schemes)*len(list))
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
			res, err := experiment.Run(cmd.Context(), spec)
			p.finish()
			if err != nil {
				return err
			}
			return writeExperiment(cmd, dir, out, res, asJSON, "")
		},
	}
	o.addFlags(cmd, defaultExperimentPreset)
	fs := cmd.Flags()
	_ = fs.MarkHidden("scheme") // --schemes instead; kept to say so when used
	fs.Lookup("seed").Usage = "the scenario's seed, the first of --seeds N"
	fs.Var(&parsedValue[[]string]{dst: &schemes, parse: parseSchemes, typ: "list", text: strings.Join(schemes, ",")},
		"schemes", "schemes to compare, comma-separated: "+strings.Join(scenario.Schemes, ", "))
	fs.Var(&parsedValue[seedsFlag]{dst: &seeds, parse: parseSeeds, typ: "seeds"},
		"seeds", "seeds to run each scheme with: a list (1,2,3) or a count N (N seeds from the scenario's seed); default the scenario's seed")
	fs.Var(&parsedValue[int]{dst: &jobs, parse: parseCount, typ: "int", text: strconv.Itoa(jobs)},
		"jobs", "how many runs go at once; the default is the number of CPUs")
	fs.StringVarP(&out, "out", "o", "", "output directory (default p4rcm-out/experiment-<scenario name>)")
	fs.BoolVar(&asJSON, "json", false, "print the result as JSON (comparison.json) instead of the table")
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

// writeExperiment writes an experiment's results into dir, replacing its
// target whole, and prints the comparison (or its JSON) with where the
// results are; what says what ran them, if not the simulator.
func writeExperiment(cmd *cobra.Command, dir *outdir.Dir, out string, res *experiment.Result, asJSON bool, what string) error {
	paths, err := experiment.WriteDir(dir.Path(), res)
	if err != nil {
		return err
	}
	if err := dir.Commit(); err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if asJSON {
		if err := writeJSON(w, res); err != nil {
			return err
		}
		return res.Err()
	}
	if err := experiment.WriteComparisonText(w, res); err != nil {
		return err
	}
	pr := &printer{w: w}
	if what != "" {
		what += "; "
	}
	pr.f("%sresults in %s (%s)\n", what, out, describeOutputs(dir.Path(), paths))
	if pr.err != nil {
		return pr.err
	}
	return res.Err()
}

// describeOutputs names what WriteDir wrote in dir: its own files, the
// number of plots and of run directories.
func describeOutputs(dir string, paths []string) string {
	var files []string
	plots, runs := 0, map[string]bool{}
	for _, p := range paths {
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			continue
		}
		switch d, name := filepath.Split(rel); {
		case d != "":
			runs[d] = true
		case strings.HasSuffix(name, ".png"):
			plots++
		case strings.HasSuffix(name, ".svg"):
		default:
			files = append(files, name)
		}
	}
	files = append(files, fmt.Sprintf("%d plots as PNG and SVG", plots), fmt.Sprintf("%d run directories", len(runs)))
	return strings.Join(files, ", ")
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
