package preset

import (
	"errors"
	"strings"
	"testing"
)

func TestSets(t *testing.T) {
	sets := New("X", map[string]func() int{"b": func() int { return 2 }, "a": func() int { return 1 }})
	if n := sets.Names(); strings.Join(n, ",") != "a,b" {
		t.Errorf("names %v, want sorted", n)
	}
	if v, err := sets.Get("B"); err != nil || v != 2 {
		t.Errorf("Get(B): %v, %v", v, err)
	}
	if _, err := sets.Get("c"); err == nil || err.Error() != `unknown X parameter set "c" (known: a, b)` {
		t.Errorf("unknown set: %v", err)
	}
	var pe *ParamError
	if err := Bad("x", "eta", "must be in (0, 1], got %g", 2.0); !errors.As(err, &pe) || pe.Field != "eta" || err.Error() != "x eta: must be in (0, 1], got 2" {
		t.Errorf("Bad: %v", err)
	}
}
