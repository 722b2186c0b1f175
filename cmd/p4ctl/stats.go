package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"github.com/p4rcm/p4rcm/controlplane"
	"github.com/p4rcm/p4rcm/p4"
	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func newCounterCmd() *cobra.Command {
	var sf *switchFlags
	var index int64
	var asJSON bool
	read := &cobra.Command{
		Use:   "read COUNTER",
		Short: "Read an indirect counter: every cell that counted something, or one (--index)",
		Example: `  p4ctl counter read ecn_marks
  p4ctl counter read RcmEgress.pauses_sent --index 1 --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("name one counter; see '%s --help'", cmd.CommandPath())
			}
			if index < 0 {
				return usageErrorf("--index %d: want a cell, 0 or more", index)
			}
			s, err := sf.read(cmd.Context())
			if err != nil {
				return err
			}
			defer s.Close()
			// The name and the cell are the command line's, checked
			// against the program: a wrong one is wrong usage.
			size, err := s.CounterSize(args[0])
			if err != nil {
				return usageErrorf("%s", statusText(err))
			}
			if cmd.Flags().Changed("index") && index >= size {
				return usageErrorf("--index %d: counter %s has cells 0 to %d", index, args[0], size-1)
			}
			cells := []controlplane.CounterCell{}
			if cmd.Flags().Changed("index") {
				p, b, err := s.Counter(cmd.Context(), args[0], index)
				if err != nil {
					return err
				}
				cells = []controlplane.CounterCell{{Index: index, Packets: p, Bytes: b}}
			} else {
				all, err := s.Counters(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				for _, c := range all {
					if c.Packets != 0 || c.Bytes != 0 {
						cells = append(cells, c)
					}
				}
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), cells)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "INDEX\tPACKETS\tBYTES\t")
			for _, c := range cells {
				fmt.Fprintf(tw, "%d\t%d\t%d\t\n", c.Index, c.Packets, c.Bytes)
			}
			return tw.Flush()
		},
	}
	sf = addReadFlags(read)
	read.Flags().Int64Var(&index, "index", 0, "read this cell only")
	read.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd := &cobra.Command{Use: "counter", Short: "Read counters on a running switch", Args: noArgs,
		RunE: needCommand}
	cmd.AddCommand(read)
	return cmd
}

func newCloneCmd() *cobra.Command {
	var sf *switchFlags
	set := &cobra.Command{
		Use:   "set SESSION PORT...",
		Short: "Create or change a clone session: the ports its copies go to",
		Long: `set makes clone session SESSION send a copy to each PORT. rcm.p4 sends
PAUSEs and CNs out of port P through session P + 1.`,
		Example: `  p4ctl clone set 2 1`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageErrorf("name a session and at least one port; see '%s --help'", cmd.CommandPath())
			}
			var nums []uint32
			for _, a := range args {
				n, err := strconv.ParseUint(a, 10, 32)
				if err != nil {
					return usageErrorf("%q: want a whole number", a)
				}
				nums = append(nums, uint32(n))
			}
			if nums[0] == 0 {
				return usageErrorf("clone session 0: P4Runtime numbers sessions from 1")
			}
			return withSession(cmd, sf, func(ctx context.Context, s *controlplane.Session) error {
				return said(cmd, s.SetCloneSession(ctx, nums[0], nums[1:]...), fmt.Sprintf("clone session %d: ports %v", nums[0], nums[1:]))
			})
		},
	}
	sf = addSwitchFlags(set)
	return setCmd("clone", "Set clone sessions on a running switch", set)
}

// statColumns are the per-port counters stats prints, in order.
var statColumns = []struct{ head, counter string }{
	{"RX", p4.CounterRxFrames},
	{"NO_ROUTE", p4.CounterNoRoute},
	{"ECN_MARKS", p4.CounterECNMarks},
	{"WRED_DROPS", p4.CounterWREDDrops},
	{"PAUSES_TX", p4.CounterPausesSent},
	{"RESUMES_TX", p4.CounterResumesSent},
	{"PAUSES_RX", p4.CounterPausesReceived},
	{"RESUMES_RX", p4.CounterResumesReceived},
	{"HELD", p4.CounterHeld},
	{"CNS_TX", p4.CounterCNsSent},
	{"CNS_RX", p4.CounterCNsReceived},
	{"CAM_HITS", p4.CounterCAMHits},
	{"WINDOW_HOLDS", p4.CounterWindowHolds},
	{"LIMIT_HOLDS", p4.CounterLimitHolds},
	{"DETOURS", p4.CounterDetours},
}

// PortStats is one port's counters, as stats --json prints them: by the
// table's column names in snake_case ("ecn_marks"), every one of them,
// so that a script finds each key on every port printed.
type PortStats struct {
	Port     int64            `json:"port"`
	Counters map[string]int64 `json:"packets"`
}

// statKey is a column's key in stats --json.
func statKey(head string) string { return strings.ToLower(head) }

func readStats(ctx context.Context, s *controlplane.Session) ([]PortStats, error) {
	byPort := map[int64]map[string]int64{}
	for _, c := range statColumns {
		cells, err := s.Counters(ctx, c.counter)
		if err != nil {
			return nil, err
		}
		for _, cell := range cells {
			if cell.Packets == 0 {
				continue
			}
			if byPort[cell.Index] == nil {
				byPort[cell.Index] = map[string]int64{}
				for _, c := range statColumns {
					byPort[cell.Index][statKey(c.head)] = 0
				}
			}
			byPort[cell.Index][statKey(c.head)] = cell.Packets
		}
	}
	out := []PortStats{} // [] when nothing counted, not null
	for p, m := range byPort {
		out = append(out, PortStats{Port: p, Counters: m})
	}
	slices.SortFunc(out, func(a, b PortStats) int { return int(a.Port - b.Port) })
	return out, nil
}

func writeStats(w io.Writer, stats []PortStats) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "PORT\t")
	for _, c := range statColumns {
		fmt.Fprint(tw, c.head+"\t")
	}
	fmt.Fprintln(tw)
	for _, ps := range stats {
		fmt.Fprintf(tw, "%d\t", ps.Port)
		for _, c := range statColumns {
			fmt.Fprintf(tw, "%d\t", ps.Counters[statKey(c.head)])
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func newStatsCmd() *cobra.Command {
	var sf *switchFlags
	var asJSON bool
	var every time.Duration
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Per-port packets: received, ECN marks, WRED drops, PAUSEs, holds, CNs, CAM hits, window holds, detours",
		Long: `stats reads rcm.p4's per-port counters (packets) and prints one row per
port that counted anything. --watch reads them again every interval
until Ctrl-C.`,
		Example: `  p4ctl stats
  p4ctl stats --json
  p4ctl stats --watch 1s`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := interrupted(cmd.Context())
			defer stop()
			s, err := sf.read(ctx)
			if err != nil {
				return err
			}
			defer s.Close()
			for {
				stats, err := readStats(ctx, s)
				if ctx.Err() != nil {
					return nil
				}
				if status.Code(err) == codes.Unavailable {
					return sf.gone(err)
				}
				if err != nil {
					return err
				}
				if asJSON {
					err = writeJSON(cmd.OutOrStdout(), stats)
				} else {
					if every > 0 {
						fmt.Fprintf(cmd.OutOrStdout(), "%s\n", time.Now().Format(time.TimeOnly))
					}
					err = writeStats(cmd.OutOrStdout(), stats)
				}
				if err != nil || every == 0 {
					return err
				}
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(every):
				}
			}
		},
	}
	sf = addReadFlags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().DurationVar(&every, "watch", 0, "read again every this long, until Ctrl-C")
	return cmd
}

// watchRole is the P4Runtime role watch takes by default: a role of its
// own, whose primary gets the digests and packet-ins, so that watch
// neither locks out the controllers of the default role that write nor
// is displaced by them.
const watchRole = "p4ctl-watch"

func newWatchCmd() *cobra.Command {
	var sf *switchFlags
	var count int
	var every time.Duration
	var role string
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Stream CAM digests, CN events and packet-ins, decoded, until Ctrl-C",
		Long: `watch enables the program's digests and prints each as it comes (rcm.p4's
CAM and named-flows digests decoded: the port and the flow IDs its CAM
holds, or the flows CNs from downstream named there), the CNs each port sends and receives
(read from their counters every --interval), and packet-ins (ingress
port and frame).

Digests and packet-ins go to a role's primary controller: watch takes a
P4Runtime role of its own (--role, p4ctl-watch), so it runs beside the
commands and controllers that write, which use the default role, and
neither locks them out nor is displaced by them. Its election ID is the
lowest free in its role unless --election-id is given; a second watch is
primary of the role in its turn, and the first prints CNs only until the
second leaves. The counters are read without arbitration. A switch whose
P4Runtime server does not keep roles apart gets CNs only: watch says so,
and --role "" puts it among the default role's controllers.`,
		Example: `  p4ctl watch
  p4ctl watch --count 10`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if count < 0 {
				return usageErrorf("--count %d: want how many events to print before stopping, 1 or more, or 0 for until Ctrl-C", count)
			}
			ctx, stop := interrupted(cmd.Context())
			defer stop()
			r, err := sf.read(ctx)
			if err != nil {
				return err
			}
			defer r.Close()
			errOut := cmd.ErrOrStderr()
			ev, err := watchStream(ctx, cmd, sf, role)
			if err != nil {
				return err
			}
			var digests <-chan *p4v1.DigestList
			var packetIns <-chan *p4v1.PacketIn
			var roles <-chan bool
			primary := false
			if ev != nil {
				defer ev.Close()
				digests, packetIns, roles = ev.Digests(), ev.PacketIns(), ev.Roles()
				primary = ev.Primary()
			}
			// rcm.p4's CN counters, where the program has them: from its
			// P4Info, for a switch that stops answering now (the line
			// above said watch runs) must not hold watch in a read with
			// no deadline; the ticks below read them within --timeout.
			var cnCounters []string
			for _, c := range []string{p4.CounterCNsSent, p4.CounterCNsReceived} {
				if r.HasCounter(c) {
					cnCounters = append(cnCounters, c)
				}
			}
			out := cmd.OutOrStdout()
			last := map[string]map[int64]int64{}
			seen := 0
			tick := time.NewTicker(every)
			defer tick.Stop()
			for count == 0 || seen < count {
				select {
				case <-ctx.Done():
					return nil
				case now, open := <-roles:
					if !open {
						return sf.gone(ev.Err())
					}
					// The channel also carries the change Dial settled.
					if now == primary {
						continue
					}
					primary = now
					if !primary {
						fmt.Fprintf(errOut, "watch: another controller of role %s is primary now; CNs only until it leaves\n", ev.Role())
						continue
					}
					fmt.Fprintf(errOut, "watch: primary of role %s again: digests and packet-ins come here\n", ev.Role())
					if err := enableDigests(ctx, ev); err != nil {
						if ctx.Err() != nil {
							return nil
						}
						return err
					}
				case d, open := <-digests:
					if !open { // the stream ended: the switch went away
						return sf.gone(ev.Err())
					}
					for _, line := range describeDigest(r, d) {
						fmt.Fprintln(out, line)
						seen++
					}
				case p, open := <-packetIns:
					if !open {
						return sf.gone(ev.Err())
					}
					fmt.Fprintln(out, describePacketIn(p))
					seen++
				case <-tick.C:
					// Each tick asks the switch something, within
					// --timeout: a switch that stops answering (stopped,
					// hung) keeps its connection open, and the stream
					// alone would wait on it for ever.
					if len(cnCounters) == 0 {
						if err := sf.answers(ctx, r.Ping); err != nil {
							return err
						}
					}
					for _, c := range cnCounters {
						var cells []controlplane.CounterCell
						err := sf.answers(ctx, func(ctx context.Context) (err error) {
							cells, err = r.Counters(ctx, c)
							return err
						})
						if err != nil {
							return err
						}
						if last[c] == nil {
							last[c] = map[int64]int64{}
							for _, cell := range cells {
								last[c][cell.Index] = cell.Packets
							}
							continue
						}
						for _, cell := range cells {
							if n := cell.Packets - last[c][cell.Index]; n > 0 {
								fmt.Fprintf(out, "%s port %d: %d %s\n", time.Now().Format(time.TimeOnly), cell.Index, n, map[string]string{p4.CounterCNsSent: "CNs sent", p4.CounterCNsReceived: "CNs received"}[c])
								seen++
							}
							last[c][cell.Index] = cell.Packets
						}
					}
				}
			}
			return nil
		},
	}
	sf = addSwitchFlags(cmd)
	cmd.Flags().Lookup("election-id").DefValue = "the lowest free in --role"
	cmd.Flags().StringVar(&role, "role", watchRole, "the P4Runtime role to watch in; \"\" is the default role, the one the commands that write use")
	cmd.Flags().IntVar(&count, "count", 0, "stop after this many events (0: until Ctrl-C)")
	cmd.Flags().DurationVar(&every, "interval", 500*time.Millisecond, "how often the CN counters are read")
	return cmd
}

// watchStream opens watch's stream in role: primary of it when no other
// controller of the role is, with its digests enabled. It is nil, after
// a word on stderr, when the switch's server does not keep roles apart.
func watchStream(ctx context.Context, cmd *cobra.Command, sf *switchFlags, role string) (*controlplane.Session, error) {
	errOut := cmd.ErrOrStderr()
	var opts []controlplane.Option
	if role != "" {
		opts = append(opts, controlplane.WithRole(role))
	}
	given := cmd.Flags().Changed("election-id")
	var id controlplane.ElectionID
	if given {
		var err error
		if id, err = sf.electionID(); err != nil {
			return nil, err
		}
	}
	if err := sf.reach(ctx); err != nil {
		return nil, err
	}
	opts = append(opts, sf.options()...)
	dctx, cancel := context.WithTimeout(ctx, sf.timeout)
	defer cancel()
	var s *controlplane.Session
	// Without --election-id, the lowest ID no live controller of the
	// role holds: each watch gets one of its own.
	for low := uint64(1); ; low++ {
		if !given {
			id = controlplane.ElectionID{Low: low}
		}
		var err error
		s, err = controlplane.Dial(dctx, sf.addr, sf.deviceID, id, opts...)
		switch {
		case err == nil:
		case errors.Is(err, controlplane.ErrRolesUnsupported):
			fmt.Fprintf(errOut, "watch: %v, and a primary there would lock out the controllers that write: CNs only (--role \"\" makes watch one of them)\n", err)
			return nil, nil
		case errors.Is(err, context.DeadlineExceeded):
			return nil, sf.noAnswer()
		case status.Code(err) == codes.InvalidArgument && !given && low < 64:
			continue
		default:
			return nil, err
		}
		break
	}
	what := "CNs only until it leaves: another controller of the role is primary"
	if s.Primary() {
		if err := enableDigests(ctx, s); err != nil {
			s.Close()
			return nil, err
		}
		what = "digests, packet-ins and CNs"
	}
	name := role
	if name == "" {
		name = "the default role"
	}
	fmt.Fprintf(errOut, "watch: device %d at %s, %s, election ID %v: %s, until Ctrl-C\n", sf.deviceID, sf.addr, name, s.Election(), what)
	return s, nil
}

// answers runs a request to the switch within --timeout and words its
// failure for watch: nil also when ctx ended (Ctrl-C), the switch gone
// away or stopped answering.
func (f *switchFlags) answers(ctx context.Context, ask func(context.Context) error) error {
	actx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	err := ask(actx)
	switch {
	case ctx.Err() != nil:
		return nil
	case err == nil:
		return nil
	case actx.Err() != nil || status.Code(err) == codes.DeadlineExceeded:
		return f.stoppedAnswering()
	case status.Code(err) == codes.Unavailable:
		return f.gone(err)
	}
	return err
}

// enableDigests adopts the switch's pipeline on s, a primary, and has the
// switch send s each of its digests at once (a list of one, as BMv2
// needs).
func enableDigests(ctx context.Context, s *controlplane.Session) error {
	if err := s.AdoptPipeline(ctx, 0); err != nil {
		return err
	}
	info, err := s.P4Info()
	if err != nil {
		return err
	}
	for _, d := range info.Digests {
		if err := s.EnableDigest(ctx, d.Preamble.Name, time.Millisecond, 1, time.Second); err != nil {
			return err
		}
	}
	return nil
}

// describeDigest decodes a digest list: for the CAM digest, the port and
// its eight flow IDs; for the named-flows digest, the port and the eight
// flows CNs named there.
func describeDigest(s *controlplane.Session, d *p4v1.DigestList) []string {
	name := s.DigestName(d.DigestId)
	var out []string
	for _, data := range d.Data {
		members := data.GetStruct().GetMembers()
		if (name == p4.DigestCAM || name == p4.DigestNamed) && len(members) == 1+p4.CAMDepth {
			what := map[string]string{p4.DigestCAM: "cam", p4.DigestNamed: "named"}[name]
			line := fmt.Sprintf("%s %s port %d:", time.Now().Format(time.TimeOnly), what, bytesValue(members[0].GetBitstring()))
			for _, m := range members[1:] {
				line += fmt.Sprintf(" %08x", bytesValue(m.GetBitstring()))
			}
			out = append(out, line)
			continue
		}
		line := fmt.Sprintf("%s digest %s:", time.Now().Format(time.TimeOnly), name)
		for _, m := range members {
			line += " " + hex.EncodeToString(m.GetBitstring())
		}
		out = append(out, line)
	}
	return out
}

func describePacketIn(p *p4v1.PacketIn) string {
	line := fmt.Sprintf("%s packet-in", time.Now().Format(time.TimeOnly))
	for _, m := range p.Metadata {
		line += fmt.Sprintf(" md%d=%d", m.MetadataId, bytesValue(m.Value))
	}
	frame := p.Payload
	if len(frame) > 64 {
		frame = frame[:64]
	}
	return fmt.Sprintf("%s %d bytes: %s", line, len(p.Payload), hex.EncodeToString(frame))
}
