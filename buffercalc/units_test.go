package buffercalc

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	good := []struct {
		in   string
		want float64
	}{
		{"12MB", 12e6},
		{"12MiB", 12 << 20},
		{"22.4KB", 22400},
		{"22.4kB", 22400},
		{"1500B", 1500},
		{"1500", 1500},
		{" 9 KiB ", 9216},
		{"1GB", 1e9},
		{"2GiB", 2 << 30},
	}
	for _, tt := range good {
		got, err := ParseSize(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %g, %v; want %g", tt.in, got, err, tt.want)
		}
	}
	bad := []struct{ in, msg string }{
		{"12XB", "unknown size unit"},
		{"12Mb", "reads as bits"},
		{"12kb", "reads as bits"},
		{"-1MB", "greater than zero"},
		{"0", "greater than zero"},
		{"MB", "does not start with a number"},
		{"", "does not start with a number"},
		{"1.2.3KB", "not a number"},
		{"--1KB", "not a number"},
	}
	for _, tt := range bad {
		if _, err := ParseSize(tt.in); err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("ParseSize(%q) error = %v, want it to say %q", tt.in, err, tt.msg)
		}
	}
}

func TestParseRate(t *testing.T) {
	good := map[string]float64{
		"40G": 40e9, "100Gbps": 100e9, "25Gb/s": 25e9, "400g": 400e9, "2.5G": 2.5e9,
		"800Mbps": 800e6, "1T": 1e12, "10000000bps": 1e7,
	}
	for in, want := range good {
		got, err := ParseRate(in)
		if err != nil || got != want {
			t.Errorf("ParseRate(%q) = %g, %v; want %g", in, got, err, want)
		}
	}
	bad := map[string]string{
		"40":     "missing rate unit",
		"40GB/s": "reads as bytes",
		"40GBps": "reads as bytes",
		"40X":    "unknown rate unit",
		"-40G":   "greater than zero",
		"0":      "greater than zero",
		"0G":     "greater than zero",
	}
	for in, msg := range bad {
		if _, err := ParseRate(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseRate(%q) error = %v, want it to say %q", in, err, msg)
		}
	}
}

func TestParseLength(t *testing.T) {
	for in, want := range map[string]float64{"100m": 100, "0.3km": 300, "0m": 0, "7 m": 7} {
		if got, err := ParseLength(in); err != nil || got != want {
			t.Errorf("ParseLength(%q) = %g, %v; want %g", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{"-1m": "negative", "3ft": "unknown length unit", "m": "number",
		"10": "missing length unit, such as 10m"} {
		if _, err := ParseLength(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseLength(%q) error = %v, want it to say %q", in, err, msg)
		}
	}
}

func TestFormatKBRoundsDown(t *testing.T) {
	tests := map[float64]string{
		24475:              "24.47 KB", // exact, must not slip to 24.46
		21755.555:          "21.75 KB",
		764.84375:          "0.76 KB",
		22400:              "22.40 KB",
		24474.999999999996: "24.47 KB", // 24475 after floating-point error
		0:                  "0.00 KB",
	}
	for in, want := range tests {
		if got := FormatKB(in); got != want {
			t.Errorf("FormatKB(%v) = %s, want %s", in, got, want)
		}
	}
}

func TestFormatRateAndSize(t *testing.T) {
	for in, want := range map[float64]string{40e9: "40 Gb/s", 2.5e9: "2.5 Gb/s", 800e6: "800 Mb/s", 1.6e12: "1.6 Tb/s"} {
		if got := FormatRate(in); got != want {
			t.Errorf("FormatRate(%g) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[float64]string{12e6: "12 MB", 22400: "22.4 KB", 1500: "1.5 KB", 999: "999 B"} {
		if got := FormatSize(in); got != want {
			t.Errorf("FormatSize(%g) = %s, want %s", in, got, want)
		}
	}
}
