package topo

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// rateUnits are the decimal prefixes FormatRate chooses among, largest
// first.
var rateUnits = []struct {
	name string
	exp  int
}{
	{"Tbps", 12}, {"Gbps", 9}, {"Mbps", 6}, {"Kbps", 3},
}

const rateUnitList = "bps, Kbps, Mbps, Gbps or Tbps"
const delayUnitList = "ps, ns, us, ms or s"

// ParseRate parses a link rate such as "100Gbps", "2.5Gb/s" or "40G" into
// bits per second. The unit is a decimal prefix (none, K, M, G, T) followed
// by "bps", "b/s" or "bit/s", or the prefix alone; case does not matter,
// except that the ns-3 byte-rate spellings "Bps" and "B/s" are refused,
// since reading "100GBps" as bits would be off by a factor of eight. The
// number is a plain decimal (no sign or exponent) and is converted with a
// single rounding, so "0.1Gbps" is exactly 1e8.
func ParseRate(s string) (float64, error) {
	v, err := parseRate(s)
	if err != nil {
		return 0, fmt.Errorf("rate %q: %w", s, err)
	}
	return v, nil
}

// parseRate is ParseRate with errors that do not repeat the input, for
// callers that quote it themselves.
func parseRate(s string) (float64, error) {
	num, unit, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	if unit == "" {
		return 0, fmt.Errorf("missing unit (want %s)", rateUnitList)
	}
	exp, err := rateExp(unit)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(num+"e"+strconv.Itoa(exp), 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, errors.New("too large")
	}
	if v == 0 {
		return 0, errors.New("must be positive")
	}
	return v, nil
}

// rateExp returns the power of ten of a rate unit.
func rateExp(unit string) (int, error) {
	if strings.HasSuffix(unit, "Bps") || strings.HasSuffix(unit, "B/s") {
		return 0, fmt.Errorf("unit %q is bytes per second; write the rate in bits (%s)", unit, rateUnitList)
	}
	u := strings.ToLower(unit)
	exp := 0
	switch u[0] {
	case 'k':
		exp = 3
	case 'm':
		exp = 6
	case 'g':
		exp = 9
	case 't':
		exp = 12
	}
	rest := u
	if exp > 0 {
		rest = u[1:]
	}
	switch rest {
	case "bps", "b/s", "bit/s":
		return exp, nil
	case "":
		if exp > 0 {
			return exp, nil
		}
	}
	return 0, fmt.Errorf("unknown unit %q (want %s)", unit, rateUnitList)
}

// FormatRate writes a rate in bits/s the way the ns-3 files do: the largest
// prefix that leaves at least 1 in front ("100Gbps", "2.5Gbps",
// "800Mbps"), with the shortest decimal that ParseRate reads back to the
// same float64. Rates that are not positive and finite, which no valid
// link has, are written as Go formats them with "bps" appended.
func FormatRate(bps float64) string {
	if !(bps > 0) || math.IsInf(bps, 0) {
		return strconv.FormatFloat(bps, 'g', -1, 64) + "bps"
	}
	// Shortest round-trip digits d1.d2d3... times 10^exp; shifting the
	// decimal point in the string keeps the value exact.
	mant, expStr, _ := strings.Cut(strconv.FormatFloat(bps, 'e', -1, 64), "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	unit, uexp := "bps", 0
	for _, u := range rateUnits {
		if exp >= u.exp {
			unit, uexp = u.name, u.exp
			break
		}
	}
	return shiftDecimal(digits, exp-(len(digits)-1)-uexp) + unit
}

// shiftDecimal writes the integer digits times 10^p as a decimal.
func shiftDecimal(digits string, p int) string {
	if p >= 0 {
		return digits + strings.Repeat("0", p)
	}
	n := len(digits) + p // digits before the point
	if n <= 0 {
		return "0." + strings.Repeat("0", -n) + digits
	}
	return digits[:n] + "." + digits[n:]
}

// ParseDelay parses a delay such as "1000ns", "1.5us" or "0ps" into
// picoseconds. Units are ps, ns, us (or µs), ms and s, in any case. The
// number is a plain decimal (no sign or exponent), converted exactly; a
// value finer than a picosecond is rounded to the nearest picosecond
// (halves up), far below anything the simulator resolves.
func ParseDelay(s string) (int64, error) {
	v, err := parseDelay(s)
	if err != nil {
		return 0, fmt.Errorf("delay %q: %w", s, err)
	}
	return v, nil
}

// parseDelay is ParseDelay with errors that do not repeat the input.
func parseDelay(s string) (int64, error) {
	num, unit, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	var exp int
	switch strings.ToLower(unit) {
	case "ps":
		exp = 0
	case "ns":
		exp = 3
	case "us", "µs", "μs":
		exp = 6
	case "ms":
		exp = 9
	case "s":
		exp = 12
	case "":
		return 0, fmt.Errorf("missing unit (want %s)", delayUnitList)
	default:
		return 0, fmt.Errorf("unknown unit %q (want %s)", unit, delayUnitList)
	}
	intPart, frac, _ := strings.Cut(num, ".")
	digits := intPart + frac
	shift := exp - len(frac) // value = digits * 10^shift
	roundUp := false
	if shift >= 0 {
		digits += strings.Repeat("0", shift)
	} else {
		// Keep the n digits at or above 1 ps; digits[n] is the tenths.
		n := len(digits) + shift
		switch {
		case n < 0:
			digits = "0" // below a tenth of a picosecond
		default:
			roundUp = digits[n] >= '5'
			digits = digits[:n]
		}
	}
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		digits = "0"
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("too large for int64 picoseconds (max %d ps)", int64(math.MaxInt64))
	}
	if roundUp {
		if v == math.MaxInt64 {
			return 0, fmt.Errorf("too large for int64 picoseconds (max %d ps)", int64(math.MaxInt64))
		}
		v++
	}
	return v, nil
}

// FormatDelay writes picoseconds the way the ns-3 files do: "1000ns" when
// the delay is a whole number of nanoseconds (the common case, and the
// unit of every published topology file), else "1500ps". ParseDelay reads
// it back exactly for any non-negative delay.
func FormatDelay(ps int64) string {
	if ps%1000 == 0 {
		return strconv.FormatInt(ps/1000, 10) + "ns"
	}
	return strconv.FormatInt(ps, 10) + "ps"
}

// splitNumber splits "12.5Gbps" into "12.5" and "Gbps", checking the
// number is a plain decimal: digits with at most one point, at least one
// digit.
func splitNumber(s string) (num, unit string, err error) {
	if s == "" {
		return "", "", errors.New("empty")
	}
	i := 0
	points, digits := 0, 0
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			points++
		} else if c >= '0' && c <= '9' {
			digits++
		} else {
			break
		}
	}
	num, unit = s[:i], s[i:]
	switch {
	case digits == 0:
		return "", "", errors.New("not a number followed by a unit")
	case points > 1:
		return "", "", fmt.Errorf("malformed number %q", num)
	case len(num) > 64:
		return "", "", errors.New("number has more than 64 characters")
	}
	return num, unit, nil
}
