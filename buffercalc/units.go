package buffercalc

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// Unit conventions. Sizes are bytes. The SI prefixes are decimal (1 KB =
// 1000 B, 1 MB = 10^6 B, 1 GB = 10^9 B), which is how the DCQCN paper's
// figures work out (B = 12 MB = 12,000,000 B gives t_PFC = 24.47 KB); the IEC
// prefixes are binary (1 KiB = 1024 B, 1 MiB = 2^20 B, 1 GiB = 2^30 B).
// Rates are bits per second and always decimal (1 Gb/s = 10^9 b/s), as
// Ethernet line rates are.
var sizeUnits = map[string]float64{
	"b":   1,
	"kb":  1e3,
	"mb":  1e6,
	"gb":  1e9,
	"tb":  1e12,
	"kib": 1 << 10,
	"mib": 1 << 20,
	"gib": 1 << 30,
	"tib": 1 << 40,
}

var rateUnits = map[string]float64{
	"bps": 1, "b/s": 1,
	"k": 1e3, "kbps": 1e3, "kb/s": 1e3,
	"m": 1e6, "mbps": 1e6, "mb/s": 1e6,
	"g": 1e9, "gbps": 1e9, "gb/s": 1e9,
	"t": 1e12, "tbps": 1e12, "tb/s": 1e12,
}

var lengthUnits = map[string]float64{"m": 1, "km": 1000}

// SizeUnitsHelp and RateUnitsHelp name the accepted units, for error messages
// and flag help.
const (
	SizeUnitsHelp   = "B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024)"
	RateUnitsHelp   = "bps, Kbps, Mbps, Gbps, Tbps (or K, M, G, T; powers of 1000)"
	LengthUnitsHelp = "m or km"
)

// splitNumber splits "22.4KB" into 22.4 and "KB". A missing unit gives "".
func splitNumber(s string) (float64, string, error) {
	s = strings.TrimSpace(s)
	end := strings.IndexFunc(s, func(r rune) bool {
		return !unicode.IsDigit(r) && r != '.' && r != '-' && r != '+'
	})
	if end < 0 {
		end = len(s)
	}
	num, unit := s[:end], strings.TrimSpace(s[end:])
	if num == "" {
		return 0, "", fmt.Errorf("%q does not start with a number", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, "", fmt.Errorf("%q is not a number", num)
	}
	return v, unit, nil
}

func positive(s string, v float64) error {
	if v <= 0 {
		return fmt.Errorf("%q: must be greater than zero", s)
	}
	return nil
}

// ParseSize reads a positive size in bytes: "12MB", "12MiB", "22.4KB",
// "1500B" or a bare number of bytes ("1500").
func ParseSize(s string) (float64, error) {
	v, unit, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	mult := 1.0
	if unit != "" {
		m, ok := sizeUnits[strings.ToLower(unit)]
		switch {
		case !ok:
			return 0, fmt.Errorf("%q: unknown size unit %q (use %s)", s, unit, SizeUnitsHelp)
		case strings.HasSuffix(unit, "b") && !strings.ContainsAny(unit, "iI"):
			// "Mb", "kb", "b": a lower-case b means bits in networking.
			return 0, fmt.Errorf("%q: %q reads as bits; sizes are in bytes (use %s)", s, unit, SizeUnitsHelp)
		}
		mult = m
	}
	if err := positive(s, v); err != nil {
		return 0, err
	}
	return v * mult, nil
}

// ParseRate reads a positive rate in bits per second: "40G", "100Gbps",
// "25Gb/s", "400G". A unit is required: a bare "40" is too easy to misread.
func ParseRate(s string) (float64, error) {
	v, unit, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	if err := positive(s, v); err != nil {
		return 0, err
	}
	if unit == "" {
		return 0, fmt.Errorf("%q: missing rate unit (use %s)", s, RateUnitsHelp)
	}
	if strings.Contains(unit, "B") {
		return 0, fmt.Errorf("%q: %q reads as bytes; rates are in bits per second (use %s)", s, unit, RateUnitsHelp)
	}
	m, ok := rateUnits[strings.ToLower(unit)]
	if !ok {
		return 0, fmt.Errorf("%q: unknown rate unit %q (use %s)", s, unit, RateUnitsHelp)
	}
	if err := positive(s, v); err != nil {
		return 0, err
	}
	return v * m, nil
}

// ParseLength reads a non-negative length, in metres: "100m", "0.3km".
// The unit is required: a bare "10" could be metres or feet, and is
// refused rather than guessed.
func ParseLength(s string) (float64, error) {
	v, unit, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	if unit == "" {
		return 0, fmt.Errorf("%q: missing length unit, such as %gm (use %s)", s, v, LengthUnitsHelp)
	}
	m, ok := lengthUnits[strings.ToLower(unit)]
	if !ok {
		return 0, fmt.Errorf("%q: unknown length unit %q (use %s)", s, unit, LengthUnitsHelp)
	}
	mult := m
	if v < 0 {
		return 0, fmt.Errorf("%q: must not be negative", s)
	}
	return v * mult, nil
}

// FloorKB rounds a byte count down to 0.01 KB (10 B). Thresholds are upper
// bounds, so they are printed rounded down: a threshold set to the printed
// value stays under the bound. The tiny tolerance keeps an exact result such
// as 24475 B from printing as 24.46 KB after floating-point error.
func FloorKB(bytes float64) float64 {
	return math.Floor(bytes/10+1e-9) / 100
}

// FormatKB prints bytes as KB rounded down to two decimals, "24.47 KB".
func FormatKB(bytes float64) string {
	return strconv.FormatFloat(FloorKB(bytes), 'f', 2, 64) + " KB"
}

// FormatRate prints a rate with the largest prefix that keeps it whole where
// possible: "40 Gb/s", "2.5 Gb/s", "800 Mb/s".
func FormatRate(bps float64) string {
	for _, u := range []struct {
		div  float64
		name string
	}{{1e12, "Tb/s"}, {1e9, "Gb/s"}, {1e6, "Mb/s"}, {1e3, "Kb/s"}} {
		if bps >= u.div {
			return strconv.FormatFloat(bps/u.div, 'f', -1, 64) + " " + u.name
		}
	}
	return strconv.FormatFloat(bps, 'f', -1, 64) + " b/s"
}

// FormatSize prints a size with a decimal prefix, at most three decimals:
// "12 MB", "22.4 KB", "1500 B".
func FormatSize(bytes float64) string {
	for _, u := range []struct {
		div  float64
		name string
	}{{1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}} {
		if bytes >= u.div {
			return strconv.FormatFloat(math.Round(bytes/u.div*1000)/1000, 'f', -1, 64) + " " + u.name
		}
	}
	return strconv.FormatFloat(math.Round(bytes*1000)/1000, 'f', -1, 64) + " B"
}
