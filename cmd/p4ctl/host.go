//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/p4rcm/p4rcm/afpacket"
	"github.com/p4rcm/p4rcm/agent"
	"github.com/p4rcm/p4rcm/buffercalc"
	"github.com/p4rcm/p4rcm/dcqcn"
	"github.com/p4rcm/p4rcm/dctcp"
	"github.com/p4rcm/p4rcm/emulate"
	"github.com/p4rcm/p4rcm/fabric"
	"github.com/p4rcm/p4rcm/hpcc"
	"github.com/p4rcm/p4rcm/ldcp"
	"github.com/p4rcm/p4rcm/sim/scenario"
	"github.com/p4rcm/p4rcm/sim/workload"
	"github.com/p4rcm/p4rcm/switchproc"
	"github.com/p4rcm/p4rcm/timely"
	"github.com/p4rcm/p4rcm/tutorialjson"
)

// hostRecord is a line of `p4ctl host`'s output file: a flow's result,
// or (Stats set) the agent's counters when it stops.
type hostRecord struct {
	Host   string        `json:"host"`
	Flow   *agent.Result `json:"flow,omitempty"`
	FCTNs  int64         `json:"fct_ns,omitempty"`
	Stats  *agent.Stats  `json:"stats,omitempty"`
	Epoch  int64         `json:"epoch_unix_ns"`
	Rate   float64       `json:"rate_bps"`
	Scheme string        `json:"cc"`
}

// newHostCmd is `p4ctl host`: one host's RoCEv2 agent, for Mininet hosts
// and namespaces someone else built.
func newHostCmd() *cobra.Command {
	var topoPath, name, iface, flowsPath, out, cc, preset, ldcpPreset, hpccPreset, timelyPreset, dctcpPreset string
	var rate float64
	var mtu int
	var epoch int64
	var rto, baseRTT time.Duration
	var window string
	cmd := &cobra.Command{
		Use:   "host",
		Short: "Run one host's RoCEv2 agent (DCQCN, LDCP, HPCC, TIMELY or DCTCP sender and receiver) on an interface",
		Long: `host runs the RoCEv2 agent of one host of a p4lang tutorials topology.json on
a network interface of the namespace it is started in (a Mininet host's, or
one from 'ip netns exec'): it sends the host's flows from a flow file in
the ns-3 RDMA simulator's format (node IDs: the topology's hosts in natural
order from 0, h1 first, then its switches), each paced by DCQCN at the
host's rate, and receives the flows sent to it, returning ACKs and CNPs.
It honours PFC PAUSE for priority 3 (DSCP 26) and recovers losses by
go-back-N. With --scheme ldcp it runs LDCP's window sender instead (the
draft's, as 'p4ctl sim run --scheme ldcp' does): each flow starts with a
window of one BDP at --rtt, its first packets not ECN-capable, and its
receiver echoes CE in the ACKs. The switches then want WRED and buf_max
('p4ctl fabric apply' with an ldcp scenario programs them).

--scheme hpcc paces each flow by HPCC from the in-band telemetry its
data packets gather (they ask with DSCP 27) and its ACKs echo: the
switches must push INT ('p4ctl fabric apply --scheme hpcc', and
--int-rate where the ports run slower than the topology's links say);
--rtt is its base RTT T, and W the BDP at --rate. --scheme timely paces
them by TIMELY from the RTTs the agent measures; --scheme dctcp by DCTCP
from the CE marks its receivers echo (the switches mark at DCTCP's K:
'p4ctl fabric apply --scheme dctcp'). HPCC and DCTCP run with the ns-3
simulator's window (--window) and their ACKs in the data's priority, as
'p4ctl sim run' runs them. Every host of a run needs the same --scheme
and --mtu.

Each completed flow is a JSON line in --out, written when it completes;
the agent's counters are the last line, written when it stops (Ctrl-C or
SIGTERM). Every host of a run must be given the same --epoch, the time
zero of the flows' start times.`,
		Example: `  p4ctl host --topology topology.json --host h1 --iface h1-eth0 --flows flows.txt --rate 50M --out h1.jsonl`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			tt, err := tutorialjson.LoadTopology(topoPath)
			if err != nil {
				return usageErrorf("--topology: %v", err)
			}
			f, err := fabric.FromTutorial(tt)
			if err != nil {
				return usageErrorf("--topology: %v", err)
			}
			id, ok := f.Host(name)
			if !ok {
				return usageErrorf("--host %q: no such host in %s", name, topoPath)
			}
			gw, err := f.Gateway(id)
			if err != nil {
				return usageErrorf("--host %s: %v", name, err)
			}
			var flows []workload.Flow
			if flowsPath != "" {
				r, err := os.Open(flowsPath)
				if err != nil {
					return usageErrorf("--flows: %v", err)
				}
				isHost := func(n int) bool { _, ok := f.HostIP[n]; return ok }
				flows, err = workload.ParseNS3Flows(r, flowsPath, isHost)
				r.Close()
				if err != nil {
					return usageErrorf("--flows: %v", err)
				}
			}
			if rate == 0 {
				rate = emulate.DefaultRate(switchproc.TargetGo, mtu)
			}
			var params *dcqcn.Params
			var lparams *ldcp.Params
			var hparams *hpcc.Params
			var tparams *timely.Params
			var dparams *dctcp.Params
			if baseRTT < 0 {
				return usageErrorf("--rtt %v: want a positive round trip", baseRTT)
			}
			if baseRTT == 0 {
				baseRTT = agent.DefaultBaseRTT(rate)
			}
			switch cc {
			case "dcqcn":
				p, err := dcqcn.Preset(preset)
				if err != nil {
					return usageErrorf("--dcqcn: %v", err)
				}
				s, err := agent.Scale(p, rate)
				if err != nil {
					return usageErrorf("--rate: %v", err)
				}
				params = &s
			case "ldcp":
				p, err := ldcp.Preset(ldcpPreset)
				if err != nil {
					return usageErrorf("--ldcp: %v", err)
				}
				s, err := agent.ScaleLDCP(p, rate)
				if err != nil {
					return usageErrorf("--rate: %v", err)
				}
				lparams = &s
			case "hpcc":
				p, err := hpcc.Preset(hpccPreset)
				if err != nil {
					return usageErrorf("--hpcc: %v", err)
				}
				s, err := agent.ScaleHPCC(p, rate)
				if err != nil {
					return usageErrorf("--rate: %v", err)
				}
				hparams = &s
			case "timely":
				p, err := timely.Preset(timelyPreset)
				if err != nil {
					return usageErrorf("--timely: %v", err)
				}
				s, err := agent.ScaleTIMELY(p, rate)
				if err != nil {
					return usageErrorf("--rate: %v", err)
				}
				tparams = &s
			case "dctcp":
				p, err := dctcp.Preset(dctcpPreset)
				if err != nil {
					return usageErrorf("--dctcp: %v", err)
				}
				s, err := agent.ScaleDCTCP(p, rate)
				if err != nil {
					return usageErrorf("--rate: %v", err)
				}
				dparams = &s
			case "none":
			default:
				return usageErrorf("--scheme %q: want %s", cc, strings.Join(hostSchemes, ", "))
			}
			// The ns-3 simulator's NIC: HPCC and DCTCP with a window of the
			// BDP scaled by the flow's rate, and their ACKs held by PFC
			// with the data.
			ns3NIC := cc == "hpcc" || cc == "dctcp"
			switch window {
			case "auto":
			case "on":
				ns3NIC = true
			case "off":
				ns3NIC = false
			default:
				return usageErrorf("--window %q: want auto, on or off", window)
			}
			bdp := math.Floor(baseRTT.Seconds() * rate / 8)
			var ackDSCP uint8
			if cc == "hpcc" || cc == "dctcp" {
				ackDSCP = 26
			}
			if rto == 0 {
				// The simulator's RTO, stretched as agent.Scale stretches
				// DCQCN's timers: from 100 Gb/s to the host's rate.
				rto = time.Duration(float64(scenario.DefaultRTO/1000) * 100e9 / rate)
			}
			start := time.Now()
			if epoch != 0 {
				start = time.Unix(0, epoch)
			}
			ifi, err := net.InterfaceByName(iface)
			if err != nil {
				return usageErrorf("--iface %q: no such interface in this network namespace", iface)
			}
			if len(ifi.HardwareAddr) != 6 {
				return usageErrorf("--iface %s has no Ethernet address (a loopback or a tunnel?): give the host's link to its switch", iface)
			}
			port, err := afpacket.Open(iface)
			if err != nil {
				return err
			}
			defer port.Close()
			w, closeOut, err := openRecords(out, cmd)
			if err != nil {
				return err
			}
			defer closeOut()
			var mu sync.Mutex
			write := func(r hostRecord) {
				r.Host, r.Epoch, r.Rate, r.Scheme = name, start.UnixNano(), rate, cc
				mu.Lock()
				defer mu.Unlock()
				b, _ := json.Marshal(r)
				w.Write(append(b, '\n'))
				w.Flush()
			}
			a, err := agent.New(agent.Config{Host: id, MAC: ifi.HardwareAddr, IP: f.HostIP[id], Gateway: gw,
				Addr:     func(n int) (net.IP, bool) { ip, ok := f.HostIP[n]; return ip, ok },
				LineRate: rate, MTU: mtu, DSCP: 26, ControlDSCP: ackDSCP, DCQCN: params, LDCP: lparams,
				HPCC: hparams, TIMELY: tparams, DCTCP: dparams, Window: ns3NIC, VariableWindow: ns3NIC,
				RTO: rto, Epoch: start,
				BaseRTT: func(int) time.Duration { return baseRTT },
				BDP:     func(int) float64 { return bdp },
				OnDone:  func(r agent.Result) { write(hostRecord{Flow: &r, FCTNs: r.FCT().Nanoseconds()}) }}, port, flows)
			if err != nil {
				return usageErrorf("%v", err)
			}
			ctx, stop := interrupted(cmd.Context())
			defer stop()
			fmt.Fprintf(cmd.ErrOrStderr(), "p4ctl host: %s (node %d, %s) on %s at %.1f Mb/s, %d flows to send, cc %s\n",
				name, id, f.HostIP[id], iface, rate/1e6, a.Pending(), cc)
			err = a.Run(ctx)
			port.Close()
			s := a.Stats()
			write(hostRecord{Stats: &s})
			// A host runs until it is stopped (it keeps receiving): that
			// is its end once its own flows are done, and an interruption
			// before.
			if n := a.Pending(); n > 0 {
				return stoppedErr(ctx, err, fmt.Sprintf("%d of its flows not done", n))
			}
			return err
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&topoPath, "topology", "topology.json", "the tutorials topology.json of the network")
	fs.StringVar(&name, "host", "", "this host's name in the topology (h1, ...)")
	fs.StringVar(&iface, "iface", "", "the interface to send and receive on (default <host>-eth0, Mininet's name)")
	fs.StringVar(&flowsPath, "flows", "", "flows in the ns-3 simulator's format; this host sends those whose source it is")
	fs.StringVarP(&out, "out", "o", "", "write a JSON line per completed flow, and the counters at the end, here (default: stdout)")
	fs.StringVar(&cc, "scheme", "dcqcn", "congestion control: "+strings.Join(hostSchemes, ", "))
	fs.StringVar(&cc, "cc", "dcqcn", "congestion control (the old name of --scheme)")
	_ = fs.MarkHidden("cc")
	fs.StringVar(&ldcpPreset, "ldcp", "draft", "LDCP parameter set ("+strings.Join(ldcp.PresetNames(), ", ")+"), scaled from its design rate to --rate")
	fs.StringVar(&hpccPreset, "hpcc", "ns3", "HPCC parameter set ("+strings.Join(hpcc.PresetNames(), ", ")+"), scaled from its design rate to --rate")
	fs.StringVar(&timelyPreset, "timely", "ns3", "TIMELY parameter set ("+strings.Join(timely.PresetNames(), ", ")+"), scaled from its design rate to --rate")
	fs.StringVar(&dctcpPreset, "dctcp", "ns3", "DCTCP parameter set ("+strings.Join(dctcp.PresetNames(), ", ")+"), scaled from its design rate to --rate")
	fs.StringVar(&window, "window", "auto", "the ns-3 NIC's window of one BDP (at --rtt and --rate) scaled by each flow's rate: on, off, or auto (on for hpcc and dctcp)")
	fs.DurationVar(&baseRTT, "rtt", 0, "LDCP and HPCC: the unloaded round trip to every destination, for the BDP, LDCP's sub-packet timer and HPCC's T (default: 8 us at 100 Gb/s, stretched to --rate)")
	fs.StringVar(&preset, "dcqcn", "mellanox", "DCQCN parameter set (paper, hpcc, mellanox), scaled from its design rate to --rate")
	valueFlag(fs, &rate, "rate", "rate", buffercalc.ParseRate, "the host's line rate, e.g. 50M (default: what the Go target forwards at its default queue rate)")
	fs.IntVar(&mtu, "mtu", 1000, "payload bytes of a full packet")
	fs.DurationVar(&rto, "rto", 0, "go-back-N timeout (default: the simulator's 1 ms, stretched from 100 Gb/s to --rate)")
	fs.Int64Var(&epoch, "epoch", 0, "time zero of the flows' starts, Unix nanoseconds; the same for every host (default: now)")
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if name == "" {
			return usageErrorf("--host is required")
		}
		if iface == "" {
			iface = name + "-eth0"
		}
		return nil
	}
	return cmd
}

// hostSchemes are the congestion controls p4ctl host runs.
var hostSchemes = []string{"dcqcn", "ldcp", "hpcc", "timely", "dctcp", "none"}

// openRecords is where host writes its records: a new file, or stdout.
func openRecords(path string, cmd *cobra.Command) (*bufio.Writer, func(), error) {
	if path == "" {
		w := bufio.NewWriter(cmd.OutOrStdout())
		return w, func() { w.Flush() }, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, nil, usageErrorf("--out: %v (host never overwrites a file)", err)
	}
	w := bufio.NewWriter(f)
	return w, func() { w.Flush(); f.Close() }, nil
}
