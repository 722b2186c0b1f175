package workload

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// PoissonOptions configure Poisson.
type PoissonOptions struct {
	// Hosts are the node IDs of the hosts that send and receive, at least
	// 2, no duplicates. Their order defines the groups and the random
	// streams, so keep it stable (e.g. ascending).
	Hosts []int
	// CDF is the flow-size distribution.
	CDF *CDF
	// Load is the offered load of each source as a fraction of HostRate,
	// 0 < Load <= 1.
	Load float64
	// HostRate is the line rate of a host, bits per second.
	HostRate float64
	// Start and Duration bound the arrivals to [Start, Start+Duration),
	// picoseconds.
	Start, Duration int64
	// GroupSize, if positive, partitions Hosts in their given order into
	// consecutive groups of GroupSize hosts, and flows stay within their
	// group (the RCM paper: 12 groups of 36 on 432 hosts). 0 means one
	// group of all hosts. len(Hosts) must be a multiple of it, and it must
	// be at least 2.
	GroupSize int
	// Seed selects the random streams; the same options and seed give the
	// same flows.
	Seed uint64
	// Priority is the traffic class of every flow, 0..7.
	Priority int
	// Class labels every flow; empty for plain flows.
	Class string
}

// Poisson makes all-to-all traffic: each source host runs an independent
// Poisson process of flow arrivals with rate Load*HostRate/(8*mean size)
// per second, so that it offers Load of its line rate on average; each flow
// has a size drawn from the CDF and a destination drawn uniformly among the
// other hosts of the source's group. The flows are sorted by Start, Src,
// Dst and numbered in that order.
func Poisson(o PoissonOptions) ([]Flow, error) {
	const gen = "Poisson"
	ao := arrivalOptions{hosts: o.Hosts, cdf: o.CDF, load: o.Load, hostRate: o.HostRate, start: o.Start, duration: o.Duration}
	perPS, err := ao.check(gen)
	if err != nil {
		return nil, err
	}
	if err := checkPriority(gen, o.Priority); err != nil {
		return nil, err
	}
	gs := o.GroupSize
	switch {
	case gs < 0:
		return nil, optionErr(gen, "GroupSize", strconv.Itoa(gs), "must not be negative (0 means one group)")
	case gs == 0:
		gs = len(o.Hosts)
	case gs == 1:
		return nil, optionErr(gen, "GroupSize", "1", "a host alone in its group has nowhere to send; use at least 2")
	case len(o.Hosts)%gs != 0:
		return nil, optionErr(gen, "GroupSize", strconv.Itoa(gs), "%d hosts are not a multiple of it; give a group size that divides %d: %s",
			len(o.Hosts), len(o.Hosts), divisors(len(o.Hosts)))
	}
	// Room for the expected count and some, so that millions of flows
	// are not copied over and over as the slice grows.
	flows := make([]Flow, 0, int(perPS*float64(o.Duration)*float64(len(o.Hosts))*1.05)+16)
	ao.arrivals(perPS, o.Seed, streamPoisson, func(rng *rand.Rand, src int, start, size int64) {
		lo := src / gs * gs
		dst := otherIndex(rng, lo, lo+gs, src)
		flows = append(flows, Flow{
			Src: o.Hosts[src], Dst: o.Hosts[dst], Size: size, Start: start,
			Priority: o.Priority, Class: o.Class,
		})
	})
	return finish(flows), nil
}

// divisors lists n's divisors from 2, the group sizes n hosts take: "2,
// 4, 8 or 16".
func divisors(n int) string {
	var d []string
	for i := 2; i <= n; i++ {
		if n%i == 0 {
			d = append(d, strconv.Itoa(i))
		}
	}
	switch len(d) {
	case 0:
		return "none (one host)"
	case 1:
		return d[0]
	}
	if len(d) > 12 {
		d = append(d[:11], "...", d[len(d)-1])
	}
	return strings.Join(d[:len(d)-1], ", ") + " or " + d[len(d)-1]
}
