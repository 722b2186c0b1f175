package workload

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func mustCDF(t *testing.T, text string, scale Scale) *CDF {
	t.Helper()
	c, err := ParseCDF(strings.NewReader(text), "test.txt", scale)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// secondMoment is E[X^2] of the piecewise-linear distribution: on a segment
// the size is uniform on [a, b], whose E[X^2] is (a^2+ab+b^2)/3.
func secondMoment(c *CDF) float64 {
	p := c.Points()
	s := p[0].Cum * p[0].Size * p[0].Size
	for i := 1; i < len(p); i++ {
		a, b := p[i-1].Size, p[i].Size
		s += (p[i].Cum - p[i-1].Cum) * (a*a + a*b + b*b) / 3
	}
	return s
}

func TestBuiltinCDFs(t *testing.T) {
	want := []string{"websearch", "fbhadoop", "datamining", "alistorage", "googlerpc"}
	if got := BuiltinCDFs(); !slices.Equal(got, want) {
		t.Fatalf("BuiltinCDFs() = %v, want %v", got, want)
	}
	tests := []struct {
		name   string
		points int
		scale  Scale
		max    float64
	}{
		{"websearch", 12, Percent, 30e6},
		{"fbhadoop", 20, Percent, 10e6},
		{"datamining", 13, Fraction, 1e9},
		{"alistorage", 9, Percent, 2e6},
		{"googlerpc", 843, Percent, 15158197},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, spec := range []string{tt.name, strings.ToUpper(tt.name)} {
				c, err := LoadCDF(spec)
				if err != nil {
					t.Fatalf("LoadCDF(%q): %v", spec, err)
				}
				if c.Name() != tt.name {
					t.Errorf("Name() = %q, want %q", c.Name(), tt.name)
				}
				p := c.Points()
				if len(p) != tt.points {
					t.Errorf("%d points, want %d", len(p), tt.points)
				}
				if c.Scale() != tt.scale {
					t.Errorf("Scale() = %v, want %v", c.Scale(), tt.scale)
				}
				if last := p[len(p)-1]; last.Cum != 1 || last.Size != tt.max {
					t.Errorf("last point %+v, want {%g 1}", last, tt.max)
				}
			}
			if DescribeCDF(tt.name) == "" {
				t.Errorf("DescribeCDF(%q) is empty", tt.name)
			}
		})
	}
}

// TestBuiltinMeans checks the exact means against the figures of the data
// README (within 2%) and, for web search and data mining, against sums
// worked out by hand from the points (to a part in 10^9).
func TestBuiltinMeans(t *testing.T) {
	tests := []struct {
		name   string
		want   float64
		relTol float64
	}{
		{"websearch", 1.7e6, 0.02},
		{"websearch", 1711250, 1e-9}, // 750+750+2500+4000+8450+9800+60000+150000+350000+525000+600000
		{"fbhadoop", 120e3, 0.02},
		{"datamining", 12658198.6, 1e-9},
		{"alistorage", 41e3, 0.02},
		{"googlerpc", 2.9e3, 0.02},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := LoadCDF(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Mean(); math.Abs(got-tt.want) > tt.relTol*tt.want {
				t.Errorf("Mean() = %.1f, want %.1f within %g", got, tt.want, tt.relTol)
			}
		})
	}
}

// TestSampleMatchesCDF draws from every built-in and compares the sample
// mean with Mean (within 2%) and the share of draws at or below a few
// quantiles with their probability. It draws at least 200k samples, and
// more where the tail is so heavy that 2% would be less than 4 standard
// errors of the sample mean (GoogleRPC needs about 20 million).
func TestSampleMatchesCDF(t *testing.T) {
	for i, name := range BuiltinCDFs() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := LoadCDF(name)
			if err != nil {
				t.Fatal(err)
			}
			mean := c.Mean()
			sd := math.Sqrt(secondMoment(c) - mean*mean)
			n := max(200_000, int(math.Ceil(math.Pow(4*sd/(0.02*mean), 2))))
			if testing.Short() && n > 2_000_000 {
				t.Skipf("%d draws needed; skipped in -short mode", n)
			}
			probs := []float64{0.1, 0.5, 0.9}
			qs := make([]float64, len(probs))
			below := make([]int, len(probs))
			for j, p := range probs {
				qs[j] = c.Quantile(p)
			}
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			sum := 0.0
			for range n {
				x := c.Sample(rng)
				if x < 1 {
					t.Fatalf("Sample() = %d, want >= 1", x)
				}
				sum += float64(x)
				for j, q := range qs {
					if float64(x) <= math.Round(q) {
						below[j]++
					}
				}
			}
			got := sum / float64(n)
			if math.Abs(got-mean) > 0.02*mean {
				t.Errorf("sample mean of %d draws %.1f, Mean() %.1f: off by more than 2%%", n, got, mean)
			}
			t.Logf("Mean %.1f bytes, sample mean of %d draws %.1f (%+.2f%%)", mean, n, got, 100*(got-mean)/mean)
			for j, p := range probs {
				// A draw is at most round(q) bytes if its unrounded
				// value is below round(q)+0.5.
				want := cdfAt(c, math.Round(qs[j])+0.5)
				if share := float64(below[j]) / float64(n); math.Abs(share-want) > 0.005 {
					t.Errorf("%.4f of draws <= Quantile(%g) = %g, want %.4f", share, p, qs[j], want)
				}
			}
		})
	}
}

// cdfAt is F(x), the probability of a size at most x, worked out from the
// points independently of Quantile.
func cdfAt(c *CDF, x float64) float64 {
	p := c.Points()
	j := -1 // the last point at or below x
	for i := range p {
		if p[i].Size <= x {
			j = i
		}
	}
	switch {
	case j < 0:
		return 0
	case j == len(p)-1:
		return 1
	}
	a, b := p[j], p[j+1]
	return a.Cum + (b.Cum-a.Cum)*(x-a.Size)/(b.Size-a.Size)
}

// TestPercentAndFractionAgree parses web search and data mining on both
// scales: the normalised points and hence the samples must be identical.
func TestPercentAndFractionAgree(t *testing.T) {
	tests := []struct {
		name              string
		percent, fraction string
	}{
		{
			"websearch",
			"0 0\n10000 15\n20000 20\n30000 30\n50000 40\n80000 53\n200000 60\n1000000 70\n2000000 80\n5000000 90\n10000000 97\n30000000 100\n",
			"0 0\n10000 0.15\n20000 0.2\n30000 0.3\n50000 0.4\n80000 0.53\n200000 0.6\n1000000 0.7\n2000000 0.8\n5000000 0.9\n10000000 0.97\n30000000 1\n",
		},
		{
			"datamining",
			"0 0\n180 10\n216 20\n560 30\n900 40\n1100 50\n1870 60\n3160 70\n10000 80\n400000 90\n3160000 95\n100000000 98\n1000000000 100\n",
			"0 0\n180 0.1\n216 0.2\n560 0.3\n900 0.4\n1100 0.5\n1870 0.6\n3160 0.7\n10000 0.8\n400000 0.9\n3160000 0.95\n100000000 0.98\n1000000000 1\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			builtin, err := LoadCDF(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			pc := mustCDF(t, tt.percent, Auto)
			fc := mustCDF(t, tt.fraction, Auto)
			if pc.Scale() != Percent || fc.Scale() != Fraction {
				t.Fatalf("scales %v and %v, want percent and fraction", pc.Scale(), fc.Scale())
			}
			if !slices.Equal(pc.Points(), fc.Points()) || !slices.Equal(pc.Points(), builtin.Points()) {
				t.Fatalf("points differ:\npercent  %v\nfraction %v\nbuilt-in %v", pc.Points(), fc.Points(), builtin.Points())
			}
			rp := rand.New(rand.NewPCG(1, 2))
			rf := rand.New(rand.NewPCG(1, 2))
			for i := range 100_000 {
				if a, b := pc.Sample(rp), fc.Sample(rf); a != b {
					t.Fatalf("draw %d: percent %d, fraction %d", i, a, b)
				}
			}
		})
	}
}

func TestQuantileAndMean(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		mean  float64
		quant map[float64]float64
	}{
		{"two segments", "0 0\n100 50\n300 100\n", 0.5*50 + 0.5*200,
			map[float64]float64{0: 0, 0.25: 50, 0.5: 100, 0.75: 200, 1: 300, -1: 0, 2: 300}},
		{"mass at first point", "100 20\n200 100\n", 0.2*100 + 0.8*150,
			map[float64]float64{0: 100, 0.1: 100, 0.2: 100, 0.6: 150, 1: 200}},
		{"step", "# comment\n0 0\n\n10 50 # trailing comment\n10 80\n20 100\n", 0.5*5 + 0.3*10 + 0.2*15,
			map[float64]float64{0.25: 5, 0.6: 10, 0.8: 10, 0.9: 15}},
		{"gap", "0 0\n10 0.5\n1000 0.5\n1010 1\n", 0.5*5 + 0.5*1005,
			map[float64]float64{0.5: 10, 0.75: 1005}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustCDF(t, tt.text, Auto)
			if got := c.Mean(); math.Abs(got-tt.mean) > 1e-9*tt.mean {
				t.Errorf("Mean() = %g, want %g", got, tt.mean)
			}
			for p, want := range tt.quant {
				if got := c.Quantile(p); math.Abs(got-want) > 1e-9 {
					t.Errorf("Quantile(%g) = %g, want %g", p, got, want)
				}
			}
		})
	}
}

func TestSampleAtLeastOneByte(t *testing.T) {
	c := mustCDF(t, "0 0\n0.4 100\n", Auto)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		if got := c.Sample(rng); got != 1 {
			t.Fatalf("Sample() = %d, want 1", got)
		}
	}
}

func TestParseCDFErrors(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		scale Scale
		want  string
	}{
		{"not a number", "0 0\n10 20\n20 40\n30 1.5x\n40 100\n", Auto,
			`test.txt:4: cumulative "1.5x": not a number`},
		{"size not a number", "0 0\nten 100\n", Auto, `test.txt:2: size "ten": not a number`},
		{"size infinite", "0 0\ninf 100\n", Auto, `test.txt:2: size "inf": not a finite number`},
		{"cumulative out of range", "0 0\n10 1e999\n", Auto, `test.txt:2: cumulative "1e999": out of range`},
		{"sizes decrease", "0 0\n100 10\n200 20\n300 30\n400 40\n\n300 50\n500 100\n", Auto,
			`test.txt:7: size 300 < previous size 400: sizes must not decrease`},
		{"cumulative decreases", "0 0\n100 30\n200 20\n300 100\n", Auto,
			`test.txt:3: cumulative 20 < previous cumulative 30: cumulative values must not decrease`},
		{"three fields", "0 0\n100 50 7\n200 100\n", Auto, `test.txt:2: want 2 fields "size_bytes cumulative", got 3`},
		{"one field", "0 0\n100\n", Auto, `test.txt:2: want 2 fields "size_bytes cumulative", got 1`},
		{"negative size", "-5 0\n100 100\n", Auto, `test.txt:1: size -5: must not be negative`},
		{"negative cumulative", "0 -1\n100 100\n", Auto, `test.txt:1: cumulative -1: must not be negative`},
		{"huge size", "0 0\n1e20 100\n", Auto, `test.txt:2: size 1e20: larger than 9007199254740992 bytes`},
		{"one point", "# only\n100 100\n", Auto, `test.txt: 1 points: a CDF needs at least 2`},
		{"empty", "", Percent, `test.txt: 0 points: a CDF needs at least 2`},
		{"auto undecidable", "0 0\n100 50\n200 99.9\n", Auto,
			`test.txt:3: last cumulative 99.9: a CDF must end at 100 (percent) or at 1 (fraction)`},
		{"percent file as fraction", "0 0\n100 15\n200 100\n", Fraction,
			`test.txt:2: cumulative 15 > 1: outside the fraction scale 0..1`},
		{"percent not ending at 100", "0 0\n100 0.5\n200 1\n", Percent,
			`test.txt:3: last cumulative 1 is not 100: a CDF on the percent scale must end at 100`},
		{"fraction file as fraction", "0 0\n100 0.5\n200 1\n", Fraction, ""},
		{"above the top", "0 0\n100 150\n200 150\n", Percent,
			`test.txt:2: cumulative 150 > 100: outside the percent scale 0..100`},
		{"bad scale", "0 0\n1 1\n", Scale(9), `test.txt: unknown scale Scale(9): use Auto, Percent or Fraction`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseCDF(strings.NewReader(tt.text), "test.txt", tt.scale)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.want != "" && err == nil:
				t.Fatalf("no error, want %q", tt.want)
			case tt.want != "" && err.Error() != tt.want:
				t.Fatalf("error\n got %q\nwant %q", err, tt.want)
			}
		})
	}
}

func TestLoadCDFFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "mine.txt")
	if err := os.WriteFile(good, []byte("0 0\n1000 0.5\n3000 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadCDF(good)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != good || c.Mean() != 1250 {
		t.Errorf("Name() %q, Mean() %g; want %q, 1250", c.Name(), c.Mean(), good)
	}

	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("0 0\n1000 x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCDF(bad); err == nil || err.Error() != bad+`:2: cumulative "x": not a number` {
		t.Errorf("LoadCDF(bad file): %v", err)
	}

	_, err = LoadCDF("websurch")
	if err == nil {
		t.Fatal("LoadCDF(websurch): no error")
	}
	for _, want := range append([]string{`"websurch"`}, BuiltinCDFs()...) {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	if _, err := BuiltinCDF(good); err == nil || !strings.Contains(err.Error(), "websearch, fbhadoop") {
		t.Errorf("BuiltinCDF(file path): %v", err)
	}
}
