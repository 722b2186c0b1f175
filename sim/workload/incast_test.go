package workload

import (
	"math"
	"slices"
	"testing"
)

func TestIncast(t *testing.T) {
	tests := []struct {
		name string
		o    IncastOptions
	}{
		{"no skew", IncastOptions{Senders: hostRange(1, 32), Receiver: 0, Size: 64 << 10, Start: 5e6}},
		{"skew", IncastOptions{Senders: hostRange(10, 1000), Receiver: 3, Size: 1000, Start: 1e9, Skew: 1e6, Seed: 9}},
		{"skew 1 ps", IncastOptions{Senders: hostRange(10, 200), Receiver: 3, Size: 1000, Skew: 1, Seed: 2}},
		{"sizes and class", IncastOptions{Senders: []int{7, 5, 6}, Receiver: 1, Sizes: []int64{700, 500, 600}, Skew: 10e6, Class: "burst", Priority: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.o
			flows, err := Incast(o)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Incast(o)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(flows, again) {
				t.Fatal("two runs with the same options differ")
			}
			if len(flows) != len(o.Senders) {
				t.Fatalf("%d flows for %d senders", len(flows), len(o.Senders))
			}
			checkSortedIDs(t, flows)
			wantClass := o.Class
			if wantClass == "" {
				wantClass = "incast"
			}
			size := map[int]int64{}
			for i, s := range o.Senders {
				size[s] = o.Size
				if o.Sizes != nil {
					size[s] = o.Sizes[i]
				}
			}
			lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
			for _, f := range flows {
				if f.Dst != o.Receiver || f.Size != size[f.Src] || f.Class != wantClass || f.Priority != o.Priority {
					t.Errorf("bad flow %+v", f)
				}
				delete(size, f.Src)
				lo, hi = min(lo, f.Start), max(hi, f.Start)
			}
			if len(size) != 0 {
				t.Errorf("senders without a flow: %v", size)
			}
			if lo < o.Start || hi > o.Start+o.Skew {
				t.Errorf("starts in [%d, %d], want within [%d, %d]", lo, hi, o.Start, o.Start+o.Skew)
			}
			// With many senders the starts should cover the skew
			// window: the chance that 200 uniform draws all miss one end
			// of even a 2-value window is 2^-199.
			if len(o.Senders) >= 200 && (lo > o.Start+o.Skew/10 || hi < o.Start+o.Skew-o.Skew/10) {
				t.Errorf("starts in [%d, %d] do not spread over [%d, %d]", lo, hi, o.Start, o.Start+o.Skew)
			}
		})
	}
}

func TestIncastSkewDependsOnSeed(t *testing.T) {
	o := IncastOptions{Senders: hostRange(1, 16), Receiver: 0, Size: 1000, Skew: 1e9, Seed: 1}
	a, err := Incast(o)
	if err != nil {
		t.Fatal(err)
	}
	o.Seed = 2
	b, err := Incast(o)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(a, b) {
		t.Fatal("seeds 1 and 2 give the same starts")
	}
}

func TestIncastErrors(t *testing.T) {
	good := func() IncastOptions {
		return IncastOptions{Senders: []int{1, 2, 3}, Receiver: 0, Size: 1000}
	}
	tests := []struct {
		name   string
		modify func(*IncastOptions)
		want   []string
	}{
		{"no senders", func(o *IncastOptions) { o.Senders = nil }, []string{"Senders", "0 hosts"}},
		{"duplicate sender", func(o *IncastOptions) { o.Senders = []int{1, 2, 2} }, []string{"Senders[2]", "already Senders[1]"}},
		{"receiver sends", func(o *IncastOptions) { o.Receiver = 2 }, []string{"Senders[1]", "is the Receiver"}},
		{"negative receiver", func(o *IncastOptions) { o.Receiver = -1 }, []string{"Receiver -1"}},
		{"no size", func(o *IncastOptions) { o.Size = 0 }, []string{"Size 0", "must be positive"}},
		{"both sizes", func(o *IncastOptions) { o.Sizes = []int64{1, 2, 3} }, []string{"Size 1000: Size and Sizes both set"}},
		{"sizes count", func(o *IncastOptions) { o.Size, o.Sizes = 0, []int64{1, 2} }, []string{"Sizes", "2 sizes for 3 senders"}},
		{"size not positive", func(o *IncastOptions) { o.Size, o.Sizes = 0, []int64{1, 0, 3} }, []string{"Sizes[1] 0"}},
		{"start", func(o *IncastOptions) { o.Start = -5 }, []string{"Start -5 ps"}},
		{"skew", func(o *IncastOptions) { o.Skew = -1 }, []string{"Skew -1 ps"}},
		{"skew overflow", func(o *IncastOptions) { o.Start, o.Skew = 10, math.MaxInt64-10 }, []string{"Skew", "past the largest time"}},
		{"priority", func(o *IncastOptions) { o.Priority = -1 }, []string{"Priority -1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := good()
			tt.modify(&o)
			_, err := Incast(o)
			wantErr(t, err, append([]string{"workload: Incast: "}, tt.want...)...)
		})
	}
	if _, err := Incast(good()); err != nil {
		t.Fatalf("the base options fail: %v", err)
	}
}
