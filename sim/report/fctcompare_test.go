package report

import (
	"strconv"
	"strings"
	"testing"
)

func TestReadNS3FCTAndCompare(t *testing.T) {
	// Ten flows of 1 KB with slowdowns 1..10, two of 2 MB with 3 and 5.
	var a strings.Builder
	for i := 1; i <= 10; i++ {
		a.WriteString("0b000001 0b000101 10000 100 1000 2000000000 " + strconv.Itoa(1000*i) + " 1000\n")
	}
	a.WriteString("\n0b000001 0b000101 10000 100 2000000 2000000000 3000 1000\n")
	a.WriteString("0b000001 0b000101 10000 100 2000000 2000000000 5000 1000\n")
	flows, err := ReadNS3FCT(strings.NewReader(a.String()), "a.txt")
	if err != nil || len(flows) != 12 {
		t.Fatalf("%d flows, %v", len(flows), err)
	}
	// floor(p n): n = 10 gives indexes 5, 9, 9 of 1..10.
	p, n := SlowdownPercentiles(flows, SizeBucket{To: 10_000})
	if n != 10 || p != (Percentiles{6, 10, 10}) {
		t.Errorf("small flows: %v of %d", p, n)
	}
	half := make([]FCTSlowdown, len(flows))
	for i, f := range flows {
		half[i] = FCTSlowdown{f.Size, f.Slowdown / 2}
	}
	cmp := CompareFCT(flows, half, Buckets([]int64{10_000, 1_000_000}))
	if len(cmp) != 4 || cmp[0].Bucket != "all" || cmp[1].Bucket != "< 10KB" || cmp[2].Bucket != "10KB-1MB" || cmp[3].Bucket != ">= 1MB" {
		t.Fatalf("buckets %+v", cmp)
	}
	if cmp[1].Diff != [3]float64{1, 1, 1} || cmp[2].FlowsA != 0 || cmp[3].FlowsB != 2 {
		t.Errorf("comparison %+v", cmp)
	}
	for _, bad := range []struct{ text, want string }{
		{"0b000001 0b000101 10000 100 1000 2000000000 1000\n", "a.txt:1: 7 fields, want 8"},
		{"\n0b000001 0b000101 10000 100 1000 2000000000 x 1000\n", "a.txt:2: fct_ns \"x\": want a positive whole number"},
		{"0b000001 0b000101 10000 100 1000 2000000000 1000 0\n", "a.txt:1: ideal_ns \"0\""},
	} {
		if _, err := ReadNS3FCT(strings.NewReader(bad.text), "a.txt"); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want %q", bad.text, err, bad.want)
		}
	}
}
