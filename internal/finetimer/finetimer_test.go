package finetimer

import (
	"testing"
	"time"
)

// The timer never fires early, for short waits and long ones, and a
// Reset replaces the wait armed before it.
func TestFiresNoEarlier(t *testing.T) {
	tm, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Stop()
	for _, d := range []time.Duration{0, 50 * time.Microsecond, time.Millisecond, 3 * time.Millisecond} {
		start := time.Now()
		tm.Reset(d)
		<-tm.C
		if got := time.Since(start); got < d {
			t.Errorf("armed for %v, fired after %v", d, got)
		}
	}
	// A long wait, then a short one in its place: the short one fires
	// (well before the hour).
	tm.Reset(time.Hour)
	tm.Reset(100 * time.Microsecond)
	select {
	case <-tm.C:
	case <-time.After(time.Minute):
		t.Fatal("a Reset did not replace an hour's wait")
	}
}

// BenchmarkLateness reports how late a 100 us wait ends, by this timer,
// by a Waiter and by a Go timer in the same run; ratio is the Go timer's
// lateness over this timer's.
func BenchmarkLateness(b *testing.B) {
	const d = 100 * time.Microsecond
	tm, err := New()
	if err != nil {
		b.Fatal(err)
	}
	defer tm.Stop()
	gt := time.NewTimer(time.Hour)
	defer gt.Stop()
	w, err := NewWaiter()
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	var fine, waiter, goTimer time.Duration
	for range b.N {
		s := time.Now()
		tm.Reset(d)
		<-tm.C
		fine += time.Since(s) - d
		s = time.Now()
		w.Wait(d)
		waiter += time.Since(s) - d
		s = time.Now()
		gt.Reset(d)
		<-gt.C
		goTimer += time.Since(s) - d
	}
	b.ReportMetric(float64(fine.Microseconds())/float64(b.N), "finetimer-late-us")
	b.ReportMetric(float64(waiter.Microseconds())/float64(b.N), "waiter-late-us")
	b.ReportMetric(float64(goTimer.Microseconds())/float64(b.N), "gotimer-late-us")
	b.ReportMetric(float64(goTimer)/float64(fine), "ratio")
}
