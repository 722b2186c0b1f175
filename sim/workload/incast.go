package workload

import (
	"fmt"
	"math"
	"strconv"
)

// IncastOptions configure Incast.
type IncastOptions struct {
	// Senders are the node IDs of the senders, at least 1, no duplicates,
	// not the receiver.
	Senders []int
	// Receiver is the node ID every sender sends to.
	Receiver int
	// Size is the size in bytes of every sender's flow; set it or Sizes,
	// not both.
	Size int64
	// Sizes, if not nil, gives each sender's flow size in bytes, one per
	// sender in the order of Senders.
	Sizes []int64
	// Start is the earliest start, picoseconds.
	Start int64
	// Skew spreads the starts: each flow starts at Start plus a uniform
	// random whole number of picoseconds in [0, Skew]. 0 starts all
	// flows together, the worst case for the receiver's link.
	Skew int64
	// Seed selects the random stream of the skew.
	Seed uint64
	// Priority is the traffic class of every flow, 0..7.
	Priority int
	// Class labels the flows; "" means "incast".
	Class string
}

// Incast makes an N:1 incast: one flow from each sender to the receiver.
// The flows are sorted by Start, Src, Dst and numbered in that order.
func Incast(o IncastOptions) ([]Flow, error) {
	const gen = "Incast"
	if err := checkHosts(gen, "Senders", o.Senders, 1); err != nil {
		return nil, err
	}
	if o.Receiver < 0 {
		return nil, optionErr(gen, "Receiver", strconv.Itoa(o.Receiver), "node ID is negative")
	}
	for i, s := range o.Senders {
		if s == o.Receiver {
			return nil, optionErr(gen, fmt.Sprintf("Senders[%d]", i), "", "host %d is the Receiver", s)
		}
	}
	switch {
	case o.Sizes != nil && o.Size != 0:
		return nil, optionErr(gen, "Size", strconv.FormatInt(o.Size, 10), "Size and Sizes both set: set one")
	case o.Sizes != nil:
		if len(o.Sizes) != len(o.Senders) {
			return nil, optionErr(gen, "Sizes", "", "%d sizes for %d senders", len(o.Sizes), len(o.Senders))
		}
		for i, s := range o.Sizes {
			if s <= 0 {
				return nil, optionErr(gen, fmt.Sprintf("Sizes[%d]", i), strconv.FormatInt(s, 10), "must be positive")
			}
		}
	case o.Size <= 0:
		return nil, optionErr(gen, "Size", strconv.FormatInt(o.Size, 10), "must be positive (or set Sizes)")
	}
	if o.Start < 0 {
		return nil, optionErr(gen, "Start", psText(o.Start), "must not be negative")
	}
	if o.Skew < 0 {
		return nil, optionErr(gen, "Skew", psText(o.Skew), "must not be negative")
	}
	if o.Skew >= math.MaxInt64-o.Start {
		return nil, optionErr(gen, "Skew", psText(o.Skew), "start + skew is past the largest time (106 days)")
	}
	if err := checkPriority(gen, o.Priority); err != nil {
		return nil, err
	}
	class := o.Class
	if class == "" {
		class = "incast"
	}
	rng := newRNG(o.Seed, streamIncast)
	flows := make([]Flow, len(o.Senders))
	for i, s := range o.Senders {
		size := o.Size
		if o.Sizes != nil {
			size = o.Sizes[i]
		}
		flows[i] = Flow{
			Src: s, Dst: o.Receiver, Size: size,
			Start:    o.Start + rng.Int64N(o.Skew+1),
			Priority: o.Priority, Class: class,
		}
	}
	return finish(flows), nil
}
