package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/p4rcm/p4rcm/buffercalc"
	"github.com/spf13/pflag"
)

// parsedValue is a pflag.Value that parses its text with a function, so
// units and range checks live in one place and errors read the same way.
type parsedValue[T any] struct {
	dst   *T
	parse func(string) (T, error)
	typ   string
	text  string
}

func (v *parsedValue[T]) String() string { return v.text }
func (v *parsedValue[T]) Type() string   { return v.typ }
func (v *parsedValue[T]) Set(s string) error {
	x, err := v.parse(s)
	if err != nil {
		return err
	}
	*v.dst, v.text = x, s
	return nil
}

// valueFlag defines a flag whose text parse turns into *dst; typ names the
// kind of value in --help.
func valueFlag[T any](fs *pflag.FlagSet, dst *T, name, typ string, parse func(string) (T, error), usage string) {
	fs.Var(&parsedValue[T]{dst: dst, parse: parse, typ: typ}, name, usage)
}

// parseCount reads a whole number greater than zero.
func parseCount(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	if n <= 0 {
		return 0, fmt.Errorf("%q: must be greater than zero", s)
	}
	return n, nil
}

// parseNonNegative reads a plain number that may be zero.
func parseNonNegative(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if f < 0 {
		return 0, fmt.Errorf("%q: must not be negative", s)
	}
	return f, nil
}

// parsePositive reads a plain number greater than zero.
func parsePositive(s string) (float64, error) {
	f, err := parseNonNegative(s)
	if err == nil && f == 0 {
		err = fmt.Errorf("%q: must be greater than zero", s)
	}
	return f, err
}

// parseFraction reads a positive number or fraction: "8", "0.125", "1/8".
func parseFraction(s string) (float64, error) {
	num, den, isFrac := strings.Cut(s, "/")
	f, err := parsePositive(num)
	if err != nil || !isFrac {
		return f, err
	}
	d, err := parsePositive(den)
	if err != nil {
		return 0, fmt.Errorf("%q: bad denominator: %v", s, err)
	}
	return f / d, nil
}

// formatFraction prints the powers of two below one as fractions, "1/8".
func formatFraction(f float64) string {
	if f < 1 {
		if inv := 1 / f; inv == float64(int(inv)) {
			return "1/" + strconv.Itoa(int(inv))
		}
	}
	return strconv.FormatFloat(f, 'g', 4, 64)
}

// parseHeadroom reads a size, or "model" (returned as zero) to compute it.
func parseHeadroom(s string) (float64, error) {
	if strings.EqualFold(strings.TrimSpace(s), "model") {
		return 0, nil
	}
	return buffercalc.ParseSize(s)
}
