// Package preset holds what the congestion-control packages' parameter
// sets share: named sets to pick from, and the error that names a bad
// parameter by its scenario key, so that a scenario reader can point at
// its line.
package preset

import (
	"fmt"
	"sort"
	"strings"
)

// Sets are a scheme's named parameter sets.
type Sets[P any] struct {
	scheme string
	byName map[string]func() P
}

// New names the sets of scheme ("HPCC" in messages).
func New[P any](scheme string, byName map[string]func() P) Sets[P] {
	return Sets[P]{scheme: scheme, byName: byName}
}

// Names lists the sets in sorted order.
func (s Sets[P]) Names() []string {
	names := make([]string, 0, len(s.byName))
	for n := range s.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Get returns the set of that name, in any case.
func (s Sets[P]) Get(name string) (P, error) {
	f, ok := s.byName[strings.ToLower(name)]
	if !ok {
		var zero P
		return zero, fmt.Errorf("unknown %s parameter set %q (known: %s)", s.scheme, name, strings.Join(s.Names(), ", "))
	}
	return f(), nil
}

// ParamError names the parameter a Validate rejects by its scenario key
// ("eta", "min_rate").
type ParamError struct {
	Scheme, Field, Msg string
}

func (e *ParamError) Error() string { return e.Scheme + " " + e.Field + ": " + e.Msg }

// Bad makes scheme's ParamError for field.
func Bad(scheme, field, format string, args ...any) error {
	return &ParamError{Scheme: scheme, Field: field, Msg: fmt.Sprintf(format, args...)}
}
