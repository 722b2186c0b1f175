package report

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// FCTSlowdown is one flow of an fct.txt: its size and its FCT slowdown,
// fct_ns / ideal_ns as the file gives them (not floored at 1, as the ns-3
// simulator's scripts take it).
type FCTSlowdown struct {
	Size     int64
	Slowdown float64
}

// ReadNS3FCT reads an fct.txt in the ns-3 RDMA simulator's format, the
// one WriteNS3FCT writes: "sip dip sport dport size start_ns fct_ns
// ideal_ns" per line. A malformed line is an error naming name, the line
// and the field.
func ReadNS3FCT(r io.Reader, name string) ([]FCTSlowdown, error) {
	var out []FCTSlowdown
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 8 {
			return nil, fmt.Errorf("%s:%d: %d fields, want 8 (sip dip sport dport size start_ns fct_ns ideal_ns)", name, line, len(f))
		}
		var v [3]int64
		for i, col := range []struct {
			idx  int
			name string
		}{{4, "size"}, {6, "fct_ns"}, {7, "ideal_ns"}} {
			n, err := strconv.ParseInt(f[col.idx], 10, 64)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("%s:%d: %s %q: want a positive whole number", name, line, col.name, f[col.idx])
			}
			v[i] = n
		}
		out = append(out, FCTSlowdown{Size: v[0], Slowdown: float64(v[1]) / float64(v[2])})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// SizeBucket is a range of flow sizes, From inclusive, To exclusive (0:
// no upper end).
type SizeBucket struct{ From, To int64 }

func (b SizeBucket) contains(size int64) bool { return size >= b.From && (b.To == 0 || size < b.To) }

// String names the bucket: "all", "< 10KB", "10KB-100KB", ">= 1MB".
func (b SizeBucket) String() string {
	switch {
	case b.From == 0 && b.To == 0:
		return "all"
	case b.From == 0:
		return "< " + sizeText(b.To)
	case b.To == 0:
		return ">= " + sizeText(b.From)
	}
	return sizeText(b.From) + "-" + sizeText(b.To)
}

func sizeText(n int64) string {
	for _, u := range []struct {
		div  int64
		name string
	}{{1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}} {
		if n >= u.div && n%u.div == 0 {
			return strconv.FormatInt(n/u.div, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// Buckets turns bounds (ascending sizes) into buckets: below the first,
// between each two, from the last on.
func Buckets(bounds []int64) []SizeBucket {
	var bs []SizeBucket
	from := int64(0)
	for _, b := range bounds {
		bs = append(bs, SizeBucket{from, b})
		from = b
	}
	return append(bs, SizeBucket{From: from})
}

// Percentiles are the slowdowns at the 50th, 95th and 99th percentiles:
// the sorted slowdowns at index floor(p n), the ns-3 simulator's
// scripts' convention.
type Percentiles [3]float64

// SlowdownPercentiles of the flows in bucket b, and how many there are.
func SlowdownPercentiles(flows []FCTSlowdown, b SizeBucket) (Percentiles, int) {
	var s []float64
	for _, f := range flows {
		if b.contains(f.Size) {
			s = append(s, f.Slowdown)
		}
	}
	var p Percentiles
	if len(s) == 0 {
		return p, 0
	}
	sort.Float64s(s)
	for i, q := range []float64{0.5, 0.95, 0.99} {
		p[i] = s[min(len(s)-1, int(q*float64(len(s))))]
	}
	return p, len(s)
}

// FCTComparison is one bucket of two runs' slowdowns side by side.
type FCTComparison struct {
	Bucket string      `json:"bucket"`
	FlowsA int         `json:"flows_a"`
	FlowsB int         `json:"flows_b"`
	A      Percentiles `json:"a_p50_p95_p99"`
	B      Percentiles `json:"b_p50_p95_p99"`
	// Diff is A's percentiles over B's, less 1.
	Diff [3]float64 `json:"a_over_b_minus_1"`
}

// CompareFCT sets the slowdown percentiles of runs a and b side by side,
// all flows first, then each bucket.
func CompareFCT(a, b []FCTSlowdown, buckets []SizeBucket) []FCTComparison {
	var out []FCTComparison
	for _, bk := range append([]SizeBucket{{}}, buckets...) {
		pa, na := SlowdownPercentiles(a, bk)
		pb, nb := SlowdownPercentiles(b, bk)
		c := FCTComparison{Bucket: bk.String(), FlowsA: na, FlowsB: nb, A: pa, B: pb}
		for i := range c.Diff {
			if pb[i] > 0 {
				c.Diff[i] = pa[i]/pb[i] - 1
			}
		}
		out = append(out, c)
	}
	return out
}
