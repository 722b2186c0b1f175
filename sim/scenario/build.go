package scenario

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/p4rcm/p4rcm/dcqcn"
	"github.com/p4rcm/p4rcm/dctcp"
	"github.com/p4rcm/p4rcm/hpcc"
	"github.com/p4rcm/p4rcm/internal/preset"
	"github.com/p4rcm/p4rcm/ldcp"
	"github.com/p4rcm/p4rcm/rcm"
	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/topo"
	"github.com/p4rcm/p4rcm/sim/workload"
	"github.com/p4rcm/p4rcm/timely"
)

// Defaults for what a scenario leaves out.
const (
	DefaultSeed = 1
	DefaultMTU  = 1000
	// MinMTU and MaxMTU bound host.mtu: RoCEv2 runs on InfiniBand's path
	// MTUs, 256 to 4096 bytes of payload; below that a run takes minutes
	// for nothing, above it no NIC sends.
	MinMTU             = 256
	MaxMTU             = 4096
	DefaultAckInterval = 1
	DefaultScheme      = "dcqcn"
	DefaultDCQCN       = "hpcc"
	DefaultHPCC        = "ns3"
	DefaultTIMELY      = "ns3"
	DefaultDCTCP       = "ns3"
	DefaultLDCP        = "draft"
	DefaultBuffer      = 32e6
	DefaultPFCBeta     = 1.0 / 8
	DefaultHostRate    = 100e9
	DefaultDelay       = 1_000_000     // 1 us
	DefaultRTO         = 1_000_000_000 // 1 ms
	DefaultPriority    = 3
)

// Schemes lists the congestion-control schemes a scenario can name.
var Schemes = []string{"dcqcn", "pfc", "lossy", "rcm", "rcm-rcc", "hpcc", "timely", "dctcp",
	"rcm-hpcc", "rcm-timely", "rcm-dctcp", "ldcp", "ldcp-rate"}

// Build resolves the scenario into a simulator configuration: it builds
// the topology, generates or reads the flows and applies the parameters.
func (s *Scenario) Build() (sim.Config, error) { return s.build(true) }

// BuildNetwork is Build without the flows and the output settings: the
// topology and every parameter of the network, for programming real
// switches as the scenario's (package fabric). The workload is not read.
func (s *Scenario) BuildNetwork() (sim.Config, error) { return s.build(false) }

func (s *Scenario) build(withFlows bool) (sim.Config, error) {
	cfg := sim.Config{Seed: s.Seed, MTU: s.Host.MTU, AckInterval: s.Host.AckInterval, RTO: int64(s.Host.RTO),
		StopAt: int64(s.Stop)}
	if s.nodeAt("seed") == nil {
		cfg.Seed = DefaultSeed
	} else if cfg.Seed == 0 {
		return cfg, s.errorf("seed", "0: seeds start at 1 (leave it out for %d)", DefaultSeed)
	}
	// A value left out takes its default; one written out, zero included,
	// is checked.
	if s.nodeAt("host.mtu") == nil {
		cfg.MTU = DefaultMTU
	} else if cfg.MTU < MinMTU || cfg.MTU > MaxMTU {
		return cfg, s.errorf("host.mtu", "%d: want the payload of a full packet, %d to %d bytes (RoCEv2's path MTUs; ns-3 uses 1000)", cfg.MTU, MinMTU, MaxMTU)
	}
	if s.nodeAt("host.ack_interval") == nil {
		cfg.AckInterval = DefaultAckInterval
	} else if cfg.AckInterval < 1 {
		return cfg, s.errorf("host.ack_interval", "%d: want 1 or more data packets per ACK", cfg.AckInterval)
	}
	if cfg.RTO == 0 {
		cfg.RTO = DefaultRTO
	}
	switch s.Host.Wire {
	case "", "ethernet":
		cfg.Wire = sim.WireEthernet
	case "ns3":
		cfg.Wire = sim.WireNS3
	default:
		return cfg, s.errorf("host.wire", "unknown wire %q (ethernet, ns3)", s.Host.Wire)
	}
	t, err := s.buildTopology()
	if err != nil {
		return cfg, err
	}
	cfg.Topology = t
	if withFlows {
		if cfg.Flows, err = s.buildFlows(t, cfg.Seed); err != nil {
			return cfg, err
		}
	}
	scheme := s.Scheme
	if scheme == "" {
		scheme = DefaultScheme
	}
	switch scheme {
	case "dcqcn":
		cfg.CC, cfg.PFC = "dcqcn", true
	case "pfc":
		cfg.CC, cfg.PFC = "none", true
	case "lossy":
		cfg.CC, cfg.PFC = "dcqcn", false
	case "rcm", "rcm-rcc":
		cfg.CC, cfg.PFC = "dcqcn", true
		p, err := s.buildRCM(scheme == "rcm")
		if err != nil {
			return cfg, err
		}
		cfg.RCM = &p
	case "hpcc", "timely", "dctcp":
		cfg.CC, cfg.PFC = scheme, true
	case "rcm-hpcc", "rcm-timely", "rcm-dctcp":
		// RCM's switch mechanisms under another host scheme.
		cfg.CC, cfg.PFC = strings.TrimPrefix(scheme, "rcm-"), true
		p, err := s.buildRCM(true)
		if err != nil {
			return cfg, err
		}
		cfg.RCM = &p
	case "ldcp", "ldcp-rate":
		// The draft's point: no PFC, WRED and ECN in one queue instead.
		cfg.CC, cfg.PFC = scheme, false
	default:
		return cfg, s.errorf("scheme", "unknown scheme %q (known: %s)", scheme, strings.Join(Schemes, ", "))
	}
	if cfg.DCQCN, err = s.buildDCQCN(); err != nil {
		return cfg, err
	}
	// Checked whatever the scheme, so that a bad value is found before an
	// experiment reaches the runs that use it.
	if cfg.LDCP, err = s.buildLDCP(); err != nil {
		return cfg, err
	}
	if cfg.HPCC, err = s.buildHPCC(); err != nil {
		return cfg, err
	}
	if cfg.TIMELY, err = s.buildTIMELY(); err != nil {
		return cfg, err
	}
	if cfg.DCTCP, err = s.buildDCTCP(); err != nil {
		return cfg, err
	}
	s.applyNIC(&cfg)
	if err := s.applySwitch(&cfg); err != nil {
		return cfg, err
	}
	if withFlows {
		s.applyOutput(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("%s: %w", s.file, err)
	}
	return cfg, nil
}

func (s *Scenario) path(p string) string {
	if filepath.IsAbs(p) || s.dir == "" {
		return p
	}
	return filepath.Join(s.dir, p)
}

func (s *Scenario) buildTopology() (*topo.Topology, error) {
	o := s.Topology
	hostRate := float64(o.HostRate)
	if hostRate == 0 {
		hostRate = DefaultHostRate
	}
	delay := int64(o.Delay)
	if delay == 0 && o.Kind != "ns3" {
		delay = DefaultDelay
	}
	var t *topo.Topology
	var err error
	switch o.Kind {
	case "fattree", "":
		k := o.K
		if s.nodeAt("topology.k") == nil {
			k = 4
		}
		t, err = topo.FatTree(topo.FatTreeOptions{K: k, HostRate: hostRate, FabricRate: float64(o.FabricRate), Delay: delay})
	case "leafspine":
		t, err = topo.LeafSpine(topo.LeafSpineOptions{Leaves: o.Leaves, Spines: o.Spines, HostsPerLeaf: o.HostsPerLeaf,
			HostRate: hostRate, UplinkRate: float64(o.UplinkRate), Oversubscription: o.Oversubscription, Delay: delay})
	case "dumbbell":
		t, err = topo.Dumbbell(topo.DumbbellOptions{Left: o.Left, Right: o.Right, HostRate: hostRate,
			BottleneckRate: float64(o.BottleneckRate), Delay: delay})
	case "star":
		t, err = topo.Star(topo.StarOptions{N: o.Hosts, Rate: hostRate, Delay: delay})
	case "testbed":
		rate := float64(o.HostRate)
		if rate == 0 {
			rate = topo.TestbedRate
		}
		t, err = topo.Testbed(topo.TestbedOptions{HostsPerToR: o.HostsPerToR, Rate: rate, Delay: delay})
	case "ns3":
		if o.File == "" {
			return nil, s.errorf("topology.file", "an ns3 topology needs a file")
		}
		var data []byte
		data, err = s.readData(o.File)
		if err != nil {
			return nil, s.errorf("topology.file", "%v", err)
		}
		t, err = topo.ParseNS3(bytes.NewReader(data), s.path(o.File))
		if err != nil {
			return nil, err
		}
	default:
		return nil, s.errorf("topology.kind", "unknown topology %q (fattree, leafspine, dumbbell, star, testbed, ns3)", o.Kind)
	}
	if err != nil {
		return nil, s.optionError("topology", err)
	}
	return t, nil
}

// readData reads a file named in the scenario; "builtin:" names are the
// presets' embedded inputs.
func (s *Scenario) readData(name string) ([]byte, error) {
	if rest, ok := strings.CutPrefix(name, "builtin:"); ok {
		return builtinData(rest)
	}
	return os.ReadFile(s.path(name))
}

// workloads lists the scenario's workloads with the path of each.
func (s *Scenario) workloads() ([]Workload, []string) {
	var ws []Workload
	var fields []string
	if s.Workload != nil {
		ws, fields = append(ws, *s.Workload), append(fields, "workload")
	}
	for i, w := range s.Workloads {
		ws, fields = append(ws, w), append(fields, fmt.Sprintf("workloads.%d", i))
	}
	return ws, fields
}

func (s *Scenario) buildFlows(t *topo.Topology, seed uint64) ([]workload.Flow, error) {
	ws, fields := s.workloads()
	if len(ws) == 0 {
		return nil, s.errorf("workload", "the scenario has no workload")
	}
	hosts := t.Hosts()
	isHost := func(n int) bool { return n >= 0 && n < len(t.Nodes) && t.Nodes[n].Kind == topo.Host }
	hostRate := 0.0
	for _, l := range t.Links {
		if t.Nodes[l.A].Kind == topo.Host || t.Nodes[l.B].Kind == topo.Host {
			hostRate = l.Rate
			break
		}
	}
	var all []workload.Flow
	for i, w := range ws {
		field := fields[i]
		prio := DefaultPriority
		if w.Priority != nil {
			prio = *w.Priority
		}
		wseed := seed*1000003 + uint64(i)
		var flows []workload.Flow
		var err error
		switch w.Kind {
		case "poisson", "hotspot":
			cdf, cerr := workload.LoadCDF(orDefault(w.CDF, "websearch"))
			if cerr != nil {
				return nil, s.errorf(field+".cdf", "%v", cerr)
			}
			hs := hosts
			if len(w.Hosts) > 0 {
				hs = w.Hosts
			}
			if w.Duration <= 0 {
				return nil, s.errorf(field+".duration", "a %s workload needs a positive duration", w.Kind)
			}
			po := workload.PoissonOptions{Hosts: hs, CDF: cdf, Load: w.Load, HostRate: hostRate, Start: int64(w.Start),
				Duration: int64(w.Duration), GroupSize: w.GroupSize, Seed: wseed, Priority: prio, Class: w.Class}
			if w.Kind == "poisson" {
				flows, err = workload.Poisson(po)
			} else {
				flows, err = workload.HotSpot(workload.HotSpotOptions{Hosts: hs, CDF: cdf, Load: w.Load, HostRate: hostRate,
					Start: int64(w.Start), Duration: int64(w.Duration), Seed: wseed, Priority: prio,
					HotFraction: w.HotFraction, HotHosts: w.HotHosts})
			}
		case "incast":
			if w.Receiver == nil {
				return nil, s.errorf(field+".receiver", "an incast needs a receiver")
			}
			var sizes []int64
			for _, z := range w.Sizes {
				sizes = append(sizes, int64(z))
			}
			flows, err = workload.Incast(workload.IncastOptions{Senders: w.Senders, Receiver: *w.Receiver, Size: int64(w.Size),
				Sizes: sizes, Start: int64(w.Start), Skew: int64(w.Skew), Seed: wseed, Priority: prio, Class: w.Class})
		case "file":
			data, rerr := s.readData(w.File)
			if rerr != nil {
				return nil, s.errorf(field+".file", "%v", rerr)
			}
			flows, err = workload.ParseNS3Flows(bytes.NewReader(data), s.path(w.File), isHost)
			if err != nil {
				return nil, err
			}
			if len(flows) == 0 {
				return nil, s.errorf(field+".file", "%s holds no flows (its count is 0): no flow to simulate", w.File)
			}
		case "flows":
			if len(w.Flows) == 0 {
				return nil, s.errorf(field+".flows", "the list is empty: no flow to simulate")
			}
			for j, f := range w.Flows {
				p := prio
				if f.Priority != nil {
					p = *f.Priority
				}
				if !isHost(f.Src) || !isHost(f.Dst) {
					return nil, s.errorf(fmt.Sprintf("%s.flows.%d", field, j), "src %d and dst %d must be hosts (node IDs 0..%d)", f.Src, f.Dst, len(hosts)-1)
				}
				flows = append(flows, workload.Flow{Src: f.Src, Dst: f.Dst, Size: int64(f.Size), Start: int64(f.Start),
					Priority: p, Class: orDefault(f.Class, w.Class)})
			}
		default:
			return nil, s.errorf(field+".kind", "unknown workload %q (poisson, hotspot, incast, file, flows)", w.Kind)
		}
		if err != nil {
			return nil, s.optionError(field, err)
		}
		all = append(all, flows...)
	}
	if len(all) == 0 {
		return nil, s.errorf(fields[0], "the workload generates no flows: no flow to simulate (a longer duration or a higher load would)")
	}
	// One flow list, ordered by start time; the order within a start time
	// is the order of the workloads and of each workload's flows, kept in
	// ID for the sort (a stable sort is many times slower on millions).
	for i := range all {
		all[i].ID = i
	}
	slices.SortFunc(all, func(a, b workload.Flow) int { return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.ID, b.ID)) })
	for i := range all {
		all[i].ID = i
	}
	return all, nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func (s *Scenario) buildDCQCN() (dcqcn.Params, error) {
	d := s.DCQCN
	p, err := dcqcn.Preset(orDefault(d.Preset, DefaultDCQCN))
	if err != nil {
		return p, s.errorf("dcqcn.preset", "%v", err)
	}
	override(&p.G, d.G)
	override(&p.InitialAlpha, d.InitialAlpha)
	override(&p.AlphaInterval, d.AlphaInterval)
	override(&p.DecreaseInterval, d.DecreaseInterval)
	override(&p.RateOnFirstCNP, d.RateOnFirstCNP)
	overrideBool(&p.ClampTarget, d.ClampTarget)
	override(&p.Timer, d.Timer)
	override(&p.ByteCounter, d.ByteCounter)
	override(&p.F, d.F)
	override(&p.RAI, d.RAI)
	override(&p.RHAI, d.RHAI)
	override(&p.MinRate, d.MinRate)
	override(&p.RefRate, d.RefRate)
	overrideBool(&p.ScaleWithRate, d.ScaleWithRate)
	override(&p.CNPInterval, d.CNPInterval)
	override(&p.KMin, d.KMin)
	override(&p.KMax, d.KMax)
	override(&p.PMax, d.PMax)
	if err := p.Validate(); err != nil {
		var pe *dcqcn.ParamError
		if errors.As(err, &pe) {
			return p, s.errorf("dcqcn."+pe.Field, "%s", pe.Msg)
		}
		return p, s.errorf("dcqcn", "%v", err)
	}
	return p, nil
}

// number is what the scenario's optional numbers are made of: plain
// numbers and the unit types (Size, Rate, Duration, Fraction).
type number interface {
	~int | ~int64 | ~float64
}

// override sets *dst to the scenario's value v, in dst's units, if the
// scenario gives one.
func override[D, V number](dst *D, v *V) {
	if v != nil {
		*dst = D(*v)
	}
}

// overrideBool is override for a switch.
func overrideBool(dst, v *bool) {
	if v != nil {
		*dst = *v
	}
}

func (s *Scenario) buildHPCC() (hpcc.Params, error) {
	o := s.HPCC
	p, err := hpcc.Preset(orDefault(o.Preset, DefaultHPCC))
	if err != nil {
		return p, s.errorf("hpcc.preset", "%v", err)
	}
	override(&p.Eta, o.Eta)
	override(&p.MIThresh, o.MIThresh)
	override(&p.RAI, o.RAI)
	override(&p.MinRate, o.MinRate)
	override(&p.RefRate, o.RefRate)
	overrideBool(&p.ScaleWithRate, o.ScaleWithRate)
	overrideBool(&p.FastReact, o.FastReact)
	overrideBool(&p.SampleFeedback, o.SampleFeedback)
	overrideBool(&p.MultiRate, o.MultiRate)
	override(&p.INTMulti, o.INTMulti)
	if err := p.Validate(); err != nil {
		return p, s.paramError("hpcc", err)
	}
	return p, nil
}

func (s *Scenario) buildTIMELY() (timely.Params, error) {
	o := s.TIMELY
	p, err := timely.Preset(orDefault(o.Preset, DefaultTIMELY))
	if err != nil {
		return p, s.errorf("timely.preset", "%v", err)
	}
	override(&p.Alpha, o.Alpha)
	override(&p.Beta, o.Beta)
	override(&p.TLow, o.TLow)
	override(&p.THigh, o.THigh)
	override(&p.MinRTT, o.MinRTT)
	override(&p.RAI, o.RAI)
	override(&p.RHAI, o.RHAI)
	override(&p.HAIThresh, o.HAIThresh)
	override(&p.MinRate, o.MinRate)
	override(&p.RefRate, o.RefRate)
	overrideBool(&p.ScaleWithRate, o.ScaleWithRate)
	if err := p.Validate(); err != nil {
		return p, s.paramError("timely", err)
	}
	return p, nil
}

func (s *Scenario) buildDCTCP() (dctcp.Params, error) {
	o := s.DCTCP
	p, err := dctcp.Preset(orDefault(o.Preset, DefaultDCTCP))
	if err != nil {
		return p, s.errorf("dctcp.preset", "%v", err)
	}
	override(&p.G, o.G)
	override(&p.RAI, o.RAI)
	override(&p.MinRate, o.MinRate)
	override(&p.KMin, o.KMin)
	override(&p.KMax, o.KMax)
	override(&p.PMax, o.PMax)
	override(&p.RefRate, o.RefRate)
	if err := p.Validate(); err != nil {
		return p, s.paramError("dctcp", err)
	}
	return p, nil
}

// paramError places the error of a section's Validate at the value it
// names.
func (s *Scenario) paramError(section string, err error) error {
	var pe *preset.ParamError
	if errors.As(err, &pe) {
		return s.errorf(section+"."+pe.Field, "%s", pe.Msg)
	}
	return s.errorf(section, "%v", err)
}

// applyNIC sets the sending window and the ACKs' priority at the NIC: as
// given, or as the ns-3 simulator's run.py sets them for the scheme (HPCC
// and DCTCP with a variable window of the fabric's largest BDP and ACKs
// held by PFC; the others without a window, ACKs never held).
func (s *Scenario) applyNIC(cfg *sim.Config) {
	ns3Window := cfg.CC == "hpcc" || cfg.CC == "dctcp"
	w := s.Host.Window
	cfg.Window = sim.Window{Enabled: ns3Window, Variable: ns3Window}
	overrideBool(&cfg.Window.Enabled, w.Enabled)
	overrideBool(&cfg.Window.Variable, w.Variable)
	overrideBool(&cfg.Window.PerPath, w.PerPath)
	high := !ns3Window
	overrideBool(&high, s.Host.AckHighPrio)
	cfg.AckObeysPFC = !high
}

func (s *Scenario) buildLDCP() (ldcp.Params, error) {
	o := s.LDCP
	p, err := ldcp.Preset(orDefault(o.Preset, DefaultLDCP))
	if err != nil {
		return p, s.errorf("ldcp.preset", "%v", err)
	}
	override(&p.Alpha, o.Alpha)
	override(&p.Beta, o.Beta)
	override(&p.Gamma, o.Gamma)
	override(&p.Eta, o.Eta)
	override(&p.MaxWindow, o.MaxWindow)
	override(&p.IW, o.IW)
	override(&p.AckEvery, o.AckEvery)
	override(&p.ProbeTimeout, o.ProbeTimeout)
	override(&p.CNPInterval, o.CNPInterval)
	override(&p.KMin, o.KMin)
	override(&p.KMax, o.KMax)
	override(&p.PMax, o.PMax)
	override(&p.K, o.K)
	override(&p.BufMax, o.BufMax)
	override(&p.RefRate, o.RefRate)
	if err := p.Validate(); err != nil {
		var pe *ldcp.ParamError
		if errors.As(err, &pe) {
			return p, s.errorf("ldcp."+pe.Field, "%s", pe.Msg)
		}
		return p, s.errorf("ldcp", "%v", err)
	}
	return p, nil
}

// buildRCM resolves the rcm section; scheme rcm-rcc is rcm with SAR off
// (sar false), which rcm.sar cannot turn back on.
func (s *Scenario) buildRCM(sar bool) (rcm.Params, error) {
	o := s.RCM
	p := rcm.Defaults()
	if o.SAR != nil && *o.SAR && !sar {
		return p, s.errorf("rcm.sar", "scheme rcm-rcc is rcm without SAR; use scheme rcm")
	}
	if o.RCC != nil && o.Hold != nil && *o.RCC != *o.Hold {
		return p, s.errorf("rcm.rcc", "rcc is hold's older name and says %t where hold says %t", *o.RCC, *o.Hold)
	}
	p.SAR = sar
	overrideBool(&p.SAR, o.SAR)
	overrideBool(&p.CRD, o.CRD)
	overrideBool(&p.CFR, o.CFR)
	overrideBool(&p.Hold, o.RCC)
	overrideBool(&p.Hold, o.Hold)
	overrideBool(&p.Limit, o.Limit)
	overrideBool(&p.CN, o.CN)
	override(&p.QEq, o.QEq)
	override(&p.Wq, o.Wq)
	override(&p.W, o.W)
	override(&p.Gd, o.Gd)
	override(&p.SampleBytes, o.SampleBytes)
	override(&p.MinSampleBytes, o.MinSampleBytes)
	override(&p.CAMDepth, o.CAMDepth)
	override(&p.CFRSampleEvery, o.CFRSampleEvery)
	override(&p.CAMMinHits, o.CAMMinHits)
	override(&p.Window, o.Window)
	override(&p.MinShare, o.MinShare)
	override(&p.CNInterval, o.CNInterval)
	override(&p.CNHold, o.CNHold)
	override(&p.RegionCNs, o.RegionCNs)
	override(&p.RegionWindow, o.RegionWindow)
	overrideBool(&p.WorkConserving, o.WorkConserving)
	overrideBool(&p.SARExisting, o.SARExisting)
	override(&p.PinIdle, o.PinIdle)
	override(&p.RefRate, o.RefRate)
	if err := p.Validate(); err != nil {
		var pe *rcm.ParamError
		if errors.As(err, &pe) {
			return p, s.errorf("rcm."+pe.Field, "%s", pe.Msg)
		}
		return p, s.errorf("rcm", "%v", err)
	}
	return p, nil
}

func (s *Scenario) applySwitch(cfg *sim.Config) error {
	w := s.Switch
	cfg.Buffer = float64(w.Buffer)
	if s.nodeAt("switch.buffer") == nil {
		cfg.Buffer = DefaultBuffer
	} else if cfg.Buffer <= 0 {
		return s.errorf("switch.buffer", "%s: want the shared buffer of a switch, e.g. 32MB", s.nodeAt("switch.buffer").Value)
	}
	cfg.PFCXOFF = float64(w.PFCXOFF)
	switch {
	case w.PFCBeta != nil && !(*w.PFCBeta > 0 || *w.PFCBeta == 0 && w.PFCXOFF > 0):
		return s.errorf("switch.pfc_beta", "%s: must be positive (1/8 to 8 on common switches; or set pfc_xoff for static thresholds)", s.nodeAt("switch.pfc_beta").Value)
	case w.PFCBeta != nil:
		cfg.PFCBeta = float64(*w.PFCBeta)
	case cfg.PFCXOFF == 0:
		cfg.PFCBeta = DefaultPFCBeta
	}
	cfg.PFCBetaScale = w.PFCBetaScale == nil || *w.PFCBetaScale
	cfg.LosslessPriorities = w.Lossless
	cfg.Headroom = float64(w.Headroom)
	cfg.XONOffset = float64(w.XONOffset)
	if w.PauseQuanta < 0 || w.PauseQuanta > 0xffff {
		return s.errorf("switch.pause_quanta", "must be 0..65535, got %d", w.PauseQuanta)
	}
	cfg.PauseQuanta = uint16(w.PauseQuanta)
	cfg.QueueLimit = float64(w.QueueLimit)
	cfg.AckInData = w.AckInData
	cfg.WREDK = float64(w.WREDK)
	cfg.BufMax = float64(w.BufMax)
	if !(cfg.WREDK >= 0) {
		return s.errorf("switch.wred_k", "must not be negative")
	}
	if !(cfg.BufMax >= 0) {
		return s.errorf("switch.buf_max", "must not be negative")
	}
	if e := w.ECN; e != nil {
		if e.KMax < e.KMin {
			return s.errorf("switch.ecn.kmax", "%s is below kmin %s", s.nodeAt("switch.ecn.kmax").Value, s.nodeAt("switch.ecn.kmin").Value)
		}
		ref := float64(e.RefRate)
		if ref == 0 && cfg.IsLDCP() {
			ref = cfg.LDCP.RefRate
		} else if ref == 0 {
			ref = cfg.DCQCN.RefRate
		}
		cfg.ECN = &sim.ECNConfig{KMin: float64(e.KMin), KMax: float64(e.KMax), PMax: e.PMax, RefRate: ref}
		cfg.ECNMarking = true
	}
	return nil
}

func (s *Scenario) applyOutput(cfg *sim.Config) {
	o := s.Output
	cfg.QueueSampling = sim.QueueSampling{Interval: int64(o.QueueSamples.Interval), Max: o.QueueSamples.Max}
	if cfg.QueueSampling.Interval > 0 && cfg.QueueSampling.Max == 0 {
		cfg.QueueSampling.Max = 100_000
	}
	for _, p := range o.QueueSamples.Ports {
		cfg.QueueSampling.Ports = append(cfg.QueueSampling.Ports, topo.PortRef{Node: p[0], Port: p[1]})
	}
	cfg.RateSampling = sim.RateSampling{Interval: int64(o.RateSamples.Interval), Flows: o.RateSamples.Flows}
	cfg.CCSampling = sim.CCSampling{Interval: int64(o.CCSamples.Interval), Flows: o.CCSamples.Flows}
}
