//go:build linux

// Package emulate runs a simulator scenario on real packets: each host a
// network namespace with a veth to its switch and an agent (package
// agent) sending its flows as RoCEv2 frames, each switch a P4 target
// (p4rcm's Go target or BMv2's simple_switch_grpc) running rcm.p4, a
// process each on veths or, on the Go target, all in one process with
// the links between switches in memory (Processes), programmed over
// P4Runtime by package fabric from
// the same configuration the simulator runs. Rates are scaled down to
// what the machine can forward (Scale); results come back in the
// simulator's terms (sim.Results, times scaled back), so the simulator's
// reports and comparisons read them.
//
// Everything Run creates (namespaces, veths, switch processes, temporary
// files) it removes before it returns, after a failure or a cancelled
// context too; processes are stopped by PID.
package emulate

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/p4rcm/p4rcm/afpacket"
	"github.com/p4rcm/p4rcm/agent"
	"github.com/p4rcm/p4rcm/controlplane"
	"github.com/p4rcm/p4rcm/dcqcn"
	"github.com/p4rcm/p4rcm/dctcp"
	"github.com/p4rcm/p4rcm/fabric"
	"github.com/p4rcm/p4rcm/hpcc"
	"github.com/p4rcm/p4rcm/internal/pki"
	"github.com/p4rcm/p4rcm/internal/proccpu"
	"github.com/p4rcm/p4rcm/ldcp"
	"github.com/p4rcm/p4rcm/netlab"
	"github.com/p4rcm/p4rcm/p4"
	"github.com/p4rcm/p4rcm/roce"
	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/topo"
	"github.com/p4rcm/p4rcm/switchproc"
	"github.com/p4rcm/p4rcm/timely"
)

// Limits of one 2-core machine: each host is an agent that paces its
// flows in wall-clock time, each switch a process; a k=4 fat tree (16
// hosts, 20 switches) is the largest fabric emulated.
const (
	MaxHosts    = 16
	MaxSwitches = 20
)

// Options say how a scenario is emulated.
type Options struct {
	// Target runs the switches (TargetGo if empty); Binary is its
	// program (empty: the PATH's p4switch or simple_switch_grpc), run
	// with BinaryArgs before the switch's own arguments ('p4ctl
	// p4switch': Binary p4ctl, BinaryArgs ["p4switch"]).
	Target     switchproc.Target
	Binary     string
	BinaryArgs []string
	// Rate is the emulated rate of the hosts' links, b/s (0:
	// DefaultRate). The scenario is scaled to it (Scale).
	Rate float64
	// Timeout bounds the run in wall time, after the last flow's start
	// (0: a minute). Flows not done by then are reported unfinished.
	Timeout time.Duration
	// LogDir, if set, keeps each switch's log and output there, and
	// its ports' frames in NAME-pcap/.
	LogDir string
	// Log, if set, receives a line per step.
	Log func(string)
	// Processes says how the switches run: ProcessEach, a process per
	// switch on veths, or ProcessShared, every switch in one p4switch
	// process with the links between switches in memory (the Go target
	// only). Empty: ProcessShared on the Go target, ProcessEach on BMv2.
	Processes Processes
	// INT has every switch port push INT and every agent's data ask for
	// it, whatever the scheme (under hpcc it always is): the receivers
	// then measure the queue their packets found at the port facing them
	// (Outcome.Agents' INTQueue; LastHopQueue).
	INT bool
	// TLS runs P4Runtime over mutual TLS with credentials made for the
	// run (a CA, the switches' certificate, the controller's) and
	// removed with it; on the Go target only the run's controller may
	// be primary (--grpc-server-policy).
	TLS bool
}

// Processes says how an emulation runs its switches.
type Processes string

const (
	// ProcessEach runs every switch as a process of its own, its links
	// to other switches veth pairs: how BMv2 runs, and the Go target
	// when asked.
	ProcessEach Processes = "each"
	// ProcessShared runs every switch in one p4switch process (p4switch
	// --group), each with its own P4Runtime server and control socket;
	// a link between two switches is in memory, with the scenario's rate
	// and delay given by its sender's egress as on a veth. Hosts stay on
	// veths with their agents. No frame between switches crosses a
	// packet socket or wakes a process, and twenty processes no longer
	// take turns on two cores.
	ProcessShared Processes = "shared"
)

// processes is o's mode, its default filled in.
func (o Options) processes() Processes {
	switch {
	case o.Processes != "":
		return o.Processes
	case o.Target == switchproc.TargetBMv2:
		return ProcessEach
	}
	return ProcessShared
}

// DefaultRate is the emulated host link rate for a target: its default
// queue rate in full frames of mtu bytes of payload.
func DefaultRate(t switchproc.Target, mtu int) float64 {
	if t == "" {
		t = switchproc.TargetGo
	}
	return t.DefaultQueueRate() * float64(wireFrame(mtu)) * 8
}

// RateFor is the emulated host link rate when none is given: the target's
// DefaultRate, shared out when the scenario has more than two switches.
// Every switch process forwards on the machine's two cores, so the
// packets per second the machine moves are spent over all of them: at
// DefaultRate the six switches of rcm-incast-victim took the cores
// whole, and the switches, waiting for them, paused their neighbours far
// more often than the model's. It is the default whether the switches
// run in one process or a process each: a shared process spends about a
// third less CPU on the same frames, but what bounds the rate is
// rcm.p4's pipeline passes (a held packet goes round the recirculation
// port while it waits), and on the victim scenario a shared process at
// twice this rate kept RCM's bottleneck only 92% busy
// (docs/emulation.md, "Every switch in one process").
//
// It is raised to MinRate where that is higher: on BMv2, at the shared-out
// 0.40 Mb/s, the victim scenario's RCM would stretch its 20 us CN hold
// to 4.95 s and SAR's 100 us pin to 24.8 s, past the 4.29 s rcm.p4's
// tables hold; it runs at 2.33 Mb/s instead.
func RateFor(t switchproc.Target, cfg *sim.Config) float64 {
	m, _, _ := MinRate(cfg)
	return max(sharedRate(t, cfg), m)
}

// sharedRate is the target's DefaultRate shared out over the scenario's
// switches past two.
func sharedRate(t switchproc.Target, cfg *sim.Config) float64 {
	r := DefaultRate(t, cfg.MTU)
	if n := len(cfg.Topology.Switches()); n > 2 {
		r *= 2 / float64(n)
	}
	return r
}

// MinRate is the lowest host link rate at which cfg's times, stretched
// by the emulation, fit rcm.p4's tables (fabric.ProgramTimeMax, 32-bit
// nanoseconds), with the time that sets it and its length in the
// scenario; 0 where cfg gives the switches no times.
func MinRate(cfg *sim.Config) (rate float64, what string, d time.Duration) {
	what, d = fabric.LongestTime(cfg)
	if d <= 0 || cfg.Topology == nil {
		return 0, "", 0
	}
	// k is at most ProgramTimeMax / d; a little more than the rate
	// that gives it, for the rounding of stretched picoseconds.
	return hostRate(cfg.Topology) * float64(d) / float64(fabric.ProgramTimeMax) * 1.001, what, d
}

// hostRate is the slowest host link's rate, the one Scale slows down to
// the emulated rate (+Inf with no hosts).
func hostRate(t *topo.Topology) float64 {
	r := math.Inf(1)
	adj := t.Adjacency()
	for _, h := range t.Hosts() {
		for _, end := range adj[h] {
			r = math.Min(r, t.Links[end.Link].Rate)
		}
	}
	return r
}

// SharedProcess is Outcome.SwitchCPU's key for the process that runs
// every switch with ProcessShared.
const SharedProcess = "p4switch group"

// wireFrame is a full data frame's bytes on the wire, as the simulator
// counts them.
func wireFrame(mtu int) int { return mtu + roce.Overhead + agent.WireExtra }

// Outcome is an emulated run.
type Outcome struct {
	// Results are in the simulator's terms: times scaled back by K, so
	// that they compare with a simulation of the same scenario.
	Results *sim.Results
	// K is the time stretch: emulated time is K times the scenario's.
	K float64
	// Rate is the emulated host link rate, b/s.
	Rate float64
	// TimedOut says the run ended at Options.Timeout with flows still
	// going; flows the scenario's own stop time cut off are not that.
	TimedOut bool
	// Agents are each host's counters, by node ID.
	Agents map[int]agent.Stats
	// Wall is how long the traffic ran; SwitchCPU is each switch
	// process's CPU time in it, by name, and AgentsCPU the CPU time of
	// this process, where the agents run.
	// With ProcessShared, SwitchCPU has one entry, the shared process's
	// CPU time under SharedProcess: the switches' time together, which
	// one process cannot tell apart.
	Wall      time.Duration
	SwitchCPU map[string]time.Duration
	AgentsCPU time.Duration
}

// LastHopQueue is the queue the run's data packets found at the switch
// port facing their receiver, from the INT their last switch pushed
// (with Options.INT, or under hpcc): every receiver's, merged.
func (o *Outcome) LastHopQueue() agent.QueueStats {
	var q agent.QueueStats
	for _, s := range o.Agents {
		q.Merge(s.INTQueue)
	}
	return q
}

// GroupThreads is the GOMAXPROCS of the process that runs all the
// switches (ProcessShared): every core but one, at least one. The other
// core is the agents' and the kernel's, whose veths and packet sockets
// carry every frame to and from a host. With a thread per core, the
// group's goroutines, each waking for a frame or two, kept two threads
// handing work to each other: on a k=4 fat tree at four times the
// default rate the group took 1.15 cores and the agents, woken as often,
// 0.53, and the senders fell behind their schedule; on one thread the
// group took 0.92 cores for the same frames and the fabric kept its
// schedule and the model's FCT at four to eight times the default rate
// (BENCHMARKS.md, Emulation).
func GroupThreads() int { return max(1, runtime.NumCPU()-1) }

// BehindLimit is the share of a run's wall time a host's sender may
// spend behind its schedule (agent.Stats.Behind) before the run is said
// to have fallen behind: past it, the machine did not keep the
// emulation's time, the senders sent below their rates, and the run's
// figures measure the machine as much as the scheme.
const BehindLimit = 0.02

// FellBehind reports whether the machine fell behind the emulation's
// schedule in this run, and if so, in words: which host's sender, by how
// much in all and at most at once.
func (o *Outcome) FellBehind() (string, bool) {
	worst, host := time.Duration(0), -1
	for h, s := range o.Agents {
		if s.Behind > worst || s.Behind == worst && host >= 0 && h < host {
			worst, host = s.Behind, h
		}
	}
	if host < 0 || o.Wall <= 0 || float64(worst) <= BehindLimit*float64(o.Wall) {
		return "", false
	}
	s := o.Agents[host]
	return fmt.Sprintf("host %d's sender was %v behind its schedule (%.1f%% of the %v run, up to %v at once)",
		host, worst.Round(time.Millisecond), 100*float64(worst)/float64(o.Wall), o.Wall.Round(time.Millisecond), s.MaxLate.Round(time.Millisecond)), true
}

// Check refuses, before anything is created, a scenario the machine
// cannot emulate, saying why.
func Check(cfg *sim.Config, o Options) error {
	t := cfg.Topology
	if t == nil {
		return errors.New("no topology")
	}
	if n := len(t.Hosts()); n > MaxHosts {
		return fmt.Errorf("%s has %d hosts; one machine emulates at most %d (an agent each, sharing its cores)", t.Name, n, MaxHosts)
	}
	if n := len(t.Switches()); n > MaxSwitches {
		return fmt.Errorf("%s has %d switches; one machine emulates at most %d (a switch process each)", t.Name, n, MaxSwitches)
	}
	adj := t.Adjacency()
	for _, h := range t.Hosts() {
		if len(adj[h]) != 1 {
			return fmt.Errorf("host %s has %d links; an emulated host has one", t.Nodes[h].Name, len(adj[h]))
		}
		if t.Nodes[adj[h][0].Peer.Node].Kind != topo.Switch {
			return fmt.Errorf("host %s is cabled to another host; emulated hosts reach each other through switches", t.Nodes[h].Name)
		}
	}
	target := o.Target
	if target == "" {
		target = switchproc.TargetGo
	}
	switch o.Processes {
	case "", ProcessEach:
	case ProcessShared:
		if target != switchproc.TargetGo {
			return fmt.Errorf("processes %q: only the Go target runs several switches in one process; BMv2 runs a process per switch (%q)", o.Processes, ProcessEach)
		}
	default:
		return fmt.Errorf("processes %q: want %q (one process per switch) or %q (every switch in one p4switch process)", o.Processes, ProcessEach, ProcessShared)
	}
	rate := o.Rate
	if rate == 0 {
		rate = RateFor(target, cfg)
	}
	if most := 4 * DefaultRate(target, cfg.MTU); rate > most {
		return fmt.Errorf("%.0f Mb/s per host link is more than %s forwards here (at most %.0f Mb/s, four times its default %.0f Mb/s)",
			rate/1e6, target, most/1e6, most/4e6)
	}
	if least, what, d := MinRate(cfg); rate < least {
		k := hostRate(cfg.Topology) / rate
		return fmt.Errorf("%.3g Mb/s per host link stretches time %.0fx, and %s (%v in the scenario) to %v, past the %v rcm.p4's tables hold: emulate at %.3g Mb/s or more",
			rate/1e6, k, what, d, time.Duration(float64(d)*k).Round(time.Millisecond), fabric.ProgramTimeMax.Round(time.Millisecond), least/1e6)
	}
	if r := cfg.RCM; r != nil {
		// rcm.p4 has each mechanism built in; only SAR can be left out
		// (fabric installs no SAR groups). The other switches are the
		// simulator's ablations, and a run that ignored one would measure
		// the full RCM under the ablation's name.
		for _, m := range []struct {
			key string
			on  bool
		}{{"crd", r.CRD}, {"cfr", r.CFR}, {"hold", r.Hold}, {"limit", r.Limit}, {"cn", r.CN}} {
			if !m.on {
				return fmt.Errorf("emulate: rcm.%s=false: rcm.p4 cannot switch that mechanism off; the ablations other than rcm.sar are the simulator's", m.key)
			}
		}
	}
	switch cfg.CC {
	case "dcqcn", "ldcp", "hpcc", "timely", "dctcp", "none":
	case "ldcp-rate":
		return errors.New("congestion control ldcp-rate: the agents run dcqcn, ldcp (the window sender), hpcc, timely, dctcp or none; LDCP's rate variant is the simulator's only")
	default:
		return fmt.Errorf("congestion control %q: the agents run dcqcn, ldcp, hpcc, timely, dctcp or none", cfg.CC)
	}
	return nil
}

// Run emulates cfg (a scenario built with its flows) and returns what
// the agents and switches measured.
func Run(ctx context.Context, cfg sim.Config, o Options) (*Outcome, error) {
	if o.Target == "" {
		o.Target = switchproc.TargetGo
	}
	rateRaised := false
	if o.Rate == 0 {
		o.Rate = RateFor(o.Target, &cfg)
		rateRaised = o.Rate > sharedRate(o.Target, &cfg)
	}
	if o.Timeout == 0 {
		o.Timeout = time.Minute
	}
	logf := func(format string, args ...any) {
		if o.Log != nil {
			o.Log(fmt.Sprintf(format, args...))
		}
	}
	if err := Check(&cfg, o); err != nil {
		return nil, err
	}
	if rateRaised {
		_, what, d := MinRate(&cfg)
		logf("rate raised to %.3g Mb/s, the lowest at which %s (%v) fits rcm.p4's tables stretched", o.Rate/1e6, what, d)
	}
	scaled, k, err := Scale(cfg, o.Rate)
	if err != nil {
		return nil, err
	}
	f, err := fabric.FromTopology(scaled.Topology)
	if err != nil {
		return nil, err
	}
	f.PriorityQueues = priorityQueues(o.Target)
	f.INT = o.INT
	intents, err := f.Plan(&scaled)
	if err != nil {
		return nil, err
	}
	pipeline, err := f.Pipeline()
	if err != nil {
		return nil, err
	}
	e := &emulation{cfg: &scaled, o: o, f: f, k: k, logf: logf, pipeline: pipeline}
	defer e.close()
	if err := e.build(ctx); err != nil {
		return nil, err
	}
	logf("programming %d switches", len(intents))
	targets := map[string]fabric.Target{}
	for name, sw := range e.switches {
		targets[name] = fabric.Target{Addr: sw.Config().GRPCAddr, DeviceID: sw.Config().DeviceID, TLS: e.clientTLS}
	}
	for _, r := range fabric.Apply(ctx, intents, targets, fabric.ApplyOptions{Pipeline: pipeline, Election: controlplane.ElectionID{Low: 1}}) {
		if r.Err != nil {
			return nil, fmt.Errorf("program %s: %w", r.Name, r.Err)
		}
	}
	out, err := e.traffic(ctx)
	if err != nil {
		return nil, err
	}
	if err := e.ports(ctx, &cfg, out.Results); err != nil {
		return nil, err
	}
	return out, nil
}

// emulation is what Run builds.
type emulation struct {
	cfg      *sim.Config // scaled
	o        Options
	f        *fabric.Fabric
	k        float64
	logf     func(string, ...any)
	pipeline controlplane.Pipeline

	lab    *netlab.Lab
	tlsDir string // the run's credentials, with Options.TLS
	// serverTLS are the switches' TLS options, clientTLS the
	// controller's; nil in plain text.
	serverTLS *switchproc.ServerTLS
	clientTLS *tls.Config
	switches  map[string]*switchproc.Switch
	group     *switchproc.Group // with ProcessShared: the process of every switch
	hosts     map[int]*afpacket.Port
	gateways  map[int]net.HardwareAddr // each host's switch port MAC
}

// build creates the namespaces, veths and switch processes.
func (e *emulation) build(ctx context.Context) error {
	t := e.cfg.Topology
	var err error
	if e.lab, err = netlab.New("emu"); err != nil {
		return err
	}
	if e.o.TLS {
		if err := e.makeCredentials(); err != nil {
			return fmt.Errorf("TLS credentials: %w", err)
		}
		e.logf("P4Runtime over mutual TLS: the run's CA and certificates in %s", e.tlsDir)
	}
	e.switches, e.hosts, e.gateways = map[string]*switchproc.Switch{}, map[int]*afpacket.Port{}, map[int]net.HardwareAddr{}
	adj := t.Adjacency()
	shared := e.o.processes() == ProcessShared
	// ifaces[node][i] is the interface of link end i of a switch.
	ifaces := map[int]map[int]string{}
	end := func(node, link int) int {
		for i, p := range adj[node] {
			if p.Link == link {
				return i
			}
		}
		return -1
	}
	for _, sw := range t.Switches() {
		ifaces[sw] = map[int]string{}
	}
	for li, l := range t.Links {
		a, b := l.A, l.B
		if t.Nodes[a].Kind == topo.Host {
			a, b = b, a
		}
		if t.Nodes[b].Kind == topo.Host {
			h, err := e.lab.Host(t.Nodes[b].Name)
			if err != nil {
				return err
			}
			lk, err := e.lab.Link(h, "eth0", fabric.HostMAC(b))
			if err != nil {
				return err
			}
			var port *afpacket.Port
			if err := h.Do(func() error { port, err = afpacket.Open("eth0"); return err }); err != nil {
				return err
			}
			e.hosts[b] = port
			ifaces[a][end(a, li)] = lk.SwitchIf
			if e.gateways[b], err = e.f.Gateway(b); err != nil {
				return err
			}
			continue
		}
		if shared {
			// Both ends name the link; p4switch joins them in memory.
			name := fmt.Sprintf("mem:l%d", li)
			ifaces[a][end(a, li)], ifaces[b][end(b, li)] = name, name
			continue
		}
		x, y, err := e.lab.Trunk()
		if err != nil {
			return err
		}
		ifaces[a][end(a, li)], ifaces[b][end(b, li)] = x, y
	}
	var configs []switchproc.Config
	switches := t.Switches()
	// A P4Runtime and a Thrift port for each switch, all distinct.
	free, err := switchproc.FreePorts(2 * len(switches))
	if err != nil {
		return err
	}
	for i, sw := range switches {
		name := t.Nodes[sw].Name
		ports := map[int]string{}
		for i, iface := range ifaces[sw] {
			ports[int(e.f.Ports[sw][i])] = iface
		}
		grpcPort, thrift := free[2*i], free[2*i+1]
		c := switchproc.Config{Name: name, DeviceID: 1, Ports: ports, GRPCAddr: fmt.Sprintf("127.0.0.1:%d", grpcPort),
			ThriftPort: thrift, Target: e.o.Target, Binary: e.o.Binary, BinaryArgs: e.o.BinaryArgs, LogDir: e.o.LogDir,
			PriorityQueues: e.f.PriorityQueues, TLS: e.serverTLS}
		if e.o.LogDir != "" {
			c.PcapDir = filepath.Join(e.o.LogDir, name+"-pcap")
		}
		configs = append(configs, c)
	}
	if shared {
		configs[0].GoMaxProcs = GroupThreads()
		g, err := switchproc.StartGroup(ctx, "switches", configs)
		if err != nil {
			return err
		}
		e.group = g
		for _, s := range g.Switches() {
			e.switches[s.Config().Name] = s
		}
		e.logf("%d switches in one process (PID %d), links between them in memory", len(configs), g.PID())
	} else {
		for _, c := range configs {
			s, err := switchproc.Start(ctx, c)
			if err != nil {
				return err
			}
			e.switches[c.Name] = s
		}
	}
	frame := wireFrame(e.cfg.MTU)
	for _, sw := range t.Switches() {
		name := t.Nodes[sw].Name
		s := e.switches[name]
		depth := queueDepth(e.cfg, frame)
		fastest := 0.0
		for i := range adj[sw] {
			rate := t.Links[adj[sw][i].Link].Rate
			fastest = max(fastest, rate)
			port := int(e.f.Ports[sw][i])
			if e.o.Target == switchproc.TargetGo {
				err = s.SetPortRate(port, rate)
				if err == nil {
					err = s.SetPortDelay(port, linkDelay(t, adj[sw][i]))
				}
			} else {
				err = s.SetQueueRate(port, max(1, int(math.Round(rate/8/float64(frame)))))
			}
			if err != nil {
				return err
			}
			if err := s.SetQueueDepth(port, depth); err != nil {
				return err
			}
		}
		if e.o.Target == switchproc.TargetGo {
			// Packets held for a pause go round at up to eight times the
			// rate full frames leave the fastest port (on BMv2 the queue
			// rates pace them; the Go target's links do not charge a
			// held packet). While tickets are out every packet of the
			// queue goes round once, so the loop must outrun the ports
			// feeding it or the hold never drains: at twice the rate the
			// victim scenario's ToRs paused their hosts twice as often
			// as at eight times, and its flows ran 10% slower. Bounded,
			// so that a pause costs the switch a bounded share of its
			// core, and a full recirculation queue (1,024 packets) still
			// goes round well within rcm.p4's HOLD_SKIP_NS.
			framesPerSecond := fastest / 8 / float64(frame)
			if err := s.SetRecirculationRate(math.Round(holdLoopSpeedup * framesPerSecond)); err != nil {
				return err
			}
		}
		e.logf("switch %s (PID %d): %d ports", name, s.PID(), len(adj[sw]))
	}
	return nil
}

// linkDelay is the propagation delay the switch gives a link end's
// egress: the link's own between switches, where each end delays what it
// sends; twice it towards a host, whose agent sends at once, so that a
// round trip through the host (a PAUSE and the frames already on their
// way, a data packet and its ACK) takes as long as over the modelled
// cable both ways.
func linkDelay(t *topo.Topology, a topo.Port) time.Duration {
	d := time.Duration(t.Links[a.Link].Delay / 1000)
	if t.Nodes[a.Peer.Node].Kind == topo.Host {
		d *= 2
	}
	return d
}

// notMeasured is what an emulation cannot give (sim.Results.NotMeasured):
// rcm.p4 counts neither what a port sends nor its queue and ingress
// peaks, paused or busy time, nor RCC's window cuts.
var notMeasured = []string{"tx_packets", "tx_bytes", "ctrl_packets", "paused_us", "max_queue_bytes",
	"max_ingress_bytes", "max_headroom_bytes", "utilisation", "window_cuts"}

// holdLoopSpeedup is how many times faster than the fastest port's full
// frames held packets may go round the Go target's recirculation port.
const holdLoopSpeedup = 8

// priorityQueues is how many strict-priority queues per port the
// emulation's switches get. The Go target's ports are links shared by
// their queues (SetPortRate), so RCC's low queue works as the model's
// window. BMv2 paces each priority queue on its own, in packets: two
// queues would double a port's rate whenever both hold packets, so BMv2
// gets one and RCC only counts there.
func priorityQueues(t switchproc.Target) int {
	if t == switchproc.TargetGo {
		return 2
	}
	return 1
}

// queueDepth is the switches' egress queue depth, packets. Without PFC
// it is the buffer (or the lossy queue limit), where a real switch drops.
// With PFC, rcm.p4's thresholds decide when to pause, and the queue
// holds eight buffers: the emulation's own delay between a sender and
// the pipeline (frames waiting in the switch process's socket while it
// waits for a core) is longer and less steady than a cable's, and a
// frame it drops would be a loss the modelled switch does not have, and
// one its ingress accounting never gives back (the PAUSE would never be
// lifted).
func queueDepth(cfg *sim.Config, frame int) int {
	limit := cfg.Buffer
	if !cfg.PFC && cfg.QueueLimit > 0 {
		limit = min(limit, cfg.QueueLimit)
	}
	n := int(math.Ceil(limit / float64(frame)))
	if cfg.PFC {
		n *= 8
	}
	return max(64, n)
}

// traffic runs the agents until every flow completes, the scenario's stop
// time, or the timeout.
func (e *emulation) traffic(ctx context.Context) (*Outcome, error) {
	cfg := e.cfg
	var cc *dcqcn.Params
	var lc *ldcp.Params
	var hc *hpcc.Params
	var tc *timely.Params
	var dc *dctcp.Params
	var baseRTT func(src, dst int) time.Duration
	var bdp func(src, dst int) float64
	var err error
	switch cfg.CC {
	case "dcqcn":
		cc = &cfg.DCQCN
	case "ldcp":
		lc = &cfg.LDCP
		if baseRTT, err = baseRTTs(cfg); err != nil {
			return nil, err
		}
	case "hpcc":
		hc = &cfg.HPCC
	case "timely":
		tc = &cfg.TIMELY
	case "dctcp":
		dc = &cfg.DCTCP
	}
	if cfg.CC == "hpcc" || cfg.Window.Enabled {
		if baseRTT, bdp, err = ns3Paths(cfg); err != nil {
			return nil, err
		}
	}
	// ACKs go ahead of the data unless the scenario holds them with it
	// (as the ns-3 simulator's HPCC and DCTCP runs do): then they take
	// the data's priority, which the switches' PAUSEs hold.
	const dataDSCP = 26
	var ackDSCP uint8
	if cfg.AckObeysPFC {
		ackDSCP = dataDSCP
	}
	rate := e.o.Rate
	total := len(cfg.Flows)
	done := make(chan agent.Result, total)
	epoch := time.Now().Add(100 * time.Millisecond)
	agents := map[int]*agent.Agent{}
	hosts := make([]int, 0, len(e.hosts))
	for h := range e.hosts {
		hosts = append(hosts, h)
	}
	sort.Ints(hosts)
	for _, h := range hosts {
		a, err := agent.New(agent.Config{Host: h, MAC: fabric.HostMAC(h), IP: fabric.HostIP(h), Gateway: e.gateways[h],
			Addr:     func(n int) (net.IP, bool) { ip, ok := e.f.HostIP[n]; return ip, ok },
			LineRate: rate, MTU: cfg.MTU, DSCP: dataDSCP, ControlDSCP: ackDSCP,
			DCQCN: cc, LDCP: lc, HPCC: hc, TIMELY: tc, DCTCP: dc, AckEvery: cfg.AckInterval,
			Window: cfg.Window.Enabled, VariableWindow: cfg.Window.Variable, AskINT: e.o.INT,
			BaseRTT: fromHost(baseRTT, h), BDP: fromHost(bdp, h),
			RTO: time.Duration(cfg.RTO / 1000), Epoch: epoch, OnDone: func(r agent.Result) { done <- r }},
			e.hosts[h], cfg.Flows)
		if err != nil {
			return nil, err
		}
		agents[h] = a
	}
	var lastStart int64
	for _, f := range cfg.Flows {
		lastStart = max(lastStart, f.Start)
	}
	deadline := time.Duration(lastStart/1000) + e.o.Timeout
	byStop := cfg.StopAt > 0 && time.Duration(cfg.StopAt/1000) < deadline
	if byStop {
		deadline = time.Duration(cfg.StopAt / 1000)
	}
	timedOut := false
	cpu0 := e.cpu()
	actx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	errs := make(chan error, len(agents))
	for _, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := agents[h].Run(actx); err != nil {
				errs <- err
			}
		}()
	}
	e.logf("%d flows on %d hosts at %.1f Mb/s (time stretched %.0fx)", total, len(hosts), rate/1e6, e.k)
	results := map[int]agent.Result{}
	timer := time.NewTimer(time.Until(epoch.Add(deadline)))
	var runErr error
wait:
	for len(results) < total {
		select {
		case r := <-done:
			results[r.ID] = r
		case <-timer.C:
			e.logf("stopped at %v with %d of %d flows done", deadline, len(results), total)
			timedOut = !byStop
			break wait
		case err := <-errs:
			runErr = err
			break wait
		case <-ctx.Done():
			runErr = ctx.Err()
			break wait
		}
	}
	timer.Stop()
	wall := time.Since(epoch)
	cpu1 := e.cpu()
	cancel()
	for _, h := range hosts {
		e.hosts[h].Close() // ends the agents' receive loops
	}
	wg.Wait()
	if runErr != nil {
		return nil, runErr
	}
	out := &Outcome{K: e.k, Rate: rate, TimedOut: timedOut, Agents: map[int]agent.Stats{}, Wall: wall, Results: &sim.Results{Drops: map[string]int64{}, NotMeasured: slices.Clone(notMeasured)},
		SwitchCPU: map[string]time.Duration{}, AgentsCPU: cpu1[""] - cpu0[""]}
	for name := range cpu1 {
		if name != "" {
			out.SwitchCPU[name] = cpu1[name] - cpu0[name]
		}
	}
	for h, a := range agents {
		out.Agents[h] = a.Stats()
		for _, r := range a.Unfinished() {
			results[r.ID] = r
		}
	}
	out.Results.Flows = e.flowRecords(results)
	for _, fr := range out.Results.Flows {
		if fr.Finish != 0 {
			out.Results.Completed++
			out.Results.LastFinish = max(out.Results.LastFinish, fr.Finish)
		}
		out.Results.CNPs += int64(fr.CNPs)
		if fr.Retransmits > 0 {
			out.Results.Retransmits += fr.Retransmits
			out.Results.RetransmitFlows++
		}
	}
	for _, s := range out.Agents {
		out.Results.DataPackets += s.DataSent
		out.Results.HostPauses += s.Pauses
		out.Results.HostResumes += s.Resumes
	}
	out.Results.End = int64(float64(wall.Nanoseconds()) * 1000 / e.k)
	return out, nil
}

// baseRTTs gives the unloaded RTT between two hosts of the (scaled)
// scenario, as the simulator gives its LDCP senders: propagation both
// ways, a full data frame serialised at every hop out and an ACK at every
// hop back, in the agents' frame sizes.
func baseRTTs(cfg *sim.Config) (func(src, dst int) time.Duration, error) {
	routes, err := topo.ComputeRoutes(cfg.Topology)
	if err != nil {
		return nil, err
	}
	data := float64(wireFrame(cfg.MTU))
	ack := float64(roce.EthLen + roce.IPv4Len + roce.UDPLen + roce.BTHLen + roce.AETHLen + roce.ICRCLen + agent.WireExtra)
	return func(src, dst int) time.Duration {
		pi := routes.PathInfo(src, dst)
		ps := 2 * float64(pi.Delay)
		for _, r := range pi.Rates {
			ps += (data + ack) * 8e12 / r
		}
		return time.Duration(ps / 1000)
	}, nil
}

// fromHost is f from host h to each destination, or nil without f.
func fromHost[T any](f func(src, dst int) T, h int) func(dst int) T {
	if f == nil {
		return nil
	}
	return func(dst int) T { return f(h, dst) }
}

// ns3Paths gives the base RTT and BDP between two hosts of the (scaled)
// scenario as the simulator gives HPCC's senders and the ns-3 NIC's
// window (sim.Network's pathRTT and longestPath): propagation both ways
// and a payload of MTU bytes serialised at every hop, and that RTT at the
// path's slowest link in whole bytes; without Window.PerPath, the
// largest of each over every pair of hosts, for every flow.
func ns3Paths(cfg *sim.Config) (func(src, dst int) time.Duration, func(src, dst int) float64, error) {
	routes, err := topo.ComputeRoutes(cfg.Topology)
	if err != nil {
		return nil, nil, err
	}
	path := func(src, dst int) (rtt int64, bdp float64) {
		pi := routes.PathInfo(src, dst)
		rtt = 2 * pi.Delay
		for _, r := range pi.Rates {
			rtt += int64(math.Ceil(float64(cfg.MTU) * 8e12 / r))
		}
		return rtt, math.Floor(float64(rtt) * pi.MinRate / 8e12)
	}
	if cfg.Window.PerPath {
		return func(src, dst int) time.Duration { r, _ := path(src, dst); return time.Duration(r / 1000) },
			func(src, dst int) float64 { _, b := path(src, dst); return b }, nil
	}
	var rtt int64
	var bdp float64
	hosts := cfg.Topology.Hosts()
	for _, a := range hosts {
		for _, b := range hosts {
			if a != b {
				r, w := path(a, b)
				rtt, bdp = max(rtt, r), math.Max(bdp, w)
			}
		}
	}
	return func(int, int) time.Duration { return time.Duration(rtt / 1000) }, func(int, int) float64 { return bdp }, nil
}

// cpu is the CPU time of every switch process, by name, and of this
// process (the agents'), under "".
func (e *emulation) cpu() map[string]time.Duration {
	out := map[string]time.Duration{"": proccpu.Process(os.Getpid())}
	if e.group != nil {
		out[SharedProcess] = proccpu.Process(e.group.PID())
		return out
	}
	for name, s := range e.switches {
		out[name] = proccpu.Process(s.PID())
	}
	return out
}

// flowRecords are the agents' results in the scenario's time.
func (e *emulation) flowRecords(results map[int]agent.Result) []sim.FlowRecord {
	cfg := e.cfg
	routes, err := topo.ComputeRoutes(cfg.Topology)
	if err != nil {
		panic(err) // fabric.Plan computed them already
	}
	back := func(d time.Duration) int64 { return int64(math.Round(float64(d.Nanoseconds()) * 1000 / e.k)) }
	out := make([]sim.FlowRecord, len(cfg.Flows))
	for i, f := range cfg.Flows {
		start := int64(math.Round(float64(f.Start) / e.k))
		rec := sim.FlowRecord{ID: i, Src: f.Src, Dst: f.Dst, DPort: roce.UDPPort, Size: f.Size, Start: start, Class: f.Class,
			// The ideal FCT of the scenario's own rates: the scaled
			// topology's ideal shrunk by k.
			Ideal: int64(math.Round(float64(sim.IdealFCT(routes, f.Src, f.Dst, f.Size, cfg.MTU)) / e.k))}
		if r, ok := results[f.ID]; ok {
			rec.SPort = r.SrcPort
			rec.Delivered = r.Delivered
			rec.Retransmits, rec.CNPs, rec.RateCuts = r.Retransmits, r.CNPs, r.RateCuts
			if r.Finish != 0 {
				rec.FCT = back(r.FCT())
				rec.Finish = start + rec.FCT
				rec.Slowdown = math.Max(1, float64(rec.FCT)/float64(rec.Ideal))
			}
		}
		out[i] = rec
	}
	return out
}

// ports reads every switch port's counters from rcm.p4 into res.Ports,
// its drops by the simulator's reasons (WRED's "wred" and buf_max's
// "buf-max") into res.Drops and its RCM counters into res.RCM.
func (e *emulation) ports(ctx context.Context, orig *sim.Config, res *sim.Results) error {
	drops, rcm := res.Drops, &res.RCM
	t := e.cfg.Topology
	adj := t.Adjacency()
	for _, sw := range t.Switches() {
		name := t.Nodes[sw].Name
		c := e.switches[name].Config()
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		var opts []controlplane.Option
		if e.clientTLS != nil {
			opts = append(opts, controlplane.WithTLS(e.clientTLS))
		}
		s, err := controlplane.Dial(dctx, c.GRPCAddr, c.DeviceID, controlplane.ElectionID{Low: 1}, opts...)
		cancel()
		if err != nil {
			return fmt.Errorf("read %s's counters: %w", name, err)
		}
		if err := s.AdoptPipeline(ctx, e.pipeline.Cookie); err != nil {
			s.Close()
			return fmt.Errorf("read %s's counters: %w", name, err)
		}
		counts := map[string]map[int64]int64{}
		for _, counter := range []string{p4.CounterRxFrames, p4.CounterECNMarks, p4.CounterWREDDrops, p4.CounterBufMaxDrops, p4.CounterPausesSent, p4.CounterResumesSent,
			p4.CounterPausesReceived, p4.CounterResumesReceived, p4.CounterCNsSent, p4.CounterClearCNsSent, p4.CounterCNsReceived, p4.CounterWindowHolds, p4.CounterDetours} {
			cells, err := s.Counters(ctx, counter)
			if err != nil {
				s.Close()
				return fmt.Errorf("read %s's %s: %w", name, counter, err)
			}
			counts[counter] = map[int64]int64{}
			for _, cell := range cells {
				counts[counter][cell.Index] = cell.Packets
			}
		}
		s.Close()
		// RCM's counters, as the simulator counts them: CNs, packets RCC
		// sent to the low queue, flows SAR detoured.
		for counter, total := range map[string]*int64{p4.CounterCNsSent: &rcm.CNsSent, p4.CounterClearCNsSent: &rcm.ClearCNsSent,
			p4.CounterCNsReceived: &rcm.CNsReceived, p4.CounterWindowHolds: &rcm.Held, p4.CounterDetours: &rcm.Detours} {
			for _, n := range counts[counter] {
				*total += n
			}
		}
		for i, p := range adj[sw] {
			port := int64(e.f.Ports[sw][i])
			rec := sim.PortRecord{Node: sw, Port: i, NodeName: name, Peer: p.Peer.Node,
				Rate:            orig.Topology.Links[p.Link].Rate,
				Marked:          counts[p4.CounterECNMarks][port],
				PausesSent:      counts[p4.CounterPausesSent][port],
				Resumes:         counts[p4.CounterResumesSent][port],
				PausesReceived:  counts[p4.CounterPausesReceived][port],
				ResumesReceived: counts[p4.CounterResumesReceived][port],
				Drops:           counts[p4.CounterWREDDrops][port] + counts[p4.CounterBufMaxDrops][port]}
			if n := counts[p4.CounterWREDDrops][port]; n > 0 {
				drops["wred"] += n
			}
			if n := counts[p4.CounterBufMaxDrops][port]; n > 0 {
				drops["buf-max"] += n
			}
			res.Ports = append(res.Ports, rec)
		}
	}
	return nil
}

// close removes everything build created.
func (e *emulation) close() {
	var names []string
	for name := range e.switches {
		names = append(names, name)
	}
	sort.Strings(names)
	if e.group != nil {
		if err := e.group.Stop(); err != nil {
			e.logf("stop the switches' process: %v", err)
		}
		names = nil
	}
	for _, name := range names {
		if err := e.switches[name].Stop(); err != nil {
			e.logf("stop %s: %v", name, err)
		}
	}
	for _, p := range e.hosts {
		p.Close()
	}
	if e.lab != nil {
		if err := e.lab.Close(); err != nil {
			e.logf("%v", err)
		}
	}
	if e.tlsDir != "" {
		os.RemoveAll(e.tlsDir)
	}
}

// controllerName is the run's controller's identity, the one its
// switches' policy lets be primary.
const controllerName = "p4ctl emulate"

// makeCredentials makes the run's CA, the switches' certificate (for
// 127.0.0.1, where they serve), the controller's, and the policy, in a
// directory of the run's own.
func (e *emulation) makeCredentials() error {
	dir, err := os.MkdirTemp("", "p4rcm-emulate-tls")
	if err != nil {
		return err
	}
	e.tlsDir = dir
	ca, err := pki.NewCA("p4ctl emulate CA")
	if err != nil {
		return err
	}
	srv, err := ca.Issue(pki.Names{CommonName: "switch", Hosts: []string{"127.0.0.1"}})
	if err != nil {
		return err
	}
	sf, err := ca.WriteFiles(dir, "switch", srv)
	if err != nil {
		return err
	}
	ctl, err := ca.Issue(pki.Names{CommonName: controllerName})
	if err != nil {
		return err
	}
	cf, err := ca.WriteFiles(dir, "controller", ctl)
	if err != nil {
		return err
	}
	policy := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(policy, []byte(`{"writers": ["cn:`+controllerName+`"]}`+"\n"), 0o644); err != nil {
		return err
	}
	e.serverTLS = &switchproc.ServerTLS{CACert: sf.CACert, Cert: sf.Cert, Key: sf.Key, ClientAuth: true, Policy: policy}
	e.clientTLS, err = controlplane.TLS{CACert: cf.CACert, Cert: cf.Cert, Key: cf.Key}.Config()
	return err
}
