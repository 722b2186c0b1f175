package workload

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
)

// MaxGeneratedFlows bounds the expected number of flows a Poisson or
// HotSpot call may make (about 3.6 GB of flows); it catches a Duration
// given in the wrong unit before it exhausts memory.
const MaxGeneratedFlows = 50_000_000

// Stream constants: each generator, and each use of randomness within one,
// draws from its own PCG stream of the caller's seed, so that, for
// example, the choice of hot-spot hosts does not shift the arrivals. They
// are the generators' names in ASCII; changing one changes every workload
// made from a given seed.
const (
	streamPoisson  uint64 = 0x706f6973736f6e00 // "poisson"
	streamIncast   uint64 = 0x696e636173740000 // "incast"
	streamHotSpot  uint64 = 0x686f7473706f7400 // "hotspot"
	streamHotHosts uint64 = 0x686f74686f737473 // "hothosts"
)

// newRNG returns the generator for one stream of a seed.
func newRNG(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

// sourceStream derives the stream of the i-th source host from a
// generator's stream. It scrambles the sum (SplitMix64's finaliser) because
// PCG states that differ only in their low bits start out correlated.
func sourceStream(stream uint64, i int) uint64 {
	x := stream + uint64(i)*0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// finish sorts flows by Start, then Src, then Dst, then the order they
// were generated in (so that the order is deterministic even on full
// ties), and numbers them 0..n-1 in that order. The generation order is
// kept in ID for the sort rather than by a stable sort, which on millions
// of flows is many times slower.
func finish(flows []Flow) []Flow {
	for i := range flows {
		flows[i].ID = i
	}
	slices.SortFunc(flows, func(a, b Flow) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Src, b.Src), cmp.Compare(a.Dst, b.Dst), cmp.Compare(a.ID, b.ID))
	})
	for i := range flows {
		flows[i].ID = i
	}
	return flows
}

// OptionError is a generator option that is missing or out of range.
// Callers that take the options from elsewhere (a scenario file) use its
// parts to word the error in their own terms.
type OptionError struct {
	Generator string // "Poisson"
	Option    string // the options' field: "Load", "Senders[2]"
	Value     string // the value as the generator saw it, if it helps: "-1", "5000 ps"
	Reason    string // what is wrong: "must be in (0, 1]"
}

func (e *OptionError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("workload: %s: %s: %s", e.Generator, e.Option, e.Reason)
	}
	return fmt.Sprintf("workload: %s: %s %s: %s", e.Generator, e.Option, e.Value, e.Reason)
}

func optionErr(gen, option, value, format string, args ...any) error {
	return &OptionError{Generator: gen, Option: option, Value: value, Reason: fmt.Sprintf(format, args...)}
}

// psText prints picoseconds as the generators' options hold them.
func psText(ps int64) string { return strconv.FormatInt(ps, 10) + " ps" }

// checkHosts checks a list of host node IDs: at least `least` of them, none
// negative, none twice. gen and opt name the generator and the option.
func checkHosts(gen, opt string, hosts []int, least int) error {
	if len(hosts) < least {
		return optionErr(gen, opt, "", "%d hosts, need at least %d", len(hosts), least)
	}
	seen := make(map[int]int, len(hosts))
	for i, h := range hosts {
		if h < 0 {
			return optionErr(gen, fmt.Sprintf("%s[%d]", opt, i), "", "node ID %d is negative", h)
		}
		if j, dup := seen[h]; dup {
			return optionErr(gen, fmt.Sprintf("%s[%d]", opt, i), "", "host %d is already %s[%d]", h, opt, j)
		}
		seen[h] = i
	}
	return nil
}

func checkPriority(gen string, p int) error {
	if p < 0 || p > 7 {
		return optionErr(gen, "Priority", strconv.Itoa(p), "must be 0..7")
	}
	return nil
}

// arrivalOptions are the options that Poisson and HotSpot share.
type arrivalOptions struct {
	hosts           []int
	cdf             *CDF
	load, hostRate  float64
	start, duration int64
}

// check validates the shared options and returns the arrival rate of each
// source, in flows per picosecond.
func (o arrivalOptions) check(gen string) (float64, error) {
	if err := checkHosts(gen, "Hosts", o.hosts, 2); err != nil {
		return 0, err
	}
	if o.cdf == nil {
		return 0, optionErr(gen, "CDF", "", "missing (use LoadCDF)")
	}
	mean := o.cdf.Mean()
	if !(mean > 0) {
		return 0, optionErr(gen, "CDF", o.cdf.Name(), "mean size %g bytes: must be positive", mean)
	}
	if !(o.load > 0 && o.load <= 1) {
		return 0, optionErr(gen, "Load", fmt.Sprint(o.load), "must be in (0, 1]")
	}
	if !(o.hostRate > 0) || math.IsInf(o.hostRate, 0) {
		return 0, optionErr(gen, "HostRate", fmt.Sprint(o.hostRate), "must be a positive number of bits per second")
	}
	if o.start < 0 {
		return 0, optionErr(gen, "Start", psText(o.start), "must not be negative")
	}
	if o.duration <= 0 {
		return 0, optionErr(gen, "Duration", psText(o.duration), "must be positive")
	}
	if o.duration > math.MaxInt64-o.start {
		return 0, optionErr(gen, "Duration", psText(o.duration), "start + duration is past the largest time (106 days)")
	}
	// Flows per second = load * rate / (8 * mean), per picosecond 1e-12 of that.
	perPS := o.load * o.hostRate / (8 * mean) / 1e12
	if expected := perPS * float64(o.duration) * float64(len(o.hosts)); expected > MaxGeneratedFlows {
		return 0, optionErr(gen, "Duration", fmt.Sprintf("%s (%g s)", psText(o.duration), float64(o.duration)/1e12),
			"about %.3g flows expected, more than the %d a run may have", expected, MaxGeneratedFlows)
	}
	return perPS, nil
}

// arrivals runs one Poisson process per source host, in the order of
// o.hosts, each on its own stream derived from seed and stream. For every
// arrival in [start, start+duration) it draws the size from the CDF and
// calls emit, which picks the destination with the same generator. The
// draws per arrival are: gap, size, then whatever emit draws.
func (o arrivalOptions) arrivals(perPS float64, seed, stream uint64, emit func(rng *rand.Rand, src int, start, size int64)) {
	meanGap := 1 / perPS // picoseconds
	end := float64(o.duration)
	for i := range o.hosts {
		rng := newRNG(seed, sourceStream(stream, i))
		t := 0.0 // picoseconds after o.start, exact as a float64 below 2^53 ps (2.5 hours)
		for {
			t += rng.ExpFloat64() * meanGap
			if t >= end {
				break
			}
			// Truncation keeps the start inside [start, start+duration);
			// the second test matters only beyond 2^53 ps, where
			// float64(o.duration) may round up.
			offset := int64(t)
			if offset >= o.duration {
				break
			}
			emit(rng, i, o.start+offset, o.cdf.Sample(rng))
		}
	}
}

// otherIndex returns a uniformly random index in [lo, hi) other than self,
// which must lie in that range; hi-lo must be at least 2.
func otherIndex(rng *rand.Rand, lo, hi, self int) int {
	j := lo + rng.IntN(hi-lo-1)
	if j >= self {
		j++
	}
	return j
}
