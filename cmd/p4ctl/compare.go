package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/p4rcm/p4rcm/buffercalc"
	"github.com/p4rcm/p4rcm/sim/report"
	"github.com/spf13/cobra"
)

func newSimCompareCmd() *cobra.Command {
	var asJSON bool
	bounds := []int64{10_000, 100_000, 1_000_000}
	cmd := &cobra.Command{
		Use:   "compare A B",
		Short: "Set two runs' FCT slowdown percentiles side by side, all flows and by size (p4rcm's or the ns-3 RDMA simulator's fct.txt)",
		Long: `compare reads two runs' fct.txt, the ns-3 RDMA simulator's format that
'p4ctl sim run' also writes (a run's output directory stands for the
fct.txt in it), and prints their FCT slowdown percentiles side by side:
p50, p95 and p99 of all flows and of each size bucket, and A's over B's
less one. Percentiles are the sorted slowdowns (fct_ns / ideal_ns) at index
floor(p n), as that simulator's scripts take them. The flows need not be
the same in the two; each bucket counts its own.`,
		Example: `  p4ctl sim run --preset bench-fat320 --scheme hpcc -o hpcc
  p4ctl sim compare hpcc /opt/ns3-rdma/simulation/mix/fct_fat320_ws30_hp95.txt`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var runs [2][]report.FCTSlowdown
			for i, name := range args {
				flows, err := readFCT(name)
				if err != nil {
					return usageErrorf("%v", err)
				}
				if len(flows) == 0 {
					return usageErrorf("%s holds no flow", name)
				}
				runs[i] = flows
			}
			cmp := report.CompareFCT(runs[0], runs[1], report.Buckets(bounds))
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), cmp)
			}
			return writeFCTComparison(cmd.OutOrStdout(), args[0], args[1], cmp)
		},
	}
	cmd.Flags().Var(&parsedValue[[]int64]{dst: &bounds, parse: parseSizeBounds, typ: "sizes", text: "10KB,100KB,1MB"}, "buckets",
		"flow sizes that bound the buckets, ascending")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// readFCT reads an fct.txt, or the one in a run's output directory.
func readFCT(name string) ([]report.FCTSlowdown, error) {
	if st, err := os.Stat(name); err == nil && st.IsDir() {
		name = filepath.Join(name, report.NS3FCTFile)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return report.ReadNS3FCT(f, name)
}

// parseSizeBounds reads ascending flow sizes: "10KB,100KB,1MB".
func parseSizeBounds(s string) ([]int64, error) {
	var out []int64
	for _, part := range strings.Split(s, ",") {
		v, err := buffercalc.ParseSize(strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		if len(out) > 0 && int64(v) <= out[len(out)-1] {
			return nil, fmt.Errorf("%q: sizes must ascend", s)
		}
		out = append(out, int64(v))
	}
	return out, nil
}

func writeFCTComparison(w io.Writer, a, b string, cmp []report.FCTComparison) error {
	pr := &printer{w: w}
	pr.f("FCT slowdown p50/p95/p99 (sorted at index floor(p n)); A = %s, B = %s\n\n", a, b)
	tw := tabwriter.NewWriter(pr, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "bucket\tflows A\tflows B\tA\tB\tA vs B\n")
	for _, c := range cmp {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", c.Bucket, c.FlowsA, c.FlowsB, pctText(c.A, c.FlowsA), pctText(c.B, c.FlowsB), diffText(c))
	}
	tw.Flush()
	return pr.err
}

func pctText(p report.Percentiles, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f/%.3f/%.3f", p[0], p[1], p[2])
}

func diffText(c report.FCTComparison) string {
	if c.FlowsA == 0 || c.FlowsB == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%/%+.1f%%/%+.1f%%", 100*c.Diff[0], 100*c.Diff[1], 100*c.Diff[2])
}
