package labtest

import (
	"errors"
	"testing"
)

// recorder is a testing.TB that records whether decide skipped or
// failed it instead of ending the test; decide calls nothing else.
type recorder struct {
	testing.TB
	skipped, failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Skip(...any)           { r.skipped = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }

func TestDecide(t *testing.T) {
	none := errors.New("no CAP_NET_ADMIN")
	for _, c := range []struct {
		unavailable error
		required    bool
		skip, fail  bool
	}{
		{nil, false, false, false},
		{nil, true, false, false},
		{none, false, true, false},
		{none, true, false, true},
	} {
		r := &recorder{}
		decide(r, c.unavailable, c.required)
		if r.skipped != c.skip || r.failed != c.fail {
			t.Errorf("unavailable %v, required %v: skipped %v, failed %v; want %v, %v", c.unavailable, c.required, r.skipped, r.failed, c.skip, c.fail)
		}
	}
}
