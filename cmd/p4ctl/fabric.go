package main

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/p4rcm/p4rcm/buffercalc"
	"github.com/p4rcm/p4rcm/controlplane"
	"github.com/p4rcm/p4rcm/fabric"
	"github.com/p4rcm/p4rcm/tutorialjson"
	"github.com/spf13/cobra"
)

func newFabricCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fabric",
		Short: "Program every switch of a fabric running rcm.p4 from the simulator's topology and parameters",
		Args:  noArgs,
		RunE:  needCommand,
	}
	cmd.AddCommand(newFabricApplyCmd())
	return cmd
}

func newFabricApplyCmd() *cobra.Command {
	o := &simOptions{}
	var tutorial, switchesFile, host, election string
	var intRate float64
	var portBase int
	var deviceBase uint64
	var dryRun, replace, check bool
	var parallel int
	var timeout, keep time.Duration
	var tf tlsFlags
	cmd := &cobra.Command{
		Use:   "apply [SCENARIO.yaml]",
		Short: "Install routes, ECMP and SAR groups, PFC, RED/ECN and RCM on every switch of a fabric",
		Long: `apply computes what every switch of a fabric must hold and installs it over
P4Runtime: routes to every host (a next hop, or an ECMP group), SAR groups
when the scheme is rcm, INT on every port when it is hpcc (with the
link's rate, or --int-rate), per-port PFC XOFF/XON (buffercalc's static
thresholds for the switch's buffer, ports and each port's rate and cable),
RED/ECN from the scenario's DCQCN parameter set scaled to each port's rate,
RCM settings from the scenario's RCM parameters, and the clone sessions
PAUSEs and CNs leave by: the same topology and figures 'p4ctl sim run'
simulates.

The topology is the scenario's (a file or --preset), or a p4lang tutorials
topology.json (--topology), whose host addresses and port numbers are
kept; simulator hosts get 10.0.0.0 + node ID + 1. Switches are reached as
--switches FILE says ({"s1": {"addr": "127.0.0.1:50051", "device_id": 0}}),
else the i-th switch (from 0, in node order) at --host:--grpc-port-base+i,
device --device-id-base+i, as the tutorials number them.

A switch that runs no program gets rcm.p4 first, under a cookie made from
the program and the fabric's shape (its switches, links, ports and
addresses): the cookie says the switch is this fabric's. A switch that
runs another pipeline (another fabric's, or a program set by hand) is
refused and left as it was, so that a fabric never programs switches
that are not its own by accident (another user's on the same ports);
--replace installs this fabric's pipeline there too, emptying its
tables. A second apply changes nothing and says so; a switch restarted in the middle gets everything
again; --keep 1s applies every second until Ctrl-C, so switches that
restart are programmed again within a second. --dry-run prints what would
change and writes nothing. Exit 1 if any switch failed (the others are
still programmed).`,
		Example: `  p4ctl fabric apply --preset rcm-incast-victim --dry-run
  p4ctl fabric apply --preset default --k 4 --scheme rcm --grpc-port-base 50051
  p4ctl fabric apply --topology topology.json --switches switches.json`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := o.load(cmd, args)
			if err != nil {
				return err
			}
			// The scenario, the topology and the switches file are the
			// user's input: what is wrong there is wrong usage, exit 2.
			cfg, err := s.BuildNetwork()
			if err != nil {
				return usageErrorf("%v", err)
			}
			var f *fabric.Fabric
			if tutorial != "" {
				tt, err := tutorialjson.LoadTopology(tutorial)
				if err != nil {
					return usageErrorf("--topology %v", err)
				}
				f, err = fabric.FromTutorial(tt)
				if err != nil {
					return usageErrorf("--topology %v", err)
				}
			} else if f, err = fabric.FromTopology(cfg.Topology); err != nil {
				return usageErrorf("%v", err)
			}
			if cmd.Flags().Changed("int-rate") && cfg.CC != "hpcc" {
				return usageErrorf("--int-rate %s: only HPCC's switches push INT; give --scheme hpcc (or rcm-hpcc)", buffercalc.FormatRate(intRate))
			}
			f.INTRate = intRate
			intents, err := f.Plan(&cfg)
			if err != nil {
				return usageErrorf("%v", err)
			}
			tlsCfg, err := tf.config()
			if err != nil {
				return err
			}
			targets := map[string]fabric.Target{}
			if switchesFile != "" {
				if targets, err = readTargets(switchesFile, tlsCfg); err != nil {
					return usageErrorf("--switches %v", err)
				}
			}
			if check {
				n := 0
				for _, in := range intents {
					n += len(in.Entries)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "fabric of %d switches checked: %d entries planned; no switch contacted\n", len(intents), n)
				return nil
			}
			if switchesFile == "" {
				names := f.SwitchNames()
				if last := portBase + len(names) - 1; portBase < 1 || last > 65535 {
					return usageErrorf("--grpc-port-base %d: the %d switches' ports run to %d; want ports 1 to 65535", portBase, len(names), last)
				}
				for i, name := range names {
					targets[name] = fabric.Target{Addr: net.JoinHostPort(host, strconv.Itoa(portBase+i)), DeviceID: deviceBase + uint64(i), TLS: tlsCfg}
				}
			}
			if parallel < 1 {
				return usageErrorf("--parallel %d: want 1 or more switches at once", parallel)
			}
			sf := switchFlags{election: election}
			id, err := sf.electionID()
			if err != nil {
				return err
			}
			pipe, err := f.Pipeline()
			if err != nil {
				return err
			}
			opts := fabric.ApplyOptions{Pipeline: pipe, Replace: replace, Election: id, DryRun: dryRun, Parallel: parallel, Timeout: timeout}
			start := time.Now()
			results := fabric.Apply(cmd.Context(), intents, targets, opts)
			err = writeFabricResults(cmd, results, targets, dryRun, time.Since(start))
			if keep == 0 || dryRun {
				return err
			}
			// --keep: apply again every interval until Ctrl-C, saying
			// only what changed; a switch that restarted (or failed)
			// converges on the next round.
			ctx, stop := interrupted(cmd.Context())
			defer stop()
			for {
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(keep):
				}
				for _, r := range fabric.Apply(ctx, intents, targets, opts) {
					switch {
					case ctx.Err() != nil:
						return nil
					case r.Err != nil:
						fmt.Fprintf(cmd.OutOrStdout(), "%s %s: %s\n", time.Now().Format(time.TimeOnly), r.Name, statusText(r.Err))
					case r.Applied.Inserted+r.Applied.Modified > 0 || r.PipelineSet:
						fmt.Fprintf(cmd.OutOrStdout(), "%s %s: pipeline %s, %d inserted, %d modified\n", time.Now().Format(time.TimeOnly), r.Name,
							map[bool]string{true: "set", false: "kept"}[r.PipelineSet], r.Applied.Inserted, r.Applied.Modified)
					}
				}
			}
		},
	}
	o.addFlags(cmd, "default")
	fs := cmd.Flags()
	fs.StringVar(&tutorial, "topology", "", "a p4lang tutorials topology.json instead of the scenario's topology")
	fs.StringVar(&switchesFile, "switches", "", `JSON file naming each switch's P4Runtime address: {"s1": {"addr": "HOST:PORT", "device_id": N}}, and, per switch, "ssl", "cacert", "cert" and "private_key" as the flags`)
	fs.StringVar(&host, "host", "127.0.0.1", "host of every switch when --switches is not given")
	fs.IntVar(&portBase, "grpc-port-base", 50051, "P4Runtime port of the first switch; the i-th is this + i")
	fs.Uint64Var(&deviceBase, "device-id-base", 0, "device ID of the first switch; the i-th is this + i")
	fs.StringVar(&election, "election-id", "0,1", "this controller's election ID, HIGH,LOW or LOW")
	fs.BoolVar(&dryRun, "dry-run", false, "print what would change on each switch, write nothing")
	fs.BoolVar(&check, "check", false, "check the scenario or topology and the switches file and plan every switch's entries, contacting no switch (mininet/run.py's check before it builds a network)")
	fs.BoolVar(&replace, "replace", false, "program switches that run another pipeline (another fabric's, or one set by hand) too: their tables are emptied")
	fs.IntVar(&parallel, "parallel", 8, "switches programmed at once")
	fs.DurationVar(&timeout, "timeout", 10*time.Second, "how long to wait for each switch to answer")
	fs.DurationVar(&keep, "keep", 0, "apply again every this long until Ctrl-C, printing what changed: restarted switches converge")
	valueFlag(fs, &intRate, "int-rate", "rate", buffercalc.ParseRate, "HPCC: the rate every port's INT records carry, where the ports run slower than the links say, e.g. 69.5M (default: each link's rate)")
	tf.add(fs)
	return cmd
}

// switchEntry is a switch of a --switches file: its address, and how
// to reach it when not as the flags say.
type switchEntry struct {
	Addr       string `json:"addr"`
	DeviceID   uint64 `json:"device_id"`
	SSL        *bool  `json:"ssl"`
	CACert     string `json:"cacert"`
	Cert       string `json:"cert"`
	PrivateKey string `json:"private_key"`
}

// readTargets reads a --switches file. A switch that sets "ssl" is
// reached as its own "ssl", "cacert", "cert" and "private_key" say
// (paths relative to the file's directory); the others as the flags do
// (flagTLS).
func readTargets(path string, flagTLS *tls.Config) (map[string]fabric.Target, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var entries map[string]switchEntry
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&entries); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := 1
			for _, c := range data[:se.Offset] {
				if c == '\n' {
					line++
				}
			}
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	out := map[string]fabric.Target{}
	for name, e := range entries {
		if err := controlplane.CheckAddr(e.Addr); err != nil {
			return nil, fmt.Errorf("%s: %s.addr %v", path, name, err)
		}
		t := fabric.Target{Addr: e.Addr, DeviceID: e.DeviceID, TLS: flagTLS}
		if e.SSL == nil && (e.CACert != "" || e.Cert != "" || e.PrivateKey != "") {
			return nil, fmt.Errorf("%s: %s: cacert, cert and private_key need \"ssl\": true", path, name)
		}
		if e.SSL != nil {
			rel := func(p string) string {
				if p == "" || filepath.IsAbs(p) {
					return p
				}
				return filepath.Join(filepath.Dir(path), p)
			}
			tf := tlsFlags{ssl: *e.SSL, cacert: rel(e.CACert), cert: rel(e.Cert), key: rel(e.PrivateKey)}
			if t.TLS, err = tf.config(); err != nil {
				return nil, fmt.Errorf("%s: %s: %v", path, name, strings.ReplaceAll(strings.ReplaceAll(err.Error(), "--private-key", "private_key"), "--", ""))
			}
		}
		out[name] = t
	}
	return out, nil
}

func writeFabricResults(cmd *cobra.Command, results []fabric.Result, targets map[string]fabric.Target, dryRun bool, elapsed time.Duration) error {
	out := cmd.OutOrStdout()
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SWITCH\tADDRESS\tPIPELINE\tINSERTED\tMODIFIED\tUNCHANGED\tTIME\tERROR")
	var failed, entries, changed int
	for _, r := range results {
		// PIPELINE says what the switch's pipeline is now: set by this
		// apply, kept as it was, or, where the apply failed before it
		// got there, not known ("-").
		pipe, errText := "kept", ""
		if r.PipelineSet {
			pipe = "set"
		}
		if r.Err != nil {
			failed++
			errText = statusText(r.Err)
			if !r.PipelineSet {
				pipe = "-"
			}
		}
		entries += r.Entries()
		changed += r.Applied.Inserted + r.Applied.Modified
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%.2fs\t%s\n", r.Name, targets[r.Name].Addr, pipe,
			r.Applied.Inserted, r.Applied.Modified, r.Applied.Unchanged, r.Elapsed.Seconds(), errText)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if dryRun {
		for _, r := range results {
			for _, c := range r.Changes {
				fmt.Fprintf(out, "%s: %s\n", r.Name, c)
			}
		}
	}
	verb := "applied"
	if dryRun {
		verb = "dry run, nothing written"
	}
	summary := fmt.Sprintf("%d inserts or modifies", changed)
	if changed == 0 && failed == 0 {
		summary = "nothing to change"
	}
	switches := fmt.Sprintf("%d switches", len(results))
	if failed > 0 {
		// Only the switches that took everything count as applied.
		switches = fmt.Sprintf("%d of %d switches (%d failed)", len(results)-failed, len(results), failed)
	}
	fmt.Fprintf(out, "%s: %s, %d entries checked, %s, in %.2f s (%.0f entries/s)\n",
		verb, switches, entries, summary, elapsed.Seconds(), float64(entries)/elapsed.Seconds())
	if failed > 0 {
		return fmt.Errorf("%d of %d switches failed (see the table above)", failed, len(results))
	}
	return nil
}
