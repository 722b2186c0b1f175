//go:build linux

package test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/p4rcm/p4rcm/internal/labtest"
	"github.com/p4rcm/p4rcm/internal/race"
)

// p4ctlBinary builds cmd/p4ctl into dir.
func p4ctlBinary(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "p4ctl")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/p4ctl").CombinedOutput(); err != nil {
		t.Fatalf("go build p4ctl: %v: %s", err, out)
	}
	return bin
}

// Ctrl-C (SIGINT), SIGTERM (kill, timeout, CI), SIGHUP (a closed
// terminal) and SIGPIPE (the reader of its output gone, as `| head`
// goes) stop `p4ctl emulate` with exit 128 + the signal's number (130
// for Ctrl-C), saying it was interrupted (but to a reader that is gone),
// and everything it made is removed: its namespaces, links, switch
// processes and their temporary directories; no output directory is
// written. Each signal comes at a point where all of these exist: while
// the switches are programmed, or while the agents run. SIGPIPE comes
// as `p4ctl emulate 2>&1 | head -2` makes it: the reader of its output
// closes the pipe after the line, and emulate's next line finds it gone.
func TestEmulateSignalsLeaveNothing(t *testing.T) {
	labtest.Require(t)
	if race.Enabled {
		t.Skip("real packets and processes: runs in make test's pass without -race")
	}
	bin := p4ctlBinary(t, t.TempDir())
	for _, c := range []struct {
		sig   syscall.Signal
		after string // the log line the signal follows
	}{
		{syscall.SIGINT, "flows on"},
		{syscall.SIGTERM, "programming"},
		{syscall.SIGHUP, "flows on"},
		{syscall.SIGTERM, "flows on"},
		{syscall.SIGHUP, "programming"},
		// Before the flows start, while emulate still has lines to write.
		{syscall.SIGPIPE, "programming"},
	} {
		t.Run(fmt.Sprintf("%v after %q", c.sig, c.after), func(t *testing.T) {
			// Short: a Unix socket's path (the switches' control sockets
			// live in TMPDIR) holds at most 107 bytes.
			tmp, err := os.MkdirTemp("", "sig")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(tmp)
			work := t.TempDir()
			cmd := exec.Command(bin, "emulate", "--set", "workload.size=100MB", "-o", filepath.Join(work, "out"))
			// The switches' temporary directories go here, where this
			// test can see that none is left.
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			// Its output, stdout and stderr, into one pipe, as 2>&1 |.
			stderr, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stderr.Close()
			cmd.Stdout, cmd.Stderr = w, w
			err = cmd.Start()
			w.Close()
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if cmd.ProcessState == nil {
					cmd.Process.Kill()
					cmd.Wait()
				}
			}()
			log := &lines{}
			reached, eof := make(chan struct{}), make(chan struct{})
			go func() { log.read(stderr, c.after, reached); close(eof) }()
			select {
			case <-reached:
			case <-time.After(60 * time.Second):
				t.Fatalf("no %q in 60 s:\n%s", c.after, log)
			}
			pids := switchPIDs(log.String())
			made := madeBy(t, cmd.Process.Pid, nil)
			if len(pids) == 0 || len(made.ns) == 0 || len(made.links) == 0 {
				t.Fatalf("before the signal: switches %v, namespaces %v, links %v; want some of each:\n%s", pids, made.ns, made.links, log)
			}
			if c.sig == syscall.SIGPIPE {
				// As head does once it has its lines.
				stderr.Close()
			} else if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			ended := make(chan error, 1)
			go func() { ended <- cmd.Wait() }()
			select {
			case err = <-ended:
			case <-time.After(30 * time.Second):
				t.Fatalf("emulate still running 30 s after %v:\n%s", c.sig, log)
			}
			if c.sig != syscall.SIGPIPE {
				// Its last words, once the pipe's writers are gone.
				select {
				case <-eof:
				case <-time.After(10 * time.Second):
				}
			}
			var ee *exec.ExitError
			said := c.sig == syscall.SIGPIPE || strings.Contains(log.String(), "interrupted ("+c.sig.String()+")")
			if err == nil || !errors.As(err, &ee) || ee.ExitCode() != 128+int(c.sig) || !said {
				t.Errorf("after %v: %v, want exit %d saying it was interrupted:\n%s", c.sig, err, 128+int(c.sig), log)
			}
			left := madeBy(t, cmd.Process.Pid, made.labs)
			if len(left.ns)+len(left.links) > 0 {
				t.Errorf("left behind: namespaces %v, links %v", left.ns, left.links)
				remove(t, left)
			}
			for _, pid := range pids {
				if syscall.Kill(pid, 0) == nil {
					t.Errorf("switch process %d still runs", pid)
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			for _, dir := range []string{tmp, work} {
				if entries, _ := os.ReadDir(dir); len(entries) > 0 {
					var names []string
					for _, e := range entries {
						names = append(names, e.Name())
					}
					t.Errorf("%s holds %v, want nothing", dir, names)
				}
			}
		})
	}
}

// lines collects a process's output as it comes.
type lines struct {
	mu sync.Mutex
	b  strings.Builder
}

// read copies r, closing reached when a line contains want.
func (l *lines) read(r io.Reader, want string, reached chan struct{}) {
	sc := bufio.NewScanner(r)
	closed := false
	for sc.Scan() {
		l.mu.Lock()
		l.b.WriteString(sc.Text() + "\n")
		l.mu.Unlock()
		if !closed && strings.Contains(sc.Text(), want) {
			close(reached)
			closed = true
		}
	}
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// switchPIDs are the switch processes an emulation's log names.
func switchPIDs(log string) []int {
	var pids []int
	for _, m := range regexp.MustCompile(`switch \S+ \(PID (\d+)\)`).FindAllStringSubmatch(log, -1) {
		n, _ := strconv.Atoi(m[1])
		pids = append(pids, n)
	}
	return pids
}

// made is what an emulation process made: its namespaces, its labs
// (their random IDs) and their links.
type made struct {
	ns, links []string
	labs      map[string]bool
}

// madeBy finds the namespaces process pid made (named emu-PID-LAB-HOST)
// and the links (emu-LAB-N) of their labs and of labs, the ones found
// before.
func madeBy(t *testing.T, pid int, labs map[string]bool) made {
	t.Helper()
	m := made{labs: map[string]bool{}}
	for lab := range labs {
		m.labs[lab] = true
	}
	entries, _ := os.ReadDir("/run/netns")
	prefix := fmt.Sprintf("emu-%d-", pid)
	for _, e := range entries {
		if rest, ok := strings.CutPrefix(e.Name(), prefix); ok {
			m.ns = append(m.ns, e.Name())
			lab, _, _ := strings.Cut(rest, "-")
			m.labs[lab] = true
		}
	}
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		for lab := range m.labs {
			if strings.HasPrefix(i.Name, "emu-"+lab+"-") {
				m.links = append(m.links, i.Name)
			}
		}
	}
	return m
}

// remove deletes what a failed emulation left: its namespaces (unmounted
// and unlinked, as ip netns delete does) and links.
func remove(t *testing.T, m made) {
	t.Helper()
	for _, name := range m.links {
		if l, err := netlink.LinkByName(name); err == nil {
			if err := netlink.LinkDel(l); err != nil {
				t.Logf("delete link %s: %v", name, err)
			}
		}
	}
	for _, ns := range m.ns {
		path := filepath.Join("/run/netns", ns)
		if err := unix.Unmount(path, unix.MNT_DETACH); err != nil {
			t.Logf("unmount %s: %v", path, err)
		}
		os.Remove(path)
	}
}
