package v1model

import "testing"

// TestMeterColours: a meter of 1 packet per ms committed (burst 2) and
// 2 per ms peak (burst 3), as BMv2 computes it: a burst of six packets at
// one instant is green twice (the committed bucket), yellow once (the
// peak bucket has three tokens, two spent), then red; a millisecond
// later both buckets have refilled by one and two tokens.
func TestMeterColours(t *testing.T) {
	var m meter
	if err := m.set([]MeterRate{{PerMicrosecond: 0.001, Burst: 2}, {PerMicrosecond: 0.002, Burst: 3}}); err != nil {
		t.Fatal(err)
	}
	var got []int
	for range 6 {
		got = append(got, m.execute(1, 1_000_000))
	}
	want := []int{Green, Green, Yellow, Red, Red, Red}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("burst colours %v, want %v", got, want)
		}
	}
	if c := m.execute(1, 1_001_000); c != Green {
		t.Errorf("a millisecond later: colour %d, want green", c)
	}
	if err := m.set([]MeterRate{{PerMicrosecond: 2}, {PerMicrosecond: 1}}); err == nil {
		t.Error("a peak rate below the committed rate: no error")
	}
	var unset meter
	if c := unset.execute(1000, 5); c != Green {
		t.Errorf("a meter never set: colour %d, want green", c)
	}
}
