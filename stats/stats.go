// Package stats holds the statistics p4rcm quotes its comparisons with: a
// Student-t confidence interval for the mean of a few independent runs,
// and a paired t test of two schemes run on the same seeds (or, emulated,
// in the same repetition).
//
// Why Student t: a study has few runs per scheme (3 to 10 seeds is
// usual), each run's metric (its mean FCT of mice, say) is an average of
// many flows and so close to normal, and the runs' spread is unknown and
// estimated from the same runs. The normal quantile (1.96) would then give
// intervals too narrow by a factor of 2.2 at 3 runs and 1.4 at 5; t
// accounts for the estimated spread exactly under normality and is
// robust to moderate departures from it. A bootstrap needs tens of
// samples to say anything and is badly biased at 3 to 5.
//
// Why paired: two schemes run on the same seed see the same flows
// (sizes, sources, destinations, start times), so most of a seed's
// effect on the metric is common to both. The differences of a pair
// remove it, and their spread is far smaller than either scheme's own
// across seeds. A two-sample test would count the workload's variation
// as noise and miss differences the paired test finds.
package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// DefaultLevel is the confidence level of the intervals p4rcm reports.
const DefaultLevel = 0.95

// Interval is the mean of N samples and, when N >= 2, its confidence
// interval [Lo, Hi] at the level it was computed for. With fewer than two
// samples the spread is unknown: SD, Lo and Hi are NaN and Defined is
// false, and nothing should print an interval for it.
type Interval struct {
	N    int
	Mean float64
	// SD is the sample standard deviation (n-1 in the denominator).
	SD     float64
	Lo, Hi float64
}

// Defined tells whether the interval could be computed: at least two
// samples.
func (iv Interval) Defined() bool { return iv.N >= 2 }

// HalfWidth is half the interval's width (the "±" of a mean), NaN when
// undefined.
func (iv Interval) HalfWidth() float64 { return (iv.Hi - iv.Lo) / 2 }

// MeanInterval is the mean of xs with its Student-t confidence interval at
// level (0 < level < 1): mean ± t(1-(1-level)/2, n-1) · sd / √n. It
// panics on a level outside (0, 1), a caller's mistake.
func MeanInterval(xs []float64, level float64) Interval {
	checkLevel(level)
	iv := Interval{N: len(xs), Mean: math.NaN(), SD: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	if iv.N == 0 {
		return iv
	}
	iv.Mean = mean(xs)
	if iv.N < 2 {
		return iv
	}
	iv.SD = sd(xs, iv.Mean)
	h := TQuantile(level, iv.N-1) * iv.SD / math.Sqrt(float64(iv.N))
	iv.Lo, iv.Hi = iv.Mean-h, iv.Mean+h
	return iv
}

// TQuantile is the two-sided critical value of Student's t with df
// degrees of freedom at level: the t with P(|T| <= t) = level.
func TQuantile(level float64, df int) float64 {
	checkLevel(level)
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(1 - (1-level)/2)
}

// Direction says which way a metric is better.
type Direction int

const (
	// LowerIsBetter: times, slowdowns, queue lengths.
	LowerIsBetter Direction = iota
	// HigherIsBetter: goodput, throughput.
	HigherIsBetter
)

// Verdict is what a paired comparison concludes.
type Verdict string

const (
	// Better and Worse: the interval of the difference excludes zero.
	Better Verdict = "better"
	Worse  Verdict = "worse"
	// Same: the interval holds zero; the data cannot tell the two apart
	// at the level asked (which is not to say they are equal).
	Same Verdict = "no significant difference"
	// TooFew: fewer than two pairs, no test is possible.
	TooFew Verdict = "too few runs"
)

// Paired is a paired comparison of a scheme against a baseline on the
// same seeds.
type Paired struct {
	// Diff is the mean of the per-pair differences x - base and its
	// confidence interval.
	Diff Interval
	// BaseMean is the baseline's mean over the same pairs, the scale of
	// the relative change.
	BaseMean float64
	// T is the t statistic of the mean difference and P its two-sided
	// p-value; NaN with fewer than two pairs. Pairs that all differ by
	// the same non-zero amount give an infinite T and P = 0; pairs all
	// equal give T = 0 and P = 1.
	T, P    float64
	Verdict Verdict
}

// Change is the mean difference relative to the baseline's mean, in
// percent, with its interval scaled alike: [lo, hi] of the difference
// over BaseMean. The relative figures are NaN when BaseMean is zero.
// The interval treats the baseline's mean as known; the verdict, which
// comes from the difference itself, does not depend on that.
func (p Paired) Change() (pct, lo, hi float64) {
	if p.BaseMean == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	s := 100 / math.Abs(p.BaseMean)
	return p.Diff.Mean * s, p.Diff.Lo * s, p.Diff.Hi * s
}

// roundingNoise is the relative size of a difference PairedT takes for
// floating-point rounding, not for a difference: about 4,500 times a
// float64's epsilon, far below any effect a study can measure.
const roundingNoise = 1e-12

// PairedT compares x with base pair by pair (x[i] with base[i], both of
// the same seed) by the paired t test at level: the interval of the mean
// difference, and the verdict Better or Worse (by dir) when it excludes
// zero, Same when it holds zero, TooFew with fewer than two pairs. It
// panics when the slices differ in length, a caller's mistake.
func PairedT(x, base []float64, level float64, dir Direction) Paired {
	if len(x) != len(base) {
		panic("stats: PairedT of slices of different lengths")
	}
	d := make([]float64, len(x))
	for i := range x {
		d[i] = x[i] - base[i]
		// Equal outcomes reached by different sums differ in the last
		// bits; such a difference is none, or two equal schemes would be
		// told apart by rounding alone.
		if math.Abs(d[i]) <= roundingNoise*math.Max(math.Abs(x[i]), math.Abs(base[i])) {
			d[i] = 0
		}
	}
	p := Paired{Diff: MeanInterval(d, level), BaseMean: math.NaN(), T: math.NaN(), P: math.NaN(), Verdict: TooFew}
	if len(base) > 0 {
		p.BaseMean = mean(base)
	}
	if !p.Diff.Defined() {
		return p
	}
	n := float64(p.Diff.N)
	switch {
	case p.Diff.SD == 0 && p.Diff.Mean == 0:
		p.T, p.P = 0, 1
	case p.Diff.SD == 0:
		p.T, p.P = math.Copysign(math.Inf(1), p.Diff.Mean), 0
	default:
		p.T = p.Diff.Mean / (p.Diff.SD / math.Sqrt(n))
		p.P = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Survival(math.Abs(p.T))
	}
	switch {
	case p.Diff.Lo > 0 || p.Diff.Hi < 0:
		lower := p.Diff.Hi < 0
		if lower == (dir == LowerIsBetter) {
			p.Verdict = Better
		} else {
			p.Verdict = Worse
		}
	default:
		p.Verdict = Same
	}
	return p
}

func checkLevel(level float64) {
	if !(level > 0 && level < 1) {
		panic("stats: confidence level outside (0, 1)")
	}
}

// mean sums in order, so that equal inputs give equal bits. Samples that
// are all the same value have that value as their mean, exactly (a sum of
// n copies divided by n need not round back to it).
func mean(xs []float64) float64 {
	if allEqual(xs) {
		return xs[0]
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// sd is the sample standard deviation about m: zero for samples that are
// all the same value.
func sd(xs []float64, m float64) float64 {
	if allEqual(xs) {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(xs)-1))
}

func allEqual(xs []float64) bool {
	if len(xs) == 0 {
		return false
	}
	for _, x := range xs[1:] {
		if x != xs[0] {
			return false
		}
	}
	return true
}
