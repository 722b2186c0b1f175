//go:build linux

package finetimer

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// A Wake after Close writes nothing: the closed descriptor's number is
// soon another file's, here a new eventfd's, whose counter must stay
// empty.
func TestWakeAfterClose(t *testing.T) {
	w, err := NewWaiter()
	if err != nil {
		t.Fatal(err)
	}
	old := w.fd
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if fd != old {
		t.Skipf("the new eventfd got descriptor %d, not the closed %d", fd, old)
	}
	w.Wake()
	var buf [8]byte
	if n, err := unix.Read(fd, buf[:]); !errors.Is(err, unix.EAGAIN) {
		t.Errorf("a Wake after Close wrote %d bytes to the file that took its descriptor (%v)", n, err)
	}
}
