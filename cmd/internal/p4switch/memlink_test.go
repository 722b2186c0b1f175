package p4switch

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/afpacket"
)

// A link in memory delivers what one end sends to the other, in order,
// in batches of at most afpacket.Batch, copied (the sender may reuse its
// buffers at once), both ways, and ends a waiting Recv when closed.
func TestMemLinkOrderAndClose(t *testing.T) {
	a, b := newMemLink("l1")
	const n = 1000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 8)
		for i := range n {
			copy(buf, fmt.Sprintf("%08d", i))
			if err := a.Send(buf); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	next := 0
	for next < n {
		frames, err := b.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if len(frames) == 0 || len(frames) > afpacket.Batch {
			t.Fatalf("a batch of %d frames", len(frames))
		}
		for _, f := range frames {
			if want := fmt.Sprintf("%08d", next); string(f) != want {
				t.Fatalf("frame %q, want %q: out of order or overwritten", f, want)
			}
			next++
		}
	}
	wg.Wait()
	if err := b.Send([]byte("back")); err != nil {
		t.Fatal(err)
	}
	if f, err := a.Recv(); err != nil || len(f) != 1 || !bytes.Equal(f[0], []byte("back")) {
		t.Fatalf("the other way: %q, %v", f, err)
	}
	done := make(chan error)
	go func() { _, err := b.Recv(); done <- err }()
	b.Close()
	if err := <-done; !errors.Is(err, afpacket.ErrClosed) {
		t.Fatalf("Recv on a closed end: %v", err)
	}
	if err := b.Send([]byte("x")); !errors.Is(err, afpacket.ErrClosed) {
		t.Errorf("Send on a closed end: %v", err)
	}
	// Sent to a closed end, a frame is lost, as on a veth whose peer is
	// down; the sender carries on.
	if err := a.Send([]byte("x")); err != nil {
		t.Errorf("Send to a closed end: %v", err)
	}
}

// A link in memory carries, with each frame, when the sending switch's
// link delivered it (sendAt), so that the receiver can count the frame
// from then: the lateness of a frame sent 5 ms late is at least 5 ms at
// the far end, one sent with no time (Send) has only the hand-off's.
func TestMemLinkCarriesDeliveryTimes(t *testing.T) {
	a, b := newMemLink("l1")
	const late = 5 * time.Millisecond
	start := time.Now()
	if err := a.sendAt([][]byte{[]byte("late")}, []time.Time{start.Add(-late)}); err != nil {
		t.Fatal(err)
	}
	if err := a.Send([]byte("now")); err != nil {
		t.Fatal(err)
	}
	checkLateness(t, b, start, late)
}

// checkLateness receives two frames at b, sent since start, and checks
// that the first arrives at least late late and the second on time,
// give or take the time since start.
func checkLateness(t *testing.T, b *memEnd, start time.Time, late time.Duration) {
	t.Helper()
	frames, err := b.Recv()
	if err != nil || len(frames) != 2 {
		t.Fatalf("%q, %v: want two frames", frames, err)
	}
	got := b.lateness(nil)
	since := time.Since(start)
	if len(got) != 2 || got[0] < late || got[0] > late+since || got[1] < 0 || got[1] > since {
		t.Fatalf("lateness %v, want [%v, %v] and [0, %v]", got, late, late+since, since)
	}
}

// A port on a link in memory hands each frame's lateness on with it
// (add, then flush): the frame added 5 ms late reaches the far end at
// least 5 ms late, the one added on time late only by the hand-off.
func TestPortHandsOnLateness(t *testing.T) {
	a, b := newMemLink("l1")
	pt := &port{num: 1, name: "mem:l1", p: a, mem: a}
	const late = 5 * time.Millisecond
	start := time.Now()
	pt.add([]byte("late"), late)
	pt.add([]byte("now"), 0)
	pt.flush(slog.New(slog.DiscardHandler))
	checkLateness(t, b, start, late)
}

// A receiver that falls memQueueMax frames behind loses the next ones,
// counted, and keeps the ones before in order.
func TestMemLinkBounded(t *testing.T) {
	a, b := newMemLink("l1")
	for i := range memQueueMax + 10 {
		if err := a.Send([]byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := b.dropped(); got != 10 {
		t.Errorf("%d lost, want 10", got)
	}
	frames, err := b.Recv()
	if err != nil || len(frames) != afpacket.Batch || frames[0][0] != 0 || frames[1][0] != 1 {
		t.Fatalf("first batch %d frames, %v", len(frames), err)
	}
}

// A group file is refused, naming the switch and the flag, when a
// switch's command line is wrong, two switches share what only one may
// have, or a link in memory does not join exactly two ports.
func TestGroupErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ file, want string }{
		{`{"switches": []}`, "no switches"},
		{`{"switch": []}`, "unknown field"},
		{`{"switches": [{"args": ["--no-p4"]}]}`, "switch 1 has no name"},
		{`{"switches": [{"name": "s1", "args": ["--no-p4"]}, {"name": "s1", "args": ["--no-p4"]}]}`, "two switches are called s1"},
		{`{"switches": [{"name": "s1", "args": ["--no-p4", "--frob"]}]}`, "switch s1: unknown flag: --frob"},
		{`{"switches": [{"name": "s2", "args": ["--no-p4", "-i", "x"]}]}`, `switch s2: -i "x": want PORT@IFACE`},
		{`{"switches": [{"name": "s1", "args": ["--no-p4", "--", "--priority-queues", "9"]}]}`, "switch s1: --priority-queues 9"},
		{`{"switches": [{"name": "s1", "args": ["--no-p4", "-i", "1@veth9"]}, {"name": "s2", "args": ["--no-p4", "-i", "2@veth9"]}]}`, "switches s1 and s2 both have interface veth9"},
		{`{"switches": [{"name": "s1", "args": ["--no-p4", "--", "--grpc-server-addr", "127.0.0.1:9559"]}, {"name": "s2", "args": ["--no-p4"]}]}`, "switches s1 and s2 both have P4Runtime address 127.0.0.1:9559"},
		{`{"switches": [{"name": "s1", "args": ["--no-p4", "--control", "/tmp/c"]}, {"name": "s2", "args": ["--no-p4", "--control", "/tmp/c"]}]}`, "both have control socket /tmp/c"},
		{`{"switches": [{"name": "s1", "args": ["--no-p4", "-i", "1@mem:up", "--", "--grpc-server-addr", "127.0.0.1:0"]}, {"name": "s2", "args": ["--no-p4", "-i", "1@mem:down", "--", "--grpc-server-addr", "127.0.0.1:0"]}]}`, "port 1: -i mem:"},
		{`{"switches": [{"name": "s1", "args": ["--no-p4", "-i", "1@mem:up", "--", "--grpc-server-addr", "127.0.0.1:0"]}, {"name": "s2", "args": ["--no-p4", "-i", "1@mem:up", "--", "--grpc-server-addr", "127.0.0.1:0"]}, {"name": "s3", "args": ["--no-p4", "-i", "1@mem:up", "--", "--grpc-server-addr", "127.0.0.1:0"]}]}`, "a link in memory joins two ports, and 3 name it"},
	} {
		path := filepath.Join(dir, "group.json")
		if err := os.WriteFile(path, []byte(c.file), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := readGroup(path)
		var ue *usageError
		if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a usage error with %q", c.file, err, c.want)
		}
	}
	if _, _, err := readGroup(filepath.Join(dir, "none.json")); err == nil {
		t.Error("a missing group file accepted")
	}
	var out, errOut bytes.Buffer
	if code := Run(t.Context(), []string{"--group", "g.json", "--no-p4"}, &out, &errOut); code != ExitUsage || !strings.Contains(errOut.String(), "takes no other flags") {
		t.Errorf("--group with a flag: exit %d, %q", code, errOut.String())
	}
	if code := Run(t.Context(), []string{"-i", "1@mem:l", "--no-p4"}, &out, &errOut); code != ExitUsage || !strings.Contains(errOut.String(), "no other port of this process joins") {
		t.Errorf("a link in memory with one end: exit %d, %q", code, errOut.String())
	}
}
