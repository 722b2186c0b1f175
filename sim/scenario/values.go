package scenario

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/p4rcm/p4rcm/buffercalc"
	"github.com/p4rcm/p4rcm/sim/topo"
	"go.yaml.in/yaml/v3"
)

// The scalar types below read the units people write in scenario files
// ("100G", "1us", "32MB", "1/8") and keep the position of any error.

// Duration is a time in picoseconds, written "1us", "10ms", "500ns".
type Duration int64

// Size is a byte count, written "32MB", "100KB", "1500".
type Size float64

// Rate is bits per second, written "100G", "40Gbps".
type Rate float64

// Fraction is a number written plainly or as a ratio: "0.125", "1/8".
type Fraction float64

// isZero says whether s is a plain zero ("0", "0.0"): zero is zero in any
// unit, so a duration, size or rate may leave the unit out there (where
// zero is allowed: the fields that use it say what it means).
func isZero(s string) bool {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil && f == 0
}

// UnmarshalYAML reads a duration.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if isZero(n.Value) {
		*d = 0
		return nil
	}
	v, err := topo.ParseDelay(n.Value)
	if err != nil {
		return &fieldError{line: n.Line, column: n.Column, msg: err.Error()}
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes a duration back in the largest whole unit.
func (d Duration) MarshalYAML() (any, error) { return topo.FormatDelay(int64(d)), nil }

// UnmarshalYAML reads a size.
func (s *Size) UnmarshalYAML(n *yaml.Node) error {
	if isZero(n.Value) {
		*s = 0
		return nil
	}
	v, err := buffercalc.ParseSize(n.Value)
	if err != nil {
		return &fieldError{line: n.Line, column: n.Column, msg: err.Error()}
	}
	*s = Size(v)
	return nil
}

// UnmarshalYAML reads a rate.
func (r *Rate) UnmarshalYAML(n *yaml.Node) error {
	if isZero(n.Value) {
		*r = 0
		return nil
	}
	v, err := buffercalc.ParseRate(n.Value)
	if err != nil {
		return &fieldError{line: n.Line, column: n.Column, msg: err.Error()}
	}
	*r = Rate(v)
	return nil
}

// UnmarshalYAML reads a fraction.
func (f *Fraction) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseFraction(n.Value)
	if err != nil {
		return &fieldError{line: n.Line, column: n.Column, msg: err.Error()}
	}
	*f = Fraction(v)
	return nil
}

// ParseFraction reads "0.125" or "1/8".
func ParseFraction(s string) (float64, error) {
	num, den, ok := strings.Cut(strings.TrimSpace(s), "/")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number or a fraction like 1/8", s)
	}
	if ok {
		d, err := strconv.ParseFloat(strings.TrimSpace(den), 64)
		if err != nil || d == 0 {
			return 0, fmt.Errorf("%q: bad denominator", s)
		}
		v /= d
	}
	return v, nil
}

// fieldError is an error at a line of the scenario file.
type fieldError struct {
	line, column int
	field        string
	msg          string
}

func (e *fieldError) Error() string {
	var b strings.Builder
	if e.line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.line)
	}
	if e.field != "" {
		b.WriteString(e.field + ": ")
	}
	b.WriteString(e.msg)
	return b.String()
}
