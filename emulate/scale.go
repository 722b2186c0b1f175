package emulate

import (
	"fmt"
	"math"

	"github.com/p4rcm/p4rcm/agent"
	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/topo"
	"github.com/p4rcm/p4rcm/sim/workload"
)

// Scale is cfg slowed down so that its hosts' links run at rate bits per
// second, by agent.Scale's rule applied to the whole scenario: with k the
// hosts' link rate over rate, every rate is divided by k, every time
// multiplied by k, and every size in bytes kept. So link rates and the
// DCQCN, ECN and RCM reference rates shrink; flow start times, link
// delays, DCQCN's timers, RCM's intervals, the RTO, the stop time and the
// sampling intervals stretch; flow sizes, buffers, PFC and ECN thresholds
// and RCM's byte figures stay. LDCP's settings follow agent.ScaleLDCP:
// its reference rate shrinks, its timers stretch, its switch thresholds
// (K_min, K_max, K, buf_max) stay in bytes. HPCC's, TIMELY's and DCTCP's
// follow agent.ScaleHPCC, ScaleTIMELY and ScaleDCTCP: their rates shrink,
// TIMELY's thresholds stretch, bytes stay. It returns the scaled
// configuration and k.
// The topology and flows are copied; cfg is not changed.
func Scale(cfg sim.Config, rate float64) (sim.Config, float64, error) {
	t := cfg.Topology
	if t == nil {
		return cfg, 0, fmt.Errorf("no topology")
	}
	hostRate := hostRate(t)
	if math.IsInf(hostRate, 1) || rate <= 0 {
		return cfg, 0, fmt.Errorf("scale %s to %g b/s: no host links or no rate", t.Name, rate)
	}
	k := hostRate / rate
	stretch := func(ps int64) int64 { return int64(math.Round(float64(ps) * k)) }

	nt := *t
	nt.Links = append([]topo.Link(nil), t.Links...)
	for i := range nt.Links {
		nt.Links[i].Rate /= k
		nt.Links[i].Delay = stretch(nt.Links[i].Delay)
	}
	cfg.Topology = &nt
	flows := make([]workload.Flow, len(cfg.Flows))
	for i, f := range cfg.Flows {
		f.Start = stretch(f.Start)
		flows[i] = f
	}
	cfg.Flows = flows

	var err error
	if cfg.DCQCN, err = agent.Scale(cfg.DCQCN, cfg.DCQCN.RefRate/k); err != nil {
		return cfg, 0, err
	}
	if cfg.IsLDCP() {
		if cfg.LDCP, err = agent.ScaleLDCP(cfg.LDCP, cfg.LDCP.RefRate/k); err != nil {
			return cfg, 0, err
		}
	}
	switch cfg.CC {
	case "hpcc":
		cfg.HPCC, err = agent.ScaleHPCC(cfg.HPCC, cfg.HPCC.RefRate/k)
	case "timely":
		cfg.TIMELY, err = agent.ScaleTIMELY(cfg.TIMELY, cfg.TIMELY.RefRate/k)
	case "dctcp":
		cfg.DCTCP, err = agent.ScaleDCTCP(cfg.DCTCP, cfg.DCTCP.RefRate/k)
	}
	if err != nil {
		return cfg, 0, err
	}
	if cfg.ECN != nil {
		e := *cfg.ECN
		e.RefRate /= k
		cfg.ECN = &e
	}
	if cfg.RCM != nil {
		r := *cfg.RCM
		r.CNInterval = stretch(r.CNInterval)
		r.CNHold = stretch(r.CNHold)
		r.RegionWindow = stretch(r.RegionWindow)
		r.PinIdle = stretch(r.PinIdle)
		r.RefRate /= k
		cfg.RCM = &r
	}
	cfg.RTO = stretch(cfg.RTO)
	cfg.StopAt = stretch(cfg.StopAt)
	cfg.QueueSampling.Interval = stretch(cfg.QueueSampling.Interval)
	cfg.RateSampling.Interval = stretch(cfg.RateSampling.Interval)
	cfg.CCSampling.Interval = stretch(cfg.CCSampling.Interval)
	return cfg, k, nil
}
