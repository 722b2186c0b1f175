package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/p4rcm/p4rcm/internal/outdir"
	"github.com/p4rcm/p4rcm/ldcp"
	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/report"
	"github.com/p4rcm/p4rcm/sim/scenario"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

func newSimCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Run the packet-level simulator (PFC, RED/ECN, DCQCN, HPCC, TIMELY, DCTCP, RCM, LDCP at datacenter scale)",
		Args:  noArgs,
		RunE:  needCommand,
	}
	cmd.AddCommand(newSimRunCmd(), newSimPresetsCmd(), newSimBenchCmd(), newSimCompareCmd())
	return cmd
}

// simOptions are the flags that pick and adjust a scenario.
type simOptions struct {
	preset   string
	ns3      string
	sets     []string
	seed     uint64
	scheme   string
	dcqcn    string
	ldcp     string
	loadFrac float64
	cdf      string
	k        int
	hosts    int
	quiet    bool
	// threads is --threads, where the command has it: 0 picks
	// (sim.DefaultThreads); defaultThreads is the pick, once made.
	threads, defaultThreads int
}

func (o *simOptions) addFlags(cmd *cobra.Command, defaultPreset string) {
	fs := cmd.Flags()
	fs.StringVar(&o.preset, "preset", defaultPreset, "built-in scenario (see 'p4ctl sim presets'); ignored when a file is given")
	fs.StringVar(&o.ns3, "ns3-config", "", "run the experiment of an ns-3 RDMA simulator configuration file (mix/config_*.txt) instead of a scenario")
	fs.StringArrayVar(&o.sets, "set", nil, "override a scenario value by its path, e.g. --set workload.load=0.5 (repeatable)")
	fs.Uint64Var(&o.seed, "seed", 0, "random seed (overrides the scenario's)")
	fs.StringVar(&o.scheme, "scheme", "", "congestion control: "+strings.Join(scenario.Schemes, ", "))
	fs.StringVar(&o.dcqcn, "dcqcn", "", "DCQCN parameter set: paper, hpcc, mellanox")
	fs.StringVar(&o.ldcp, "ldcp", "", "LDCP parameter set (schemes ldcp and ldcp-rate): "+strings.Join(ldcp.PresetNames(), ", "))
	fs.Float64Var(&o.loadFrac, "load", 0, "load of the first workload, as a fraction of host bandwidth")
	fs.StringVar(&o.cdf, "workload", "", "flow-size distribution of the first workload (workload.cdf): websearch, datamining, fbhadoop, alistorage, googlerpc or a CDF file")
	fs.IntVar(&o.k, "k", 0, "fat-tree arity (k^3/4 hosts)")
	fs.IntVar(&o.hosts, "hosts", 0, "fat-tree size in hosts, k^3/4 for an even k (16, 54, 128, 250, 432, ...); sets k")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no progress bar")
}

// addThreadsFlag adds --threads, for the commands that simulate.
func (o *simOptions) addThreadsFlag(cmd *cobra.Command) {
	cmd.Flags().Var(&parsedValue[int]{dst: &o.threads, parse: parseCount, typ: "int", text: "auto"}, "threads",
		"threads to run each simulation on; the results are the same for any number (default: one per idle core when the network has "+
			strconv.Itoa(sim.MinParallelHosts)+" hosts or more, else 1)")
}

// setThreads gives a run of cfg its threads: --threads, else
// sim.DefaultThreads on the machine's idle cores, looked at once per
// command (a command's later runs would see its own earlier ones), with
// the run free to take its parts on one thread where that is faster
// (sim.Config.Adapt).
func (o *simOptions) setThreads(cfg *sim.Config) {
	if o.threads > 0 {
		cfg.Threads, cfg.Adapt = o.threads, false
		return
	}
	if o.defaultThreads == 0 {
		o.defaultThreads = 1
		if sim.DefaultThreads(*cfg, runtime.NumCPU()) > 1 {
			o.defaultThreads = sim.DefaultThreads(*cfg, idleCores())
		}
	}
	cfg.Threads, cfg.Adapt = o.defaultThreads, o.defaultThreads > 1
}

// threadsNote says, on w, why n runs on fewer threads than asked for.
func threadsNote(w io.Writer, n *sim.Network, asked int, quiet bool) {
	if note := n.ThreadsNote(); note != "" && !quiet && asked > n.Threads() {
		fmt.Fprintf(w, "note: %d thread(s) instead of %d: %s\n", n.Threads(), asked, note)
	}
}

// threadsText is "1 thread", "2 threads".
func threadsText(n int) string {
	if n == 1 {
		return "1 thread"
	}
	return strconv.Itoa(n) + " threads"
}

// load reads the scenario named by the arguments and applies the flags.
func (o *simOptions) load(cmd *cobra.Command, args []string) (*scenario.Scenario, error) {
	var s *scenario.Scenario
	var err error
	if o.ns3 != "" {
		if len(args) == 1 || cmd.Flags().Changed("preset") {
			return nil, usageErrorf("give --ns3-config, a scenario file or --preset, one of them")
		}
		var notes []string
		s, notes, err = scenario.FromNS3Config(o.ns3)
		if os.IsNotExist(err) {
			return nil, usageErrorf("--ns3-config: %s does not exist", o.ns3)
		}
		if err != nil {
			return nil, usageErrorf("--ns3-config: %v", err)
		}
		if !o.quiet {
			for _, n := range notes {
				fmt.Fprintln(cmd.ErrOrStderr(), "note:", n)
			}
		}
	} else if len(args) == 1 {
		if cmd.Flags().Changed("preset") {
			return nil, usageErrorf("give a scenario file or --preset, not both")
		}
		s, err = scenario.Load(args[0])
		if os.IsNotExist(err) {
			return nil, usageErrorf("scenario file %s does not exist", args[0])
		}
	} else {
		s, err = scenario.LoadPreset(o.preset)
		if err != nil {
			return nil, usageErrorf("--preset: %v; see 'p4ctl sim presets'", err)
		}
	}
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	// Flags that stand for a scenario value are set as such, so that an
	// error about the value names the flag the user gave.
	type set struct{ origin, path, value string }
	var sets []set
	for _, kv := range o.sets {
		path, value, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, usageErrorf("--set %q: want path=value", kv)
		}
		sets = append(sets, set{"--set " + kv, path, value})
	}
	f := cmd.Flags()
	flag := func(name, path, value string) {
		if f.Changed(name) {
			sets = append(sets, set{fmt.Sprintf("--%s %s", name, value), path, value})
		}
	}
	flag("seed", "seed", strconv.FormatUint(o.seed, 10))
	flag("scheme", "scheme", o.scheme)
	flag("dcqcn", "dcqcn.preset", o.dcqcn)
	flag("ldcp", "ldcp.preset", o.ldcp)
	for _, name := range []string{"load", "workload"} {
		if f.Changed(name) {
			if err := takesLoad(s, name); err != nil {
				return nil, err
			}
		}
	}
	flag("load", "workload.load", strconv.FormatFloat(o.loadFrac, 'g', -1, 64))
	if f.Changed("workload") && strings.TrimSpace(o.cdf) == "" {
		return nil, usageErrorf("--workload: want a flow-size distribution (websearch, datamining, fbhadoop, alistorage, googlerpc) or a CDF file")
	}
	flag("workload", "workload.cdf", o.cdf)
	if f.Changed("k") && f.Changed("hosts") {
		return nil, usageErrorf("give --k or --hosts, not both")
	}
	if f.Changed("hosts") {
		if s.Topology.Kind != "fattree" {
			return nil, usageErrorf("--hosts sizes a fat tree; this scenario's topology is %q", s.Topology.Kind)
		}
		k, err := fatTreeK(o.hosts)
		if err != nil {
			return nil, err
		}
		sets = append(sets, set{fmt.Sprintf("--hosts %d", o.hosts), "topology.k", strconv.Itoa(k)})
	}
	if f.Changed("k") && s.Topology.Kind != "fattree" {
		// topology.k means nothing to another topology: taken, it
		// would change nothing, without a word.
		return nil, usageErrorf("--k sets a fat tree's arity; this scenario's topology is %q", s.Topology.Kind)
	}
	flag("k", "topology.k", strconv.Itoa(o.k))
	for _, st := range sets {
		if err := s.SetFrom(st.origin, st.path, st.value); err != nil {
			return nil, usageErrorf("%v", err)
		}
	}
	if err := checkSchemeFlags(f, s); err != nil {
		return nil, err
	}
	return s, nil
}

// takesLoad refuses --load and --workload (the flow-size distribution)
// where the scenario has no single workload they set: its flows given
// another way (an incast, a list, a file), or its workloads a list (set
// the first's in the file).
func takesLoad(s *scenario.Scenario, flag string) error {
	what := map[string]string{"load": "load", "workload": "flow sizes (cdf)"}[flag]
	first := s.Workload
	if first == nil && len(s.Workloads) > 0 {
		first = &s.Workloads[0]
	}
	switch {
	case first == nil:
		return usageErrorf("--%s sets the scenario's workload, and scenario %s has none: leave it out", flag, s.Name)
	case first.Kind != "poisson" && first.Kind != "hotspot":
		return usageErrorf("--%s sets a poisson or hotspot workload's %s, and scenario %s's first workload is of kind %s, which takes none: leave it out",
			flag, what, s.Name, first.Kind)
	case s.Workload == nil:
		return usageErrorf("--%s sets a scenario's single workload, and scenario %s lists %d workloads: give the first's %s in the file instead",
			flag, s.Name, len(s.Workloads), what)
	}
	return nil
}

// schemeHosts is the congestion control each scheme runs at the hosts
// where a flag sets its parameters (sim/scenario's Build: the other
// schemes run none of these).
var schemeHosts = map[string]string{"dcqcn": "dcqcn", "lossy": "dcqcn", "rcm": "dcqcn", "rcm-rcc": "dcqcn",
	"ldcp": "ldcp", "ldcp-rate": "ldcp"}

// checkSchemeFlags refuses --dcqcn and --ldcp where no scheme the command
// runs (--scheme, or --schemes for a comparison) uses them: taken, they
// would change nothing, without a word.
func checkSchemeFlags(f *pflag.FlagSet, s *scenario.Scenario) error {
	schemes := []string{schemeOf(s)}
	if l := f.Lookup("schemes"); l != nil {
		schemes = strings.Split(l.Value.String(), ",")
	}
	for _, cc := range []string{"dcqcn", "ldcp"} {
		if !f.Changed(cc) || slices.ContainsFunc(schemes, func(sc string) bool { return schemeHosts[sc] == cc }) {
			continue
		}
		var users []string
		for _, sc := range scenario.Schemes {
			if schemeHosts[sc] == cc {
				users = append(users, sc)
			}
		}
		return usageErrorf("--%s sets %s's parameters, and no host runs %s under %s %s: leave it out, or give a scheme that runs it (%s)",
			cc, strings.ToUpper(cc), strings.ToUpper(cc), map[bool]string{true: "--schemes", false: "--scheme"}[len(schemes) > 1 || f.Lookup("schemes") != nil],
			strings.Join(schemes, ","), strings.Join(users, ", "))
	}
	return nil
}

// fatTreeK is the arity of the fat tree with n hosts (k^3/4, k even).
func fatTreeK(n int) (int, error) {
	k := 2
	for k*k*k/4 < n {
		k += 2
	}
	if k*k*k/4 == n {
		return k, nil
	}
	if k == 2 {
		return 0, usageErrorf("--hosts %d: a fat tree has k^3/4 hosts for an even k >= 2 (2, 16, 54, ...)", n)
	}
	lo := k - 2
	return 0, usageErrorf("--hosts %d: a fat tree has k^3/4 hosts for an even k: %d (k=%d) or %d (k=%d)", n, lo*lo*lo/4, lo, k*k*k/4, k)
}

// prepareOut checks the output directory of --out before anything runs
// and makes the directory the results are written into (outdir).
func prepareOut(out string) (*outdir.Dir, error) {
	d, err := outdir.Prepare(out)
	if err != nil {
		return nil, usageErrorf("--out %v", err)
	}
	return d, nil
}

// build resolves the scenario; its errors are the user's to fix. Should
// that take more than two seconds (millions of flows to generate), it says
// so on w unless quiet, rather than leave the user before a silent
// terminal.
func build(s *scenario.Scenario, w io.Writer, quiet bool) (sim.Config, error) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	if !quiet {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-time.After(2 * time.Second):
				fmt.Fprintf(w, "building %s: the topology and the flows of its workload\n", s.Name)
			case <-done:
			}
		}()
	}
	cfg, err := s.Build()
	close(done)
	wg.Wait() // nothing writes to w once build returns
	if err != nil {
		return cfg, usageErrorf("%v", err)
	}
	return cfg, nil
}

// newNetwork checks that the machine can hold cfg, says what it builds
// when that is big, and builds the network with progress shown by p. Its
// errors are the scenario's: usage errors.
func newNetwork(cmd *cobra.Command, cfg sim.Config, p *progress, quiet bool) (*sim.Network, error) {
	big, err := checkMemory(cmd.ErrOrStderr(), quiet, cfg, 1, "this scenario")
	if err != nil {
		return nil, err
	}
	// A big run says what it is doing even where no bar can be drawn (a
	// log file, CI), one line per stage.
	p.lines = big && p.off && !quiet
	cfg.BuildProgress, cfg.Progress = p.build, p.update
	n, err := sim.New(cfg)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	return n, nil
}

// progress shows a progress bar on w once a run has taken two seconds, so
// that short runs print nothing.
type progress struct {
	w     io.Writer
	start time.Time
	bar   *progressbar.ProgressBar
	off   bool
	// current is the stage shown ("" while simulating).
	current string
	// lines prints each stage as a line where there is no bar.
	lines bool
}

func newProgress(w io.Writer, quiet bool) *progress {
	off := quiet
	if f, ok := w.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		off = true
	}
	return &progress{w: w, start: time.Now(), off: off}
}

// shown makes the bar, of total items described as what, once the work
// has taken two seconds, and reports whether it is there.
func (p *progress) shown(total int, what string, predictTime bool) bool {
	if p.off {
		return false
	}
	if p.bar == nil {
		if time.Since(p.start) < 2*time.Second {
			return false
		}
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(what),
			progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(predictTime),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	return true
}

func (p *progress) update(now int64, done, total int) {
	if p.lines && p.current != "simulating" {
		p.current = "simulating"
		fmt.Fprintf(p.w, "simulating %d flows\n", total)
	}
	if !p.shown(total, "flows", false) {
		return
	}
	p.stage("", total)
	p.bar.Describe(fmt.Sprintf("%8.3f ms simulated, flows", float64(now)/1e9))
	_ = p.bar.Set(done)
}

// build shows the network being built: the routes towards each edge
// switch, then the switches (sim.Config.BuildProgress).
func (p *progress) build(stage string, done, total int) {
	if p.lines && p.current != stage {
		p.current = stage
		switch stage {
		case "routes":
			fmt.Fprintf(p.w, "computing the routes towards %d edge switches\n", total)
		default:
			fmt.Fprintf(p.w, "building %d %s\n", total, stage)
		}
	}
	if !p.shown(total, stage, false) {
		return
	}
	if p.stage(stage, total) {
		p.bar.Describe("building " + stage)
	}
	_ = p.bar.Set(done)
}

// stage moves the bar to a new stage of total items, and reports whether
// it is new.
func (p *progress) stage(name string, total int) bool {
	if p.current == name && p.bar.GetMax() == total {
		return false
	}
	p.current = name
	p.bar.Reset()
	p.bar.ChangeMax(total)
	return true
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

func newSimRunCmd() *cobra.Command {
	o := &simOptions{}
	var out string
	var asJSON, rcmTraceOn bool
	cmd := &cobra.Command{
		Use:   "run [SCENARIO.yaml]",
		Short: "Run a scenario file or a built-in scenario and print the FCT summary",
		Long: `run simulates a scenario (a YAML file, or --preset for a built-in one) and
writes its results into an output directory: flows.csv (one row per flow:
FCT, ideal FCT, slowdown), fct.txt (the same in the ns-3 RDMA simulator's
format), ports.csv (per switch port: ECN marks, PFC pauses and paused time,
drops, queue peaks), summary.txt and summary.json, and on request
queues.csv, rates.csv, cc.csv and rcm_trace.csv. The summary is printed
on stdout.

The output directory is checked before the run starts. The results are
written into a new directory beside it and replace it whole when the run
ends, so it never holds files from two runs; a directory that holds files
p4ctl did not write is refused.

A run with PFC on that drops a packet, or that deadlocks, is reported as a
fault and exits 1.`,
		Example: `  p4ctl sim run
  p4ctl sim run --preset default --scheme pfc --seed 7
  p4ctl sim run my.yaml --set workload.load=0.5 --out results/half`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := o.load(cmd, args)
			if err != nil {
				return err
			}
			if out == "" {
				out = filepath.Join("p4rcm-out", s.Name)
			}
			dir, err := prepareOut(out)
			if err != nil {
				return err
			}
			defer dir.Abort()
			cfg, err := build(s, cmd.ErrOrStderr(), o.quiet)
			if err != nil {
				return err
			}
			var trace *rcmTrace
			if rcmTraceOn {
				if cfg.RCM == nil {
					return usageErrorf("--rcm-trace: scheme %s runs no RCM", schemeOf(s))
				}
				if trace, err = newRCMTrace(filepath.Join(dir.Path(), RCMTraceFile)); err != nil {
					return err
				}
				cfg.RCMTrace = trace.event
			}
			p := newProgress(cmd.ErrOrStderr(), o.quiet)
			start := time.Now()
			o.setThreads(&cfg)
			if trace != nil && cfg.Threads > 1 {
				// The trace is written in the order RCM decides, which only
				// one thread gives.
				cfg.Threads = 1
			}
			n, err := newNetwork(cmd, cfg, p, o.quiet)
			if err != nil {
				return err
			}
			if trace != nil {
				trace.net = n
			}
			threadsNote(cmd.ErrOrStderr(), n, cfg.Threads, o.quiet)
			n.Run()
			p.finish()
			res := n.Results()
			wall := time.Since(start)
			sum := report.Summarize(res, report.SummaryOptions{})
			files, err := report.WriteDir(dir.Path(), res, report.DirOptions{RateInterval: cfg.RateSampling.Interval})
			if err != nil {
				return err
			}
			if trace != nil {
				if err := trace.Close(); err != nil {
					return err
				}
				files = append(files, filepath.Join(dir.Path(), RCMTraceFile))
			}
			if err := dir.Commit(); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				if err := report.WriteSummaryJSON(w, sum); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(w, "scenario %s: %d hosts, %d flows, scheme %s, seed %d\n",
					s.Name, len(cfg.Topology.Hosts()), len(cfg.Flows), schemeOf(s), cfg.Seed)
				if err := report.WriteSummaryText(w, sum); err != nil {
					return err
				}
				fmt.Fprintf(w, "wall time %.1f s on %s; results in %s (%s)\n", wall.Seconds(), threadsText(n.Threads()), out, strings.Join(baseNames(files), ", "))
			}
			if len(res.Faults) > 0 {
				return fmt.Errorf("the run has %d fault(s): %s", len(res.Faults), res.Faults[0])
			}
			return nil
		},
	}
	o.addFlags(cmd, "default")
	o.addThreadsFlag(cmd)
	cmd.Flags().StringVarP(&out, "out", "o", "", "output directory (default p4rcm-out/<scenario name>)")
	cmd.Flags().Bool("ns3-fct", false, "")
	_ = cmd.Flags().MarkDeprecated("ns3-fct", "fct.txt is always written")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as JSON")
	cmd.Flags().BoolVar(&rcmTraceOn, "rcm-trace", false, "also write "+RCMTraceFile+": every RCM root, the flows it flags, each CN and the flows it names, RCC's end (schemes rcm, rcm-rcc)")
	return cmd
}

func schemeOf(s *scenario.Scenario) string {
	if s.Scheme == "" {
		return scenario.DefaultScheme
	}
	return s.Scheme
}

func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

func newSimPresetsCmd() *cobra.Command {
	var asJSON, params bool
	cmd := &cobra.Command{
		Use:   "presets",
		Short: "List the built-in scenarios, or with --params the congestion-control parameters",
		Long: `presets lists the built-in scenarios (--preset NAME). With --params it
lists instead every parameter of the dcqcn, hpcc, timely and dctcp sections
and the host's sending window: its path for --set, its value in the
section's default parameter set, and the ns-3 RDMA simulator's name for it
(a key of its configuration file, or an attribute of its RdmaHw).`,
		Example: `  p4ctl sim presets
  p4ctl sim presets --params
  p4ctl sim run --preset bench-fat320 --scheme hpcc --set hpcc.eta=0.9`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if params {
				return writeParams(cmd.OutOrStdout(), asJSON)
			}
			ps := scenario.Presets()
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), ps)
			}
			pr := &printer{w: cmd.OutOrStdout()}
			tw := tabwriter.NewWriter(pr, 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "NAME\tDESCRIPTION\n")
			for _, p := range ps {
				fmt.Fprintf(tw, "%s\t%s\n", p.Name, p.Description)
			}
			tw.Flush()
			return pr.err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&params, "params", false, "list the congestion-control parameters with their defaults and ns-3 names")
	return cmd
}

// writeParams prints scenario.SchemeParams as a table or JSON.
func writeParams(w io.Writer, asJSON bool) error {
	ps := scenario.SchemeParams()
	if asJSON {
		return writeJSON(w, ps)
	}
	pr := &printer{w: w}
	tw := tabwriter.NewWriter(pr, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "PATH\tDEFAULT\tNS-3\n")
	for _, p := range ps {
		ns3 := p.NS3
		if ns3 == "" {
			ns3 = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Path, p.Default, ns3)
	}
	tw.Flush()
	return pr.err
}
