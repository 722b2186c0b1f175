package topo

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in      string
		want    float64
		wantErr string
	}{
		{"100Gbps", 100e9, ""},
		{"400gbps", 400e9, ""},
		{"40GBPS", 40e9, ""},
		{"25Gb/s", 25e9, ""},
		{"10G", 10e9, ""},
		{"2.5Gbps", 2.5e9, ""},
		{"0.1Gbps", 1e8, ""},
		{".5Mbps", 5e5, ""},
		{"1Tbps", 1e12, ""},
		{"800Kbps", 800e3, ""},
		{"9600bps", 9600, ""},
		{"1gbit/s", 1e9, ""},
		{"100Gbs", 0, `unknown unit "Gbs"`},
		{"100", 0, "missing unit"},
		{"100GBps", 0, "bytes per second"},
		{"100B/s", 0, "bytes per second"},
		{"100Pbps", 0, `unknown unit "Pbps"`},
		{"Gbps", 0, "not a number"},
		{"", 0, "empty"},
		{"-1Gbps", 0, "not a number"},
		{"1e9bps", 0, `unknown unit "e9bps"`},
		{"1.2.3Gbps", 0, `malformed number "1.2.3"`},
		{"0Gbps", 0, "must be positive"},
		{"0.000Gbps", 0, "must be positive"},
		{strings.Repeat("9", 400) + "Tbps", 0, "more than 64 characters"},
		{strings.Repeat("9", 60) + "." + "Tbps", 1e72, ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseRate(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(err.Error(), "rate ") {
					t.Fatalf("ParseRate(%q) = %g, %v; want error containing %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseRate(%q) = %g, %v; want %g", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestFormatRate(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{100e9, "100Gbps"},
		{400e9, "400Gbps"},
		{40e9, "40Gbps"},
		{2.5e9, "2.5Gbps"},
		{1e12, "1Tbps"},
		{1.6e12, "1.6Tbps"},
		{800e6, "800Mbps"},
		{999e6, "999Mbps"},
		{1500, "1.5Kbps"},
		{999, "999bps"},
		{0.5, "0.5bps"},
		{0.00125, "0.00125bps"},
		{1e20, "100000000Tbps"},
		{100e9 / 3, "33.333333333333332Gbps"},
		{0, "0bps"},
	}
	for _, tc := range tests {
		if got := FormatRate(tc.in); got != tc.want {
			t.Errorf("FormatRate(%g) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestRateRoundTrip checks ParseRate(FormatRate(r)) == r bit for bit over
// many magnitudes, including rates no one writes by hand.
func TestRateRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		r := math.Exp(rng.Float64()*70 - 20) // about 2e-9 .. 2.5e21
		if i%2 == 0 {
			r = math.Round(r)
		}
		if r == 0 {
			continue
		}
		s := FormatRate(r)
		back, err := ParseRate(s)
		if err != nil || back != r {
			t.Fatalf("FormatRate(%v) = %q, parsed back as %v, %v", r, s, back, err)
		}
	}
}

func TestParseDelay(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"1000ns", 1_000_000, ""},
		{"1us", 1_000_000, ""},
		{"1µs", 1_000_000, ""},
		{"1US", 1_000_000, ""},
		{"0ns", 0, ""},
		{"0.5us", 500_000, ""},
		{"1.5ns", 1500, ""},
		{"2ms", 2_000_000_000, ""},
		{"1s", 1_000_000_000_000, ""},
		{"0.000000000001s", 1, ""},
		{"250ps", 250, ""},
		{"1.2345ns", 1235, ""}, // 1234.5 ps rounds half up
		{"1.2344ns", 1234, ""},
		{"0.4ps", 0, ""},
		{".5ps", 1, ""},
		{"0.05ps", 0, ""},
		{"9223372036854775807ps", math.MaxInt64, ""},
		{"9223372036854775807.5ps", 0, "too large"},
		{"9223372036854775808ps", 0, "too large"},
		{"10000000s", 0, "too large"},
		{"1000", 0, "missing unit"},
		{"1000nS", 1_000_000, ""},
		{"1000msec", 0, `unknown unit "msec"`},
		{"-1ns", 0, "not a number"},
		{"1..0ns", 0, "malformed number"},
		{"ns", 0, "not a number"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseDelay(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(err.Error(), "delay ") {
					t.Fatalf("ParseDelay(%q) = %d, %v; want error containing %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseDelay(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestFormatDelay(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{
		{1_000_000, "1000ns"},
		{0, "0ns"},
		{1500, "1500ps"},
		{1, "1ps"},
		{math.MaxInt64, "9223372036854775807ps"},
	}
	for _, tc := range tests {
		got := FormatDelay(tc.in)
		if got != tc.want {
			t.Errorf("FormatDelay(%d) = %q, want %q", tc.in, got, tc.want)
		}
		if back, err := ParseDelay(got); err != nil || back != tc.in {
			t.Errorf("ParseDelay(%q) = %d, %v; want %d", got, back, err, tc.in)
		}
	}
}
