package v1model

import (
	"fmt"
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

// cmdFrame is a frame for externs.p4: its command byte and argument,
// and pad bytes of payload.
func cmdFrame(cmd, arg byte, pad int) []byte {
	f := []byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x88, 0xb6, cmd, arg, 0, 0, 0, 0, 0, 0}
	return append(f, make([]byte, pad)...)
}

// TestPortRate makes port 2 a 1 Mb/s link over two priority queues: of
// frames queued at once, the high queue's leave first, every frame
// leaves when the link has sent the one before (its bytes and
// LineOverhead, whatever its queue), and a frame egress drops takes no
// link time.
func TestPortRate(t *testing.T) {
	var now time.Duration
	sw, err := Load("../p4/testdata/build/externs.json", Config{PriorityQueues: 2, Clock: func() time.Duration { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.SetPortRate(2, 1e6); err != nil {
		t.Fatal(err)
	}
	in := [][]byte{
		cmdFrame(12, 0, 1000), // low
		cmdFrame(15, 0, 1000), // low, dropped in egress
		cmdFrame(12, 0, 100),  // low
		cmdFrame(12, 1, 500),  // high
		cmdFrame(12, 1, 60),   // high
	}
	for _, f := range in {
		if err := sw.Receive(1, f); err != nil {
			t.Fatal(err)
		}
	}
	type out struct {
		at  time.Duration
		len int
		pad int
	}
	var got []out
	// Out: the command frame (22 bytes), the padding, and the 18-byte
	// header egress adds.
	emit := func(port int, f []byte) { got = append(got, out{now, len(f), len(f) - 22 - 18}) }
	const step = 10 * time.Microsecond
	for now = 0; now <= 50*time.Millisecond; now += step {
		for sw.serveReady(emit) == 0 {
		}
	}
	wantPad := []int{500, 60, 1000, 100}
	if len(got) != len(wantPad) {
		t.Fatalf("%d frames sent, want %d: %+v", len(got), len(wantPad), got)
	}
	var link time.Duration // when the link is free, by its own clock
	for i, g := range got {
		if g.pad != wantPad[i] {
			t.Errorf("frame %d: %d bytes of padding, want %d (high queue first, the dropped frame never)", i, g.pad, wantPad[i])
		}
		// The serve loop runs every step, so a frame leaves in the step
		// the link frees up; the link's clock does not drift by it.
		if g.at < link || g.at >= link+step {
			t.Errorf("frame %d left at %v, want in [%v, %v)", i, g.at, link, link+step)
		}
		link += time.Duration(float64(g.len+LineOverhead) * 8 / 1e6 * float64(time.Second))
	}
	if err := sw.SetPortRate(2, -1); err == nil {
		t.Error("a negative port rate: no error")
	}
}

// TestPortDelay gives port 2 a 5 ms link: without a rate a frame arrives
// 5 ms after it was sent; on a 1 Mb/s link, 5 ms after its last bit left,
// so frames queued together arrive their serialisation apart.
func TestPortDelay(t *testing.T) {
	for _, rate := range []float64{0, 1e6} {
		var now time.Duration
		sw, err := Load("../p4/testdata/build/externs.json", Config{Clock: func() time.Duration { return now }})
		if err != nil {
			t.Fatal(err)
		}
		if err := sw.SetPortRate(2, rate); err != nil {
			t.Fatal(err)
		}
		if err := sw.SetPortDelay(2, 5*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := sw.Receive(1, cmdFrame(12, 0, 1000)); err != nil {
				t.Fatal(err)
			}
		}
		var at []time.Duration
		var lens []int
		emit := func(port int, f []byte) { at, lens = append(at, now), append(lens, len(f)) }
		const step = 10 * time.Microsecond
		for now = 0; now <= 50*time.Millisecond; now += step {
			for sw.serveReady(emit) == 0 {
			}
		}
		if len(at) != 2 {
			t.Fatalf("rate %g: %d frames arrived, want 2", rate, len(at))
		}
		var link time.Duration // the last bit of each frame leaves
		for i := range at {
			want := 5 * time.Millisecond
			if rate > 0 {
				link += time.Duration(float64(lens[i]+LineOverhead) * 8 / rate * float64(time.Second))
				want += link
			}
			if at[i] < want || at[i] >= want+step {
				t.Errorf("rate %g: frame %d arrived at %v, want in [%v, %v)", rate, i, at[i], want, want+step)
			}
		}
		if n := sw.queued(); n != 0 {
			t.Errorf("rate %g: %d packets still in the switch", rate, n)
		}
	}
	var sw Switch
	if err := sw.SetPortDelay(2, -time.Second); err == nil {
		t.Error("a negative delay: no error")
	}
}

// TestLateArrivalKeepsTheLinkClock: port 2 is a 1 Mb/s link with a 1 ms
// delay. Two frames come in at 20 ms on port 1, the first said to have
// been delivered by its link 4 ms before (ReceiveBatchLate): it is
// counted on port 2's link from 16 ms, so it reaches the far end 4 ms
// sooner than one that came in on time, and the second follows it back
// to back. A serve loop that hands a frame off its delay line late says
// by how much (EmitLateness), for the switch at the far end.
func TestLateArrivalKeepsTheLinkClock(t *testing.T) {
	var now time.Duration
	sw, err := Load("../p4/testdata/build/externs.json", Config{Clock: func() time.Duration { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.SetPortRate(2, 1e6); err != nil {
		t.Fatal(err)
	}
	if err := sw.SetPortDelay(2, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	type arrival struct{ at, late time.Duration }
	var got []arrival
	var lens []int
	emit := func(port int, f []byte) {
		got, lens = append(got, arrival{now, sw.EmitLateness()}), append(lens, len(f))
	}
	now = 20 * time.Millisecond
	frames := [][]byte{cmdFrame(12, 0, 1000), cmdFrame(12, 0, 1000)}
	if err := sw.ReceiveBatchLate(1, frames, []time.Duration{4 * time.Millisecond, 0}, emit); err != nil {
		t.Fatal(err)
	}
	// The serve loop runs every 10 us until 30 ms, then wakes once,
	// late, at 60 ms.
	const step = 10 * time.Microsecond
	for now = 20 * time.Millisecond; now <= 60*time.Millisecond; now += step {
		if now > 30*time.Millisecond && now < 60*time.Millisecond {
			continue
		}
		for sw.serveReady(emit) == 0 {
		}
	}
	if len(got) != 2 {
		t.Fatalf("%d frames arrived, want 2", len(got))
	}
	link := 16 * time.Millisecond // the first frame's start on the link
	for i, g := range got {
		link += time.Duration(float64(lens[i]+LineOverhead) * 8 / 1e6 * float64(time.Second))
		want := link + time.Millisecond
		if want > 30*time.Millisecond {
			// Past 30 ms the loop slept until 60 ms: the frame leaves
			// then, late by the difference.
			if g.at != 60*time.Millisecond || g.late != g.at-want {
				t.Errorf("frame %d arrived at %v, %v late; want at 60ms, %v late", i, g.at, g.late, 60*time.Millisecond-want)
			}
			continue
		}
		if g.at < want || g.at >= want+step || g.late != g.at-want {
			t.Errorf("frame %d arrived at %v, %v late; want in [%v, %v), late by the difference", i, g.at, g.late, want, want+step)
		}
	}
	if sw.EmitLateness() != 0 {
		t.Errorf("EmitLateness outside an emit: %v, want 0", sw.EmitLateness())
	}
}

// TestReceiveBatchOneClock: the frames of one ReceiveBatch arrived
// together and share one time, read once for the batch however many
// points of each packet's path (timestamps, queues, departures) read
// it; Receive and Serve read the clock as before.
func TestReceiveBatchOneClock(t *testing.T) {
	reads := 0
	var now time.Duration
	clock := func() time.Duration { reads++; now += time.Microsecond; return now }
	sw, err := Load("../p4/build/rcm.json", Config{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.AddEntry("RcmIngress.ipv4_lpm", Entry{Match: []Match{{Value: 0x0a000002, PrefixLen: 32}},
		Action: "RcmIngress.set_nexthop", Params: []uint64{2, 1, 2}}); err != nil {
		t.Fatal(err)
	}
	frame := udpFrame(t, 1, 2, 4791, 100)
	frames := [][]byte{frame, frame, frame, frame}
	sent := 0
	emit := func(int, []byte) { sent++ }
	if err := sw.ReceiveBatch(1, frames, emit); err != nil {
		t.Fatal(err)
	}
	if sent != len(frames) {
		t.Fatalf("%d frames sent, want %d", sent, len(frames))
	}
	if reads != 1 {
		t.Errorf("a batch of %d frames read the clock %d times, want once", len(frames), reads)
	}
	reads = 0
	if err := sw.Receive(1, frame); err != nil {
		t.Fatal(err)
	}
	if reads < 2 {
		t.Errorf("Receive (no batch) read the clock %d times: the batch's time outlived its batch", reads)
	}
}

// TestReceiveBatchFullBatchLeavesServeAsleep: a batch of
// inlineServeMax frames on a port without a rate all leave inside
// ReceiveBatch, and Serve is not woken for them; past that bound (one
// more frame goes inline) Serve is woken once to send the rest.
func TestReceiveBatchFullBatchLeavesServeAsleep(t *testing.T) {
	for _, tc := range []struct {
		frames, wakes int
	}{
		{1, 0},
		{inlineServeMax, 0},
		{inlineServeMax + 1, 1},
		{2 * inlineServeMax, 1},
	} {
		t.Run(fmt.Sprint(tc.frames), func(t *testing.T) {
			sw, err := Load("../p4/build/rcm.json", Config{})
			if err != nil {
				t.Fatal(err)
			}
			if err := sw.AddEntry("RcmIngress.ipv4_lpm", Entry{Match: []Match{{Value: 0x0a000002, PrefixLen: 32}},
				Action: "RcmIngress.set_nexthop", Params: []uint64{2, 1, 2}}); err != nil {
				t.Fatal(err)
			}
			// Deep enough for the whole batch (the default, 64, drops
			// the rest at the tail before any leaves).
			if err := sw.SetQueueDepth(2, -1, 4*inlineServeMax); err != nil {
				t.Fatal(err)
			}
			frame := udpFrame(t, 1, 2, 4791, 100)
			frames := make([][]byte, tc.frames)
			for i := range frames {
				frames[i] = frame
			}
			sent := 0
			if err := sw.ReceiveBatch(1, frames, func(int, []byte) { sent++ }); err != nil {
				t.Fatal(err)
			}
			if want := min(tc.frames, inlineServeMax+1); sent != want {
				t.Errorf("%d frames sent inline, want %d", sent, want)
			}
			if int(sw.wakes) != tc.wakes {
				t.Errorf("Serve woken %d times, want %d", sw.wakes, tc.wakes)
			}
		})
	}
}

// TestRecirculationRunsAheadOfAnIdleLink sends three frames that
// egress sends round three times (externs.p4's command 3) to port 2,
// with the loop at 1,000 passes a second. On a port without a link the
// loop keeps its rate. On a 1 Gb/s link, free with nothing queued while
// the port's packets go round, the loop runs passes before their time,
// so the frames leave sooner; but no more than a round of them (the
// queue's length) until the port sends again, so while the clock stands
// still, nothing completes its three passes.
func TestRecirculationRunsAheadOfAnIdleLink(t *testing.T) {
	run := func(linkRate float64, until time.Duration) []time.Duration {
		t.Helper()
		var now time.Duration
		sw, err := Load("../p4/testdata/build/externs.json", Config{PriorityQueues: 2, Clock: func() time.Duration { return now }})
		if err != nil {
			t.Fatal(err)
		}
		if err := sw.SetRecirculationRate(1000); err != nil {
			t.Fatal(err)
		}
		if linkRate > 0 {
			if err := sw.SetPortRate(2, linkRate); err != nil {
				t.Fatal(err)
			}
		}
		for range 3 {
			if err := sw.Receive(1, cmdFrame(3, 0, 100)); err != nil {
				t.Fatal(err)
			}
		}
		var left []time.Duration
		emit := func(port int, f []byte) { left = append(left, now) }
		for now = 0; now <= until; now += 100 * time.Microsecond {
			for calls := 0; sw.serveReady(emit) == 0; calls++ {
				if calls > 1000 {
					t.Fatalf("link %v: the serve loop never waits at %v", linkRate, now)
				}
			}
		}
		return left
	}
	paced := run(0, 20*time.Millisecond)
	ahead := run(1e9, 20*time.Millisecond)
	if len(paced) != 3 || len(ahead) != 3 {
		t.Fatalf("frames sent: %v without a link rate, %v with one; want 3 each", paced, ahead)
	}
	t.Logf("frames left at %v without a link rate, at %v on a 1 Gb/s link", paced, ahead)
	if ahead[2] >= paced[2]-time.Millisecond {
		t.Errorf("on an idle link the last frame left at %v, without a link rate at %v: want a pass (1 ms) sooner at least", ahead[2], paced[2])
	}
	if frozen := run(1e9, 0); len(frozen) != 0 {
		t.Errorf("with the clock standing at 0, frames left at %v: the loop ran more than a round ahead", frozen)
	}
}
