//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/p4rcm/p4rcm/agent"
	"github.com/p4rcm/p4rcm/buffercalc"
	"github.com/p4rcm/p4rcm/emulate"
	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/experiment"
	"github.com/p4rcm/p4rcm/sim/report"
	"github.com/p4rcm/p4rcm/sim/scenario"
	"github.com/p4rcm/p4rcm/switchproc"
)

// newEmulateCmd is `p4ctl emulate`: a scenario on real packets.
func newEmulateCmd() *cobra.Command {
	o := &simOptions{}
	var e emulateFlags
	var out string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "emulate [SCENARIO.yaml]",
		Short: "Run a scenario on real packets: P4 switches on veths, host agents in namespaces",
		Long: `emulate runs a scenario (a YAML file, or --preset for a built-in one) on
real packets on this machine: each host a network namespace with a RoCEv2
agent sending its flows (DCQCN; LDCP's window sender with --scheme ldcp;
HPCC, TIMELY or DCTCP with --scheme hpcc, timely or dctcp; in wall-clock
time), each switch a P4 target process running rcm.p4 on veths (p4rcm's
Go target, or BMv2's simple_switch_grpc with --target bmv2), programmed
over P4Runtime as 'p4ctl fabric apply' does, with the thresholds the
simulator uses (for ldcp: PFC off, WRED at K, buf_max; for hpcc: INT on
every port; for dctcp: ECN at its K).

One machine forwards far less than 100 Gb/s, so the scenario is slowed
down as a whole: every link rate divided by K, every time (flow starts,
DCQCN timers, RCM intervals, link delays) multiplied by K, every size in
bytes kept. The results are written as 'p4ctl sim run' writes them, with
times divided by K again, so that they compare with a simulation of the
same scenario. It needs root (namespaces and packet sockets), and removes
everything it created when it ends, on Ctrl-C, SIGTERM, SIGHUP and
SIGPIPE (its output piped to a reader that is gone, as '| head' goes)
too, exiting 128 + the signal's number (130 for Ctrl-C).

A scenario larger than one machine emulates (more than 16 hosts or 20
switches, a host with more than one link) is refused before anything is
created.`,
		Example: `  p4ctl emulate
  p4ctl emulate --preset rcm-incast-victim --set stop=200us
  p4ctl emulate --target bmv2 --rate 2M`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Signals first: one that comes while the output directory
			// is staged or the fabric is built must clean up too.
			ctx, stop := interrupted(cmd.Context())
			defer stop()
			s, err := o.load(cmd, args)
			if err != nil {
				return err
			}
			opts, err := e.options()
			if err != nil {
				return err
			}
			cfg, err := build(s, cmd.ErrOrStderr(), true)
			if err != nil {
				return err
			}
			if err := emulate.Check(&cfg, opts); err != nil {
				return usageErrorf("%v", err)
			}
			if out == "" {
				out = filepath.Join("p4rcm-out", s.Name+"-emulated")
			}
			dir, err := prepareOut(out)
			if err != nil {
				return err
			}
			defer dir.Abort()
			errOut := cmd.ErrOrStderr()
			if !o.quiet {
				opts.Log = func(line string) { fmt.Fprintf(errOut, "emulate: %s\n", line) }
			}
			start := time.Now()
			res, err := emulate.Run(ctx, cfg, opts)
			if err != nil {
				return interruptedErr(ctx, err)
			}
			files, err := report.WriteDir(dir.Path(), res.Results, report.DirOptions{})
			if err != nil {
				return err
			}
			if err := dir.Commit(); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			sum := report.Summarize(res.Results, report.SummaryOptions{})
			if asJSON {
				return report.WriteSummaryJSON(w, sum)
			}
			fmt.Fprintf(w, "scenario %s: %d hosts, %d flows, scheme %s, seed %d\n",
				s.Name, len(cfg.Topology.Hosts()), len(cfg.Flows), schemeOf(s), cfg.Seed)
			fmt.Fprintf(w, "emulated on %s at %.1f Mb/s per host link: time stretched %.0fx; the times below are the scenario's (emulated / %.0f)\n",
				opts.Target, res.Rate/1e6, res.K, res.K)
			if err := report.WriteSummaryText(w, sum); err != nil {
				return err
			}
			var tot agent.Stats
			for _, a := range res.Agents {
				tot.DataSent += a.DataSent
				tot.DataReceived += a.DataReceived
				tot.Retransmits += a.Retransmits
				tot.NAKsSent += a.NAKsSent
				tot.Timeouts += a.Timeouts
				tot.Pauses += a.Pauses
			}
			fmt.Fprintf(w, "agents: %d data packets sent (%d again, after %d NAKs and %d timeouts), %d received, %d PAUSEs honoured\n",
				tot.DataSent, tot.Retransmits, tot.NAKsSent, tot.Timeouts, tot.DataReceived, tot.Pauses)
			if err := writeINTQueue(w, res); err != nil {
				return err
			}
			var switchCPU time.Duration
			for _, c := range res.SwitchCPU {
				switchCPU += c
			}
			fmt.Fprintf(w, "CPU: switches %.2f s, agents %.2f s, in %.2f s of traffic\n", switchCPU.Seconds(), res.AgentsCPU.Seconds(), res.Wall.Seconds())
			if why, behind := res.FellBehind(); behind {
				fmt.Fprintf(w, "not to be trusted: the machine fell behind the emulation's schedule (%s): the figures above measure the machine as much as the scheme; emulate at a lower --rate, or on an idle machine\n", why)
			}
			fmt.Fprintf(w, "wall time %.1f s (traffic %.1f s); results in %s (%s)\n", time.Since(start).Seconds(), res.Wall.Seconds(), out, strings.Join(baseNames(files), ", "))
			// Flows cut off by the scenario's stop time are reported, as
			// sim run reports them; flows that outlived --timeout are a
			// failed run.
			if res.TimedOut {
				return fmt.Errorf("%d of %d flows did not complete within the run (--timeout %v after the last start)", len(cfg.Flows)-res.Results.Completed, len(cfg.Flows), e.timeout)
			}
			return nil
		},
	}
	o.addFlags(cmd, "emulate-incast")
	cmd.AddCommand(newEmulateCompareCmd())
	fs := cmd.Flags()
	fs.StringVarP(&out, "out", "o", "", "output directory (default p4rcm-out/<scenario name>-emulated)")
	e.addFlags(fs)
	fs.BoolVar(&asJSON, "json", false, "print the summary as JSON")
	return cmd
}

// interruptedErr says so when err comes from a signal that stopped the
// run (exit 128 + its number).
func interruptedErr(ctx context.Context, err error) error {
	return stoppedErr(ctx, err, "what the run made (namespaces, veths, switch processes) is removed, and nothing is written")
}

// emulateFlags are the flags of emulate and emulate compare that say how
// to emulate.
type emulateFlags struct {
	target, switchBin, logDir string
	processes                 string
	rate                      float64
	timeout                   time.Duration
	ssl                       bool
	int                       bool
}

func (e *emulateFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&e.target, "target", string(switchproc.TargetGo), "switch: go (p4rcm's Go target, p4switch) or bmv2 (simple_switch_grpc)")
	fs.StringVar(&e.switchBin, "switch-binary", "", "the switch program (default for --target go: the Go target built into this p4ctl; for bmv2: simple_switch_grpc on the PATH)")
	valueFlag(fs, &e.rate, "rate", "rate", buffercalc.ParseRate, "emulated host link rate, e.g. 50M (default: what the target forwards at its default queue rate, shared out over the switches past two, or the lowest rate at which RCM's times, stretched, fit rcm.p4's tables if that is higher)")
	fs.DurationVar(&e.timeout, "timeout", time.Minute, "how long flows may run after the last one starts, wall time")
	fs.StringVar(&e.processes, "processes", "", "how the switches run: shared (every switch in one p4switch process, the links between switches in memory; the Go target's default) or each (a process per switch on veths; BMv2's only way)")
	fs.StringVar(&e.logDir, "log-dir", "", "keep each switch's log and output in this directory")
	fs.BoolVar(&e.ssl, "ssl", false, "P4Runtime over mutual TLS, with a CA and certificates made for the run and removed with it; on the Go target only the run's controller may be primary")
	fs.BoolVar(&e.int, "int", false, "every switch port pushes INT and every data packet asks for it, whatever the scheme (hpcc's always do), to measure the queue the packets find at the ports facing their receivers")
}

// options checks the flags and makes them emulate.Options.
func (e *emulateFlags) options() (emulate.Options, error) {
	t := switchproc.Target(e.target)
	if t != switchproc.TargetGo && t != switchproc.TargetBMv2 {
		return emulate.Options{}, usageErrorf("--target %q: want go or bmv2", e.target)
	}
	p := emulate.Processes(e.processes)
	if p != "" && p != emulate.ProcessEach && p != emulate.ProcessShared {
		return emulate.Options{}, usageErrorf("--processes %q: want shared or each", e.processes)
	}
	if p == emulate.ProcessShared && t != switchproc.TargetGo {
		return emulate.Options{}, usageErrorf("--processes shared: only the Go target runs several switches in one process; BMv2 runs a process each")
	}
	o := emulate.Options{Target: t, Binary: e.switchBin, Rate: e.rate, Timeout: e.timeout, LogDir: e.logDir, TLS: e.ssl, Processes: p, INT: e.int}
	if t == switchproc.TargetGo && e.switchBin == "" {
		// The Go target this p4ctl was built with ('p4ctl p4switch'):
		// nothing to install, and always the program this p4ctl
		// installs on it.
		self, err := os.Executable()
		if err != nil {
			return emulate.Options{}, fmt.Errorf("cannot find this p4ctl's own program to run the switches (%v): give --switch-binary", err)
		}
		o.Binary, o.BinaryArgs = self, []string{switchCommand}
	}
	return o, nil
}

// newEmulateCompareCmd is `p4ctl emulate compare`: p4ctl experiment's
// comparison, on emulated runs.
func newEmulateCompareCmd() *cobra.Command {
	o := &simOptions{}
	var e emulateFlags
	schemes := []string{"dcqcn", "rcm"}
	var seeds seedsFlag
	repeat := 1
	var out string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "compare [SCENARIO.yaml]",
		Short: "Compare schemes on one scenario emulated on real packets",
		Long: `compare emulates a scenario once per scheme and seed, --repeat times, one run
at a time (see 'p4ctl emulate --help'), and compares the schemes as 'p4ctl
experiment' does: FCT by flow-size class and goodput by flow class against
the baseline, printed as a table and written as comparison.csv,
comparison.json, plots, report.html and a directory per run.

On real packets the machine, not the seed, is the noise: two runs of one
scheme and seed differ as much as two schemes may. --repeat N runs each
scheme N times per seed, the schemes taking turns (dcqcn, rcm, dcqcn, rcm,
...) so that a change in the machine's load over the study hits all alike;
figures are then means over the repetitions with their confidence
intervals, and each scheme is compared with the baseline repetition by
repetition (paired t test), as 'p4ctl experiment' does seed by seed.`,
		Example: `  p4ctl emulate compare
  p4ctl emulate compare --preset rcm-incast-victim --schemes dcqcn,rcm --repeat 5 --rate 3M`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := o.load(cmd, args)
			if err != nil {
				return err
			}
			opts, err := e.options()
			if err != nil {
				return err
			}
			list, err := seeds.resolve(s)
			if err != nil {
				return err
			}
			errOut := cmd.ErrOrStderr()
			if !o.quiet {
				opts.Log = func(line string) { fmt.Fprintf(errOut, "emulate: %s\n", line) }
			}
			ctx, stop := interrupted(cmd.Context())
			defer stop()
			var queues *intQueues
			var flows *flowFCTs
			var sched schedule
			spec := experiment.Spec{Scenario: s, Schemes: schemes, Seeds: list, Repeat: repeat, Jobs: 1, Version: versionString(), Emulated: true,
				Runner: func(ctx context.Context, cfg sim.Config) (*sim.Results, error) {
					res, err := emulate.Run(ctx, cfg, opts)
					if err != nil {
						return nil, err
					}
					queues.add(&cfg, res)
					flows.addEmulated(&cfg, res.Results)
					why := sched.add(res)
					if !o.quiet {
						fmt.Fprintf(errOut, "emulate: %d of %d flows in %.1f s at %.1f Mb/s (time stretched %.0fx)%s\n",
							res.Results.Completed, len(cfg.Flows), res.Wall.Seconds(), res.Rate/1e6, res.K, why)
					}
					return res.Results, nil
				}}
			if err := experiment.Check(spec); err != nil {
				return usageErrorf("%v", err)
			}
			cfgs, err := buildSchemes(s, schemes)
			if err != nil {
				return err
			}
			queues, flows = newINTQueues(schemes, cfgs), newFlowFCTs(schemes, cfgs)
			for i := range cfgs {
				if err := emulate.Check(&cfgs[i], opts); err != nil {
					return usageErrorf("%s: %v", schemes[i], err)
				}
			}
			if opts.Rate == 0 {
				// One rate for every scheme, the highest any needs (RCM's
				// times must fit rcm.p4's tables: emulate.MinRate), so
				// that all are stretched alike.
				for i := range cfgs {
					opts.Rate = max(opts.Rate, emulate.RateFor(opts.Target, &cfgs[i]))
				}
			}
			if out == "" {
				out = filepath.Join("p4rcm-out", "emulated-"+s.Name)
			}
			dir, err := prepareOut(out)
			if err != nil {
				return err
			}
			defer dir.Abort()
			res, err := experiment.Run(ctx, spec)
			if err != nil {
				return interruptedErr(ctx, err)
			}
			if err := sched.write(dir.Path()); err != nil {
				return err
			}
			err = writeExperiment(cmd, dir, out, res, asJSON, "emulated on "+string(opts.Target))
			if err == nil && !asJSON {
				err = queues.write(cmd.OutOrStdout())
			}
			if err == nil && !asJSON {
				if err := runModel(ctx, spec, flows); err != nil {
					return interruptedErr(ctx, fmt.Errorf("the model: %w", err))
				}
				err = flows.write(cmd.OutOrStdout(), schemes)
			}
			if warning := sched.warning(); warning != "" {
				// After the table, and on stderr beside --json's
				// output: a comparison of figures the machine made is no
				// comparison of the schemes.
				w := cmd.OutOrStdout()
				if asJSON {
					w = cmd.ErrOrStderr()
				}
				fmt.Fprintln(w, warning)
			}
			return err
		},
	}
	o.addFlags(cmd, "emulate-incast")
	fs := cmd.Flags()
	_ = fs.MarkHidden("scheme")
	fs.Var(&parsedValue[[]string]{dst: &schemes, parse: parseSchemes, typ: "list", text: strings.Join(schemes, ",")},
		"schemes", "schemes to compare, comma-separated: "+strings.Join(scenario.Schemes, ", "))
	fs.Var(&parsedValue[seedsFlag]{dst: &seeds, parse: parseSeeds, typ: "seeds"},
		"seeds", "seeds to run each scheme with: a list (1,2,3) or a count N; default the scenario's seed")
	fs.Var(&parsedValue[int]{dst: &repeat, parse: parseCount, typ: "int", text: "1"},
		"repeat", "runs of each scheme per seed, the schemes taking turns; from 2, figures carry confidence intervals")
	fs.StringVarP(&out, "out", "o", "", "output directory (default p4rcm-out/emulated-<scenario name>)")
	fs.BoolVar(&asJSON, "json", false, "print the result as JSON (comparison.json) instead of the table")
	e.addFlags(fs)
	return cmd
}

// schedule is how the machine kept the emulation's time in each run of
// a comparison (emulate.Outcome.FellBehind).
type schedule struct {
	runs   []scheduleRun
	behind int
}

type scheduleRun struct {
	wall     time.Duration
	behind   time.Duration // the worst host's
	maxLate  time.Duration
	fell     bool
	wordsWhy string
}

// add records a run and returns what to add to its progress line.
func (s *schedule) add(o *emulate.Outcome) string {
	r := scheduleRun{wall: o.Wall}
	for _, a := range o.Agents {
		r.behind, r.maxLate = max(r.behind, a.Behind), max(r.maxLate, a.MaxLate)
	}
	r.wordsWhy, r.fell = o.FellBehind()
	s.runs = append(s.runs, r)
	if !r.fell {
		return ""
	}
	s.behind++
	return "; the machine fell behind: " + r.wordsWhy
}

// write puts schedule.csv in dir: each run's lateness, and whether the
// machine fell behind in it (the comparison's figures then not to be
// trusted).
func (s *schedule) write(dir string) error {
	var b strings.Builder
	b.WriteString("run,wall_ns,behind_ns,max_late_ns,fell_behind\n")
	for i, r := range s.runs {
		fmt.Fprintf(&b, "%d,%d,%d,%d,%t\n", i+1, r.wall.Nanoseconds(), r.behind.Nanoseconds(), r.maxLate.Nanoseconds(), r.fell)
	}
	return os.WriteFile(filepath.Join(dir, "schedule.csv"), []byte(b.String()), 0o644)
}

// warning is the line that marks the comparison not to be trusted, ""
// when the machine kept the schedule in every run.
func (s *schedule) warning() string {
	if s.behind == 0 {
		return ""
	}
	worst := s.runs[0]
	for _, r := range s.runs {
		if float64(r.behind)/float64(max(r.wall, 1)) > float64(worst.behind)/float64(max(worst.wall, 1)) {
			worst = r
		}
	}
	return fmt.Sprintf("not to be trusted: the machine fell behind the emulation's schedule in %d of %d runs (at worst %s; schedule.csv has each run): the comparison above measures the machine as much as the schemes; emulate at a lower --rate, or on an idle machine",
		s.behind, len(s.runs), worst.wordsWhy)
}
