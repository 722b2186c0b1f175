package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Defaults of HotSpotOptions.
const (
	DefaultHotFraction = 0.15  // share of flows that go to a hot-spot host
	DefaultHotHosts    = 0.125 // share of hosts that are hot spots
)

// HotSpotOptions configure HotSpot. The fields shared with PoissonOptions
// mean the same.
type HotSpotOptions struct {
	Hosts           []int
	CDF             *CDF
	Load            float64 // per source, fraction of HostRate
	HostRate        float64 // bits per second
	Start, Duration int64   // picoseconds
	Seed            uint64
	Priority        int
	// HotFraction is the probability that a flow goes to a hot-spot host;
	// 0 means DefaultHotFraction (0.15). At most 1.
	HotFraction float64
	// HotHosts is the share of Hosts that are hot spots, rounded to the
	// nearest whole host and at least 1; 0 means DefaultHotHosts (0.125,
	// 54 of 432). At most 1.
	HotHosts float64
}

// hotDefaults fills in the defaults and checks the hot-spot options.
func (o HotSpotOptions) hotDefaults(gen string) (HotSpotOptions, error) {
	if o.HotFraction == 0 {
		o.HotFraction = DefaultHotFraction
	}
	if o.HotHosts == 0 {
		o.HotHosts = DefaultHotHosts
	}
	if !(o.HotFraction > 0 && o.HotFraction <= 1) {
		return o, optionErr(gen, "HotFraction", fmt.Sprint(o.HotFraction), "must be in (0, 1] (0 means %g)", DefaultHotFraction)
	}
	if !(o.HotHosts > 0 && o.HotHosts <= 1) {
		return o, optionErr(gen, "HotHosts", fmt.Sprint(o.HotHosts), "must be in (0, 1] (0 means %g)", DefaultHotHosts)
	}
	return o, nil
}

// hotIndexes returns the positions in o.Hosts of the hot-spot hosts,
// ascending: a seeded random choice of max(1, round(HotHosts*n)) of them.
func (o HotSpotOptions) hotIndexes() []int {
	n := len(o.Hosts)
	k := max(1, int(math.Round(o.HotHosts*float64(n))))
	idx := newRNG(o.Seed, streamHotHosts).Perm(n)[:k]
	slices.Sort(idx)
	return idx
}

// HotSpotHosts returns the hot-spot hosts HotSpot would choose for these
// options, in the order of o.Hosts.
func HotSpotHosts(o HotSpotOptions) ([]int, error) {
	const gen = "HotSpotHosts"
	if err := checkHosts(gen, "Hosts", o.Hosts, 2); err != nil {
		return nil, err
	}
	o, err := o.hotDefaults(gen)
	if err != nil {
		return nil, err
	}
	var hosts []int
	for _, i := range o.hotIndexes() {
		hosts = append(hosts, o.Hosts[i])
	}
	return hosts, nil
}

// HotSpot makes the RCM paper's hot-spot pattern: every host sends flows by
// a Poisson process at Load, exactly like Poisson without groups; each flow
// goes with probability HotFraction to a uniformly random hot-spot host
// (Class "hot") and otherwise to a uniformly random other host, hot or
// not (Class "background"). The hot-spot hosts are a share HotHosts of
// Hosts chosen by Seed (see HotSpotHosts). A hot host never sends a hot
// flow to itself: it picks among the other hot hosts, and if it is the
// only one its hot draws become background flows. The flows are sorted by
// Start, Src, Dst and numbered in that order.
func HotSpot(o HotSpotOptions) ([]Flow, error) {
	const gen = "HotSpot"
	ao := arrivalOptions{hosts: o.Hosts, cdf: o.CDF, load: o.Load, hostRate: o.HostRate, start: o.Start, duration: o.Duration}
	perPS, err := ao.check(gen)
	if err != nil {
		return nil, err
	}
	if err := checkPriority(gen, o.Priority); err != nil {
		return nil, err
	}
	o, err = o.hotDefaults(gen)
	if err != nil {
		return nil, err
	}
	hot := o.hotIndexes()
	hotRank := make([]int, len(o.Hosts)) // position in hot, or -1
	for i := range hotRank {
		hotRank[i] = -1
	}
	for r, i := range hot {
		hotRank[i] = r
	}
	n := len(o.Hosts)
	var flows []Flow
	ao.arrivals(perPS, o.Seed, streamHotSpot, func(rng *rand.Rand, src int, start, size int64) {
		f := Flow{Src: o.Hosts[src], Size: size, Start: start, Priority: o.Priority, Class: "background"}
		isHot := rng.Float64() < o.HotFraction
		switch r := hotRank[src]; {
		case isHot && r < 0:
			f.Dst, f.Class = o.Hosts[hot[rng.IntN(len(hot))]], "hot"
		case isHot && len(hot) > 1:
			f.Dst, f.Class = o.Hosts[hot[otherIndex(rng, 0, len(hot), r)]], "hot"
		default:
			f.Dst = o.Hosts[otherIndex(rng, 0, n, src)]
		}
		flows = append(flows, f)
	})
	return finish(flows), nil
}
