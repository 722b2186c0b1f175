package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/p4rcm/p4rcm/buffercalc"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// bufferOptions are the buffer command's flags.
type bufferOptions struct {
	preset                        string
	ports, priorities             int
	rate, size, mtu, headroom     float64
	cable, nsPerMeter             float64
	interfaceBits, responseQuanta float64
	beta, ecn                     float64
	json                          bool
}

// linkFlags are the flags that change the link the headroom is sized for.
var linkFlags = []string{"rate", "mtu", "cable", "ns-per-meter", "interface-bits", "response-quanta"}

func newBufferCmd() *cobra.Command {
	o := &bufferOptions{}
	cmd := &cobra.Command{
		Use:   "buffer",
		Short: "Compute PFC headroom, PFC (XOFF/XON) and ECN thresholds for a shared-buffer switch",
		Long: `buffer computes the switch buffer settings of the DCQCN paper (section 4):

  t_flight  PFC headroom per port per lossless priority, itemised
  t_PFC     static PFC threshold: t_PFC <= (B - p n t_flight) / (p n), XON at t_PFC - 2 MTU
  t_ECN     static ECN bound:     t_ECN <  t_PFC / n (infeasible when under one MTU)
  dynamic   t_PFC = beta (B - p n t_flight - s) / p and
            t_ECN < beta (B - p n t_flight) / (p n (beta + 1)), swept over the
            standard beta settings

for B bytes of shared buffer, n ports and p lossless priorities. Start from a
preset switch and override any field. Bounds print rounded down to 0.01 KB.

Sizes take B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of 1024);
a bare number is bytes. Rates take bps, Kbps, Mbps, Gbps, Tbps or K, M, G, T
(powers of 1000). Lengths take m or km.`,
		Example: `  p4ctl buffer --preset trident2
  p4ctl buffer --preset trident2 --beta 8
  p4ctl buffer --preset tomahawk --cable 300m --ecn 100KB --beta 1/2
  p4ctl buffer --ports 48 --rate 25G --buffer 16MiB --priorities 2 --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			in, notes, err := o.input(cmd.Flags())
			if err != nil {
				return err
			}
			a, err := buffercalc.Analyze(in)
			if err != nil {
				return asFlagError(cmd, err)
			}
			if o.json {
				return writeJSON(cmd.OutOrStdout(), a)
			}
			p, _ := buffercalc.LookupPreset(o.preset)
			return writeBufferReport(cmd.OutOrStdout(), p, a, notes)
		},
	}
	cmd.AddCommand(newBufferPresetsCmd())

	fs := cmd.Flags()
	fs.StringVar(&o.preset, "preset", "trident2", "switch to start from (see 'p4ctl buffer presets')")
	o.addSwitchFlags(fs)
	valueFlag(fs, &o.beta, "beta", "beta", parseFraction, "dynamic threshold factor, e.g. 8 or 1/8; adds the dynamic thresholds for it")
	valueFlag(fs, &o.ecn, "ecn", "size", buffercalc.ParseSize, "an ECN marking threshold (Kmin) to check against the bounds, e.g. 5KB")
	fs.BoolVar(&o.json, "json", false, "print JSON instead of tables")
	return cmd
}

// addSwitchFlags defines the flags that describe a switch and its links,
// which 'p4ctl buffer' and 'p4ctl pfc set --xoff auto' share.
func (o *bufferOptions) addSwitchFlags(fs *pflag.FlagSet) {
	valueFlag(fs, &o.ports, "ports", "count", parseCount, "number of ports n")
	valueFlag(fs, &o.priorities, "priorities", "count", parseCount, "lossless (PFC) priorities per port p, 1 to 8")
	valueFlag(fs, &o.size, "buffer", "size", buffercalc.ParseSize, "shared buffer B, e.g. 12MB or 16MiB")
	valueFlag(fs, &o.rate, "rate", "rate", buffercalc.ParseRate, "port rate, e.g. 40G or 100Gbps")
	valueFlag(fs, &o.mtu, "mtu", "size", buffercalc.ParseSize, "largest IP packet of any priority, e.g. 1500B or 9KB")
	valueFlag(fs, &o.headroom, "headroom", "size", parseHeadroom, "t_flight per port per priority, e.g. 22.4KB, or 'model' to compute it from the link")
	valueFlag(fs, &o.cable, "cable", "length", buffercalc.ParseLength, "cable length for the headroom, e.g. 100m (default 100m)")
	valueFlag(fs, &o.nsPerMeter, "ns-per-meter", "ns", parsePositive, "cable propagation delay per metre (default 5)")
	valueFlag(fs, &o.interfaceBits, "interface-bits", "bits", parseNonNegative, "delay through one end's PHY and MAC, in bit times (default: the standard figure for the rate)")
	valueFlag(fs, &o.responseQuanta, "response-quanta", "quanta", parseNonNegative, "the peer's PAUSE response time in quanta of 512 bit times (default: IEEE 802.3 annex 31B for the rate)")
}

// input starts from the preset and applies the flags that were given. notes
// say what the combination implies.
func (o *bufferOptions) input(fs *pflag.FlagSet) (buffercalc.Input, []string, error) {
	p, err := buffercalc.LookupPreset(o.preset)
	if err != nil {
		return buffercalc.Input{}, nil, usageErrorf("--%v; see 'p4ctl buffer presets'", err)
	}
	set := fs.Changed
	in := buffercalc.Input{Name: p.Name, Size: p.Buffer, Ports: p.Ports, Priorities: p.Priorities, Headroom: p.Headroom}
	rate, mtu := p.Rate, p.MTU
	if set("rate") {
		rate = o.rate
	}
	if set("mtu") {
		mtu = o.mtu
	}
	in.Link = buffercalc.StandardLink(rate, mtu)
	if set("cable") {
		in.Link.CableMeters = o.cable
	}
	if set("ns-per-meter") {
		in.Link.NsPerMeter = o.nsPerMeter
	}
	if set("interface-bits") {
		in.Link.InterfaceBits, in.Link.FiguresFrom = o.interfaceBits, "given"
	}
	if set("response-quanta") {
		in.Link.ResponseQuanta, in.Link.FiguresFrom = o.responseQuanta, "given"
	}
	var notes []string
	if p.Headroom > 0 && !set("headroom") {
		for _, f := range linkFlags {
			if set(f) {
				in.Headroom = 0
				notes = append(notes, fmt.Sprintf("--%s changes the link, so the preset's stated headroom (%s) gives way to the link model", f, buffercalc.FormatSize(p.Headroom)))
				break
			}
		}
	}
	if set("headroom") {
		in.Headroom = o.headroom
	}
	if set("buffer") {
		in.Size = o.size
	}
	if set("ports") {
		in.Ports = o.ports
	}
	if set("priorities") {
		in.Priorities = o.priorities
	}
	in.Beta, in.ECN = o.beta, o.ecn
	return in, notes, nil
}

// asFlagError turns the calculator's field errors into usage errors naming
// the flag.
func asFlagError(cmd *cobra.Command, err error) error {
	var fe *buffercalc.FieldError
	if errors.As(err, &fe) {
		return usageErrorf("--%s: %s; see '%s --help'", fe.Field, fe.Msg, cmd.CommandPath())
	}
	return err
}

// kb prints an amount as "24.47 KB", right-aligned by the table.
func kb(a buffercalc.Amount) string { return buffercalc.FormatKB(a.Bytes) }

func bytesText(b float64) string { return strconv.FormatFloat(b, 'f', -1, 64) + " B" }

func writeBufferReport(w io.Writer, p buffercalc.Preset, a buffercalc.Analysis, notes []string) error {
	s := a.Switch
	pr := &printer{w: w}
	pr.f("%s: %s\n", p.Name, p.Description)
	pr.f("  %d ports x %s, %s shared buffer, %d lossless priorities, MTU %s\n",
		s.Ports, buffercalc.FormatRate(s.RateBps), buffercalc.FormatSize(s.Buffer), s.Priorities, bytesText(s.MTU))
	pr.f("  figures from: %s\n", p.Source)
	pr.f("  1 KB = 1000 B; bounds are rounded down to 0.01 KB\n")
	for _, n := range notes {
		pr.f("  note: %s\n", n)
	}

	h := a.Headroom
	pr.f("\nPFC headroom per port per priority (t_flight)\n")
	tw := tabwriter.NewWriter(pr, 0, 0, 2, ' ', 0)
	for _, t := range h.Model.Terms {
		fmt.Fprintf(tw, "  %s\t%11s\t%s\n", t.Name, bytesText(t.Bytes), t.Basis)
	}
	fmt.Fprintf(tw, "  model total\t%11s\t%s\n", bytesText(h.Model.Total), buffercalc.FormatKB(h.Model.Total))
	used := "the link model"
	if h.Given {
		used = "given"
		if h.Fitted != nil {
			used += fmt.Sprintf("; the model reaches it with a %.1f m cable", *h.Fitted)
		} else {
			used += "; smaller than the model gives even with no cable"
		}
	}
	fmt.Fprintf(tw, "  t_flight used\t%11s\t%s\n", kb(h.Used), used)
	fmt.Fprintf(tw, "  reserved, p n t_flight\t%11s\t%d priorities x %d ports\n", kb(h.Reserved), s.Priorities, s.Ports)
	tw.Flush()

	st := a.Static
	pr.f("\nStatic thresholds\n")
	tw = tabwriter.NewWriter(pr, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  t_PFC (XOFF)\t<= %11s\t(B - p n t_flight) / (p n)\tbound by the buffer left after headroom, over %d ingress queues\n", kb(st.XOFF), s.Ports*s.Priorities)
	xon := "RESUME two MTU below XOFF"
	if !st.XONFeasible {
		xon = "INFEASIBLE: t_PFC is under two MTU"
	}
	fmt.Fprintf(tw, "  XON\t=  %11s\tt_PFC - 2 MTU\t%s\n", kb(st.XON), xon)
	fmt.Fprintf(tw, "  t_ECN\t<  %11s\tt_PFC / n\tbound by ECN-before-PFC: %s\n", kb(st.ECN), feasibility(st.ECNFeasible, s.MTU))
	tw.Flush()

	if d := a.Dynamic; d != nil {
		pr.f("\nDynamic thresholds, beta %s\n", formatFraction(d.Beta))
		tw = tabwriter.NewWriter(pr, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  t_ECN\t<  %11s\tbeta (B - p n t_flight) / (p n (beta + 1))\tbound by ECN-before-PFC with s = p n t_ECN: %s\n", kb(d.ECN), feasibility(d.ECNFeasible, s.MTU))
		fmt.Fprintf(tw, "  t_PFC, empty buffer\t=  %11s\tbeta (B - p n t_flight) / p\n", kb(d.XOFFEmpty))
		fmt.Fprintf(tw, "  t_PFC, worst case\t=  %11s\tn t_ECN, buffer holding p n t_ECN\n", kb(d.XOFFAtECN))
		tw.Flush()
	}

	pr.f("\nBeta sweep, t_PFC = beta (B - p n t_flight - s) / p\n")
	tw = tabwriter.NewWriter(pr, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  beta\tt_PFC, s = 0\tt_PFC, worst\tt_ECN bound\t\t\n")
	for _, r := range a.Sweep {
		mark := ""
		if a.Dynamic != nil && r.Beta == a.Dynamic.Beta {
			mark = "<- --beta"
		}
		ok := "ok"
		if !r.ECNFeasible {
			ok = "under 1 MTU"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t\t%s\n", formatFraction(r.Beta), kb(r.XOFFEmpty), kb(r.XOFFAtECN), kb(r.ECN), strings.TrimSpace(ok+"  "+mark))
	}
	tw.Flush()

	pr.f("\nVerdict\n")
	if st.ECNFeasible {
		pr.f("  static thresholds work: set t_PFC <= %s and t_ECN < %s\n", kb(st.XOFF), kb(st.ECN))
	} else {
		pr.f("  static thresholds cannot keep ECN ahead of PFC: the t_ECN bound %s is under one MTU (%s)\n", kb(st.ECN), bytesText(s.MTU))
	}
	if a.MinBeta > 0 {
		pr.f("  dynamic thresholds need beta >= %.4g for a one-MTU t_ECN (smallest standard setting: %s)\n", a.MinBeta, standardBeta(a.MinStandardBeta))
	} else {
		pr.f("  no beta gives a one-MTU t_ECN: the buffer left after headroom is too small\n")
	}
	if c := a.ECNCheck; c != nil {
		pr.f("  ECN threshold %s: static %s", kb(c.Threshold), okText(c.Static))
		if c.Dynamic != nil {
			pr.f(", beta %s %s", formatFraction(a.Dynamic.Beta), okText(*c.Dynamic))
		}
		pr.f("\n")
	}
	return pr.err
}

func feasibility(ok bool, mtu float64) string {
	if ok {
		return "ok, at least one MTU"
	}
	return fmt.Sprintf("INFEASIBLE, under one MTU (%s)", bytesText(mtu))
}

func okText(ok bool) string {
	if ok {
		return "ok (under the bound)"
	}
	return "VIOLATES the bound"
}

func standardBeta(b float64) string {
	if b == 0 {
		return "none up to 8"
	}
	return formatFraction(b)
}

// printer writes formatted text and keeps the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) Write(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	n, err := p.w.Write(b)
	p.err = err
	return n, err
}

func (p *printer) f(format string, args ...any) { fmt.Fprintf(p, format, args...) }

func newBufferPresetsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "presets",
		Short: "List the built-in switch presets and where their figures come from",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ps := buffercalc.Presets()
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), ps)
			}
			pr := &printer{w: cmd.OutOrStdout()}
			tw := tabwriter.NewWriter(pr, 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "NAME\tPORTS\tBUFFER\tLOSSLESS\tHEADROOM\tSWITCH\n")
			for _, p := range ps {
				hr := "model"
				if p.Headroom > 0 {
					hr = buffercalc.FormatSize(p.Headroom)
				}
				fmt.Fprintf(tw, "%s\t%d x %s\t%s\t%d\t%s\t%s\n", p.Name, p.Ports, buffercalc.FormatRate(p.Rate),
					buffercalc.FormatSize(p.Buffer), p.Priorities, hr, p.Description)
			}
			tw.Flush()
			for _, p := range ps {
				pr.f("\n%s: %s", p.Name, strings.TrimSpace(p.Source))
			}
			pr.f("\n")
			return pr.err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}
