package v1model

import (
	"testing"
	"time"
)

// TestQueueRateAndDepth paces port 2 at 1,000 packets per second with a
// queue of three: of five frames arriving at once, three wait and leave
// a millisecond apart, two are dropped at the tail.
func TestQueueRateAndDepth(t *testing.T) {
	var now time.Duration
	sw, err := Load("../p4/build/rcm.json", Config{Clock: func() time.Duration { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.AddEntry("RcmIngress.ipv4_lpm", Entry{Match: []Match{{Value: 0x0a000002, PrefixLen: 32}},
		Action: "RcmIngress.set_nexthop", Params: []uint64{2, 1, 2}}); err != nil {
		t.Fatal(err)
	}
	if err := sw.SetQueueRate(2, -1, 1000); err != nil {
		t.Fatal(err)
	}
	if err := sw.SetQueueDepth(2, -1, 3); err != nil {
		t.Fatal(err)
	}
	frame := udpFrame(t, 1, 2, 4791, 100)
	for range 5 {
		if err := sw.Receive(1, frame); err != nil {
			t.Fatal(err)
		}
	}
	if d := sw.QueueDrops(2); d != 2 {
		t.Errorf("%d drops, want 2", d)
	}
	var at []time.Duration
	emit := func(port int, _ []byte) { at = append(at, now) }
	for now = 0; now <= 5*time.Millisecond; now += 100 * time.Microsecond {
		for sw.serveReady(emit) == 0 {
		}
	}
	want := []time.Duration{0, time.Millisecond, 2 * time.Millisecond}
	if len(at) != len(want) {
		t.Fatalf("sent at %v, want %v", at, want)
	}
	for i := range want {
		if at[i] != want[i] {
			t.Errorf("frame %d left at %v, want %v", i, at[i], want[i])
		}
	}
	if err := sw.Process(1, frame, emit); err == nil {
		t.Error("Process on a live switch: no error")
	}
}
