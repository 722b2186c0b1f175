package finetimer

import (
	"testing"
	"time"
)

// A Waiter sleeps out its wait when nobody wakes it, returns when woken
// from another goroutine, returns at once for a Wake that came before
// the Wait, and is not left returning early by Wakes it has consumed
// (the eventfd emptied, which a Waiter that forgot to read it would
// fail: every later Wait would return at once).
func TestWaiter(t *testing.T) {
	w, err := NewWaiter()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	const d = 2 * time.Millisecond
	start := time.Now()
	w.Wait(d)
	if got := time.Since(start); got < d {
		t.Errorf("Wait(%v) unwoken returned after %v", d, got)
	}

	done := make(chan struct{})
	go func() { w.Wait(time.Hour); close(done) }()
	time.Sleep(10 * time.Millisecond)
	w.Wake()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Wake did not end an hour's Wait")
	}

	for range 3 {
		w.Wake()
	}
	returned := make(chan struct{})
	go func() { w.Wait(time.Hour); close(returned) }()
	select {
	case <-returned:
	case <-time.After(time.Minute):
		t.Fatal("a Wait after a Wake did not return at once")
	}
	start = time.Now()
	w.Wait(d)
	if got := time.Since(start); got < d {
		t.Errorf("Wait(%v) after the Wakes were consumed returned after %v", d, got)
	}
}
