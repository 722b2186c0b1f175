package main

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/p4rcm/p4rcm/buffercalc"
	"github.com/p4rcm/p4rcm/controlplane"
	"github.com/p4rcm/p4rcm/p4"
	"github.com/p4rcm/p4rcm/p4/settings"
	"github.com/p4rcm/p4rcm/rcm"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// portArg reads the PORT argument: a switch port, 0 to 510 (511 is
// BMv2's drop port).
func portArg(cmd *cobra.Command, args []string) (uint32, error) {
	if len(args) != 1 {
		return 0, usageErrorf("name one port; see '%s --help'", cmd.CommandPath())
	}
	n, err := strconv.ParseUint(args[0], 10, 32)
	if err != nil || n >= p4.Ports-1 {
		return 0, usageErrorf("port %q: want a port number, 0 to %d", args[0], p4.Ports-2)
	}
	return uint32(n), nil
}

// setCmd is the frame of ecn, pfc and rcm: a group with one command, set.
func setCmd(name, short string, set *cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:   name,
		Short: short,
		Args:  noArgs,
		RunE:  needCommand,
	}
	cmd.AddCommand(set)
	return cmd
}

func newECNCmd() *cobra.Command {
	var sf *switchFlags
	var red settings.RED
	cmd := &cobra.Command{
		Use:   "set PORT",
		Short: "Set a port's RED/ECN marking curve and WRED threshold (red_config)",
		Long: `set marks ECN-capable packets leaving PORT with a probability rising from
0 at --kmin bytes queued to --pmax at --kmax, and all of them beyond; with
--wred-k, packets that are not ECN-capable are dropped above it.`,
		Example: `  p4ctl ecn set 2 --kmin 5KB --kmax 200KB --pmax 0.01
  p4ctl ecn set 2 --kmin 400KB --kmax 1600KB --pmax 0.2 --wred-k 1600KB`,
		RunE: func(cmd *cobra.Command, args []string) error {
			port, err := portArg(cmd, args)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("kmin") || !cmd.Flags().Changed("kmax") {
				return usageErrorf("--kmin and --kmax are required; see '%s --help'", cmd.CommandPath())
			}
			e, err := red.Entry(port)
			if err != nil {
				return usageErrorf("--%v", err)
			}
			what := fmt.Sprintf("port %d: RED/ECN Kmin %s, Kmax %s, Pmax %g, WRED %s",
				port, buffercalc.FormatSize(red.Kmin), buffercalc.FormatSize(red.Kmax), red.Pmax, sizeOrOff(red.WREDK))
			if red.Kmin == red.Kmax {
				// No ramp: the program marks every ECN-capable packet
				// past K, DCTCP's step; a --pmax given would be ignored.
				if cmd.Flags().Changed("pmax") {
					return usageErrorf("--kmin = --kmax (%s) is a step, every packet past it marked: --pmax has nothing to set there; leave it out, or give --kmax above --kmin for a ramp", buffercalc.FormatSize(red.Kmin))
				}
				what = fmt.Sprintf("port %d: ECN marks every ECN-capable packet past %s (a step: Kmin = Kmax), WRED %s",
					port, buffercalc.FormatSize(red.Kmin), sizeOrOff(red.WREDK))
			}
			return setPortEntry(cmd, sf, e, what)
		},
	}
	sf = addSwitchFlags(cmd)
	fs := cmd.Flags()
	valueFlag(fs, &red.Kmin, "kmin", "size", buffercalc.ParseSize, "queue where marking starts, e.g. 5KB")
	valueFlag(fs, &red.Kmax, "kmax", "size", buffercalc.ParseSize, "queue where every packet is marked, e.g. 200KB")
	red.Pmax = 0.01
	valueFlag(fs, &red.Pmax, "pmax", "probability", parseNonNegative, "marking probability at kmax (default 0.01)")
	valueFlag(fs, &red.WREDK, "wred-k", "size", buffercalc.ParseSize, "drop packets that are not ECN-capable above this queue (default: never)")
	return setCmd("ecn", "Set RED/ECN marking on a running switch's ports", cmd)
}

func newINTCmd() *cobra.Command {
	var sf *switchFlags
	var c settings.INT
	var off bool
	cmd := &cobra.Command{
		Use:   "set PORT",
		Short: "Set a port's in-band telemetry for HPCC: its rate in the records it pushes (int_config)",
		Long: `set makes PORT count the bytes it sends and push a hop record (when the
packet left, the bytes sent before it, the bytes queued behind it, and
--rate) into every data packet that asks for INT (DSCP bit 0, which HPCC's
agents set), up to five hops. --off removes the port's entry: its packets
pass untouched.`,
		Example: `  p4ctl int set 2 --rate 100G
  p4ctl int set 2 --off`,
		RunE: func(cmd *cobra.Command, args []string) error {
			port, err := portArg(cmd, args)
			if err != nil {
				return err
			}
			changed := cmd.Flags().Changed("rate")
			if off == changed {
				return usageErrorf("give --rate, or --off; see '%s --help'", cmd.CommandPath())
			}
			if off {
				e := settings.INTOff(port)
				return withSession(cmd, sf, func(ctx context.Context, s *controlplane.Session) error {
					return said(cmd, s.DeleteEntry(ctx, e), fmt.Sprintf("port %d: INT off", port))
				})
			}
			e, err := c.Entry(port)
			if err != nil {
				return usageErrorf("--%v", err)
			}
			return setPortEntry(cmd, sf, e, fmt.Sprintf("port %d: INT at %s", port, buffercalc.FormatRate(c.Rate)))
		},
	}
	sf = addSwitchFlags(cmd)
	fs := cmd.Flags()
	valueFlag(fs, &c.Rate, "rate", "rate", buffercalc.ParseRate, "the port's rate, carried in its records, e.g. 100G or 69.5M")
	fs.BoolVar(&off, "off", false, "remove the port's entry: it pushes no INT")
	return setCmd("int", "Set in-band telemetry (INT, for HPCC) on a running switch's ports", cmd)
}

func sizeOrOff(b float64) string {
	if b == 0 {
		return "off"
	}
	return buffercalc.FormatSize(b)
}

func newPFCCmd() *cobra.Command {
	var sf *switchFlags
	o := &bufferOptions{}
	var xoff, mac string
	var xon float64
	var quanta uint16
	var prio int
	var off bool
	cmd := &cobra.Command{
		Use:   "set PORT",
		Short: "Set a port's PFC thresholds, lossless priority and pause time (ingress_port_config)",
		Long: `set turns on PFC for traffic entering PORT: past --xoff bytes in its ingress
account the switch pauses the neighbour on the lossless --priority, and
resumes it at --xon. --xoff auto takes the static t_PFC and XON of
'p4ctl buffer' for the switch the buffer flags describe (a preset, and
--rate, --cable, --buffer, --ports ...). --off turns PFC off on the port.
The port's CN settings ('p4ctl rcm set') are kept.`,
		Example: `  p4ctl pfc set 1 --xoff auto --preset trident2 --cable 10m
  p4ctl pfc set 1 --xoff 24KB --xon 21KB --rate 100G --priority 3
  p4ctl pfc set 1 --off`,
		RunE: func(cmd *cobra.Command, args []string) error {
			port, err := portArg(cmd, args)
			if err != nil {
				return err
			}
			in, _, err := o.input(cmd.Flags())
			if err != nil {
				return err
			}
			c := settings.PFC{PauseQuanta: quanta, LinkRate: in.Link.Rate, Priority: prio}
			if off {
				var with []string
				cmd.Flags().Visit(func(f *pflag.Flag) {
					if f.Name != "off" && f.Name != "mac" && !slices.Contains([]string{"addr", "device-id", "election-id", "timeout", "ssl", "cacert", "cert", "private-key"}, f.Name) {
						with = append(with, "--"+f.Name)
					}
				})
				if len(with) > 0 {
					return usageErrorf("--off turns PFC off on the port: %s would set nothing; give one or the other", strings.Join(with, ", "))
				}
			}
			if !off && xoff != "auto" {
				// The switch's description is --xoff auto's: with the
				// thresholds given it would set nothing.
				var with []string
				for _, name := range autoOnly {
					if cmd.Flags().Changed(name) {
						with = append(with, "--"+name)
					}
				}
				if len(with) > 0 {
					return usageErrorf("%s describe the switch that --xoff auto computes the thresholds for; with --xoff %s given they would set nothing: leave them out (--rate sets the length of a pause quantum)", strings.Join(with, ", "), xoff)
				}
			}
			switch {
			case off:
			case xoff == "auto":
				a, err := buffercalc.Analyze(in)
				if err != nil {
					return asFlagError(cmd, err)
				}
				if !a.Static.XONFeasible {
					return fmt.Errorf("--xoff auto: t_PFC %s is under two MTU, leaving no room for XON: give the switch more buffer or fewer ports", buffercalc.FormatKB(a.Static.XOFF.Bytes))
				}
				c.XOFF, c.XON = a.Static.XOFF.Bytes, a.Static.XON.Bytes
			case xoff == "":
				return usageErrorf("--xoff is required: a size, 'auto', or --off")
			default:
				if c.XOFF, err = buffercalc.ParseSize(xoff); err != nil {
					return usageErrorf("--xoff: %v", err)
				}
				if !cmd.Flags().Changed("xon") {
					return usageErrorf("--xon is required with a given --xoff")
				}
				c.XON = xon
			}
			return withSession(cmd, sf, func(ctx context.Context, s *controlplane.Session) error {
				have, err := portParams(ctx, s, port)
				if err != nil {
					return err
				}
				if c.MAC, err = portMAC(mac, have, port); err != nil {
					return err
				}
				params, err := c.Params()
				if err != nil {
					return usageErrorf("--%v", err)
				}
				params = keep(params, have, "cn_enabled", "cn_interval_ns", "cn_ingress_bytes", "cn_hold_ns")
				what := fmt.Sprintf("port %d: PFC off", port)
				if c.XOFF > 0 {
					what = fmt.Sprintf("port %d: PFC on priority %d, XOFF %s, XON %s, %d quanta of %.2f ns",
						port, prio, buffercalc.FormatKB(c.XOFF), buffercalc.FormatKB(c.XON), quanta, 512/c.LinkRate*1e9)
				}
				return said(cmd, s.SetEntry(ctx, settings.PortEntry(port, params)), what)
			})
		},
	}
	sf = addSwitchFlags(cmd)
	fs := cmd.Flags()
	fs.StringVar(&o.preset, "preset", "trident2", "switch --xoff auto starts from (see 'p4ctl buffer presets'); its rate times pause quanta")
	o.addSwitchFlags(fs)
	fs.StringVar(&xoff, "xoff", "", "pause the neighbour past this many bytes, e.g. 24KB, or 'auto'")
	valueFlag(fs, &xon, "xon", "size", buffercalc.ParseSize, "resume it at this many bytes (with a given --xoff)")
	fs.Uint16Var(&quanta, "quanta", 0xffff, "pause time a PAUSE asks for, in quanta of 512 bit times")
	fs.IntVar(&prio, "priority", 3, "the lossless priority, 0 to 7 (RoCEv2's DSCP 26 is priority 3)")
	fs.StringVar(&mac, "mac", "", "the port's MAC address, source of its PAUSEs (default: the one set before, else 02:00:00:00:PP:PP)")
	fs.BoolVar(&off, "off", false, "turn PFC off on the port")
	return setCmd("pfc", "Set PFC on a running switch's ports", cmd)
}

// autoOnly are the flags of 'pfc set' that describe the switch for
// --xoff auto, and nothing else.
var autoOnly = []string{"preset", "ports", "priorities", "buffer", "mtu", "headroom", "cable", "ns-per-meter", "interface-bits", "response-quanta"}

func newRCMCmd() *cobra.Command {
	var sf *switchFlags
	var rate, mtu float64
	var c settings.RCM
	var cn, rateLimit bool
	var cnInterval, cnHold time.Duration
	var cnIngress float64
	cmd := &cobra.Command{
		Use:   "set PORT",
		Short: "Set a port's RCM: CRD sampling, CAM threshold, window, and CNs (rcm_config)",
		Long: `set turns on Regional Congestion Mitigation for traffic leaving PORT. Every
setting defaults to the simulator's RCM defaults (package rcm) scaled to
the port's --rate and --mtu, so the switch and the model start from the
same figures; flags override them. --cn says the neighbour on PORT is a
switch, to which CNs may go; its timing flags set how often and how long
they hold. --rate-limit makes RCC a rate limit where CNs named the harmful
flows: they send at most W_c in the time W takes at --rate, even when the
link would idle (the simulator's work_conserving: false).`,
		Example: `  p4ctl rcm set 2 --rate 100G
  p4ctl rcm set 2 --rate 3M --rate-limit
  p4ctl rcm set 2 --qeq 25KB --window 8KB --cam-min-hits 2 --high 1 --low 0
  p4ctl rcm set 1 --cn --cn-interval 2us --cn-hold 20us`,
		RunE: func(cmd *cobra.Command, args []string) error {
			port, err := portArg(cmd, args)
			if err != nil {
				return err
			}
			if mtu < 64 || mtu > 9216 {
				return usageErrorf("--mtu %s: want a frame size of 64 B (Ethernet's least) to 9216 B (jumbo)", buffercalc.FormatSize(mtu))
			}
			def := settings.RCMFromModel(rcm.Defaults(), rate, mtu)
			fs := cmd.Flags()
			defaults := []struct {
				flag string
				set  func()
			}{
				{"sample-every", func() { c.SampleEvery = def.SampleEvery }},
				{"qeq", func() { c.QEq = def.QEq }},
				{"wq", func() { c.Wq = def.Wq }},
				{"fb-quantum", func() { c.FbQuantum = def.FbQuantum }},
				{"cam-min-hits", func() { c.CAMMinHits = def.CAMMinHits }},
				{"window", func() { c.Window = def.Window }},
			}
			for _, d := range defaults {
				if !fs.Changed(d.flag) {
					d.set()
				}
			}
			if !cn {
				// CN timings without CNs would set nothing; --cn=false
				// turns them off, and alone says so.
				for _, name := range []string{"cn-interval", "cn-hold", "cn-ingress"} {
					if fs.Changed(name) {
						return usageErrorf("--%s sets how CNs go to the neighbour on PORT, and CNs are off without --cn: give --cn too (the neighbour is a switch), or leave it out", name)
					}
				}
			}
			if rateLimit {
				c.WindowTime = settings.WindowTime(c.Window, rate)
			}
			e, err := c.Entry(port)
			if err != nil {
				return usageErrorf("--%v", err)
			}
			return withSession(cmd, sf, func(ctx context.Context, s *controlplane.Session) error {
				if err := s.SetEntry(ctx, e); err != nil {
					return err
				}
				if changedAny(fs, "cn", "cn-interval", "cn-hold", "cn-ingress") {
					have, err := portParams(ctx, s, port)
					if err != nil {
						return err
					}
					m, err := portMAC("", have, port)
					if err != nil {
						return err
					}
					// A port without set_port gets one with PFC off.
					base, err := settings.PFC{MAC: m, LinkRate: rate, CNs: cn, CNInterval: cnInterval,
						CNIngress: cnIngress, CNHold: cnHold}.Params()
					if err != nil {
						return usageErrorf("--%v", err)
					}
					if len(have) > 0 {
						base = keep(base, have, "mac", "xoff_bytes", "xon_bytes", "pause_quanta", "quantum_ns", "pfc_priority")
					}
					if err := s.SetEntry(ctx, settings.PortEntry(port, base)); err != nil {
						return err
					}
				}
				what := fmt.Sprintf("port %d: RCM sampling 1 in %d, Q_eq %s, w_q %g, F_b quantum %s, CAM %d of %d, W %s, queues %d/%d",
					port, c.SampleEvery, buffercalc.FormatSize(c.QEq), c.Wq, buffercalc.FormatSize(c.FbQuantum), c.CAMMinHits, p4.CAMDepth,
					buffercalc.FormatSize(c.Window), c.High, c.Low)
				if rateLimit {
					what += fmt.Sprintf(", harmful flows at an edge limited to W_c every %v", c.WindowTime)
				}
				if changedAny(fs, "cn", "cn-interval", "cn-hold", "cn-ingress") {
					what += fmt.Sprintf("; CNs to the neighbour %s", map[bool]string{true: "on", false: "off"}[cn])
					if cn {
						what += fmt.Sprintf(", at most every %v, held %v, above %s", cnInterval, cnHold, buffercalc.FormatSize(cnIngress))
					}
				}
				return said(cmd, nil, what)
			})
		},
	}
	sf = addSwitchFlags(cmd)
	fs := cmd.Flags()
	rate, mtu = 100e9, 1000
	valueFlag(fs, &rate, "rate", "rate", buffercalc.ParseRate, "the port's rate, which scales the defaults (default 100G)")
	valueFlag(fs, &mtu, "mtu", "size", buffercalc.ParseSize, "typical frame, which turns the byte sampling interval into packets (default 1000B)")
	valueFlag(fs, &c.SampleEvery, "sample-every", "count", parseCount, "one CRD sample every this many packets")
	valueFlag(fs, &c.QEq, "qeq", "size", buffercalc.ParseSize, "CRD's equilibrium queue Q_eq")
	valueFlag(fs, &c.Wq, "wq", "weight", parsePositive, "weight of the queue's growth in F_b (a power of two)")
	valueFlag(fs, &c.FbQuantum, "fb-quantum", "size", buffercalc.ParseSize, "bytes of F_b per degree step (a power of two)")
	valueFlag(fs, &c.CAMMinHits, "cam-min-hits", "count", parseCount, fmt.Sprintf("CAM entries (of %d) that make a flow harmful", p4.CAMDepth))
	valueFlag(fs, &c.Window, "window", "size", buffercalc.ParseSize, "RCC's window W")
	fs.IntVar(&c.High, "high", 0, "egress queue of ordinary packets (with --priority-queues)")
	fs.IntVar(&c.Low, "low", 0, "egress queue of harmful packets past W_c (with --priority-queues)")
	fs.BoolVar(&rateLimit, "rate-limit", false, "at an edge, hold harmful flows to W_c every W at --rate, even when the link would idle")
	fs.BoolVar(&cn, "cn", false, "the neighbour on PORT is a switch: CNs may be sent to it")
	cnInterval, cnHold = time.Duration(rcm.Defaults().CNInterval/1000), time.Duration(rcm.Defaults().CNHold/1000)
	fs.DurationVar(&cnInterval, "cn-interval", cnInterval, "least time between two CNs out of PORT")
	fs.DurationVar(&cnHold, "cn-hold", cnHold, "how long a CN received on PORT holds")
	valueFlag(fs, &cnIngress, "cn-ingress", "size", buffercalc.ParseSize, "send CNs only while PORT's ingress account exceeds this (default 0)")
	return setCmd("rcm", "Set Regional Congestion Mitigation on a running switch's ports", cmd)
}

// withSession runs f on a primary session on the switch's pipeline.
func withSession(cmd *cobra.Command, sf *switchFlags, f func(context.Context, *controlplane.Session) error) error {
	s, err := sf.openPrimary(cmd.Context())
	if err != nil {
		return err
	}
	defer s.Close()
	return f(cmd.Context(), s)
}

// setPortEntry installs e and says what it set.
func setPortEntry(cmd *cobra.Command, sf *switchFlags, e controlplane.Entry, what string) error {
	return withSession(cmd, sf, func(ctx context.Context, s *controlplane.Session) error {
		return said(cmd, s.SetEntry(ctx, e), what)
	})
}

func said(cmd *cobra.Command, err error, what string) error {
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(cmd.OutOrStdout(), what)
	return err
}

// portParams are the parameters of port's set_port entry, nil if it has
// none.
func portParams(ctx context.Context, s *controlplane.Session, port uint32) (map[string][]byte, error) {
	entries, err := s.ReadEntries(ctx, p4.TableIngressPortConfig)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if len(e.Match) == 1 && bytesValue(e.Match[0].Value) == uint64(port) {
			out := map[string][]byte{}
			for _, p := range e.Params {
				out[p.Name] = p.Value
			}
			return out, nil
		}
	}
	return nil, nil
}

// portMAC is the port's MAC: given, else the one set before, else
// 02:00:00:00:PP:PP.
func portMAC(given string, have map[string][]byte, port uint32) (net.HardwareAddr, error) {
	if given != "" {
		m, err := net.ParseMAC(given)
		if err != nil || len(m) != 6 {
			return nil, usageErrorf("--mac %q: want a MAC address like 02:00:00:00:00:01", given)
		}
		return m, nil
	}
	if m, ok := have["mac"]; ok {
		return net.HardwareAddr(m[len(m)-6:]), nil
	}
	return net.HardwareAddr{2, 0, 0, 0, byte(port >> 8), byte(port)}, nil
}

// keep replaces the named parameters of params by the values in have,
// where it has them.
func keep(params []controlplane.Param, have map[string][]byte, names ...string) []controlplane.Param {
	for i, p := range params {
		for _, n := range names {
			if v, ok := have[n]; ok && p.Name == n {
				params[i].Value = v
			}
		}
	}
	return params
}

func bytesValue(b []byte) uint64 {
	var v uint64
	for _, x := range b {
		v = v<<8 | uint64(x)
	}
	return v
}
