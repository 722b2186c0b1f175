package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The control socket is the switch's user's alone (mode 0600) even
// under umask 000, where a socket made in place is 0777 and any local
// user could change the switch's rates.
func TestControlSocketPrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	sock := filepath.Join(dir, "ctl.sock")
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuf
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"--no-p4", "--control", sock, "--", "--grpc-server-addr", "127.0.0.1:0"}, &stdout, &stderr)
	}()
	defer func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("exit %d: %s", code, stderr.String())
		}
	}()
	var st os.FileInfo
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var err error
		if st, err = os.Lstat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no control socket: %s", stderr.String())
		}
	}
	if st.Mode()&os.ModeSocket == 0 || st.Mode().Perm() != 0o600 {
		t.Errorf("control socket %v, want a socket of mode 0600", st.Mode())
	}
	if c, err := net.Dial("unix", sock); err != nil {
		t.Errorf("its owner cannot connect: %v", err)
	} else {
		c.Close()
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".p4sw*")); len(left) != 0 {
		t.Errorf("staging left behind: %v", left)
	}
}

// A symbolic link where the log or a pcap file goes is refused, exit 2,
// naming it; what it points at is left as it was.
func TestFilesNotThroughLinks(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink(victim, filepath.Join(dir, "s1.txt"))
	pcaps := filepath.Join(dir, "pcap")
	os.Mkdir(pcaps, 0o755)
	os.Symlink(victim, filepath.Join(pcaps, "lo_in.pcap"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--no-p4", "--log-file", filepath.Join(dir, "s1")}, "--log-file: " + filepath.Join(dir, "s1.txt") + " is a symbolic link"},
		{[]string{"--no-p4", "-i", "1@lo", "--pcap", pcaps}, "--pcap: " + filepath.Join(pcaps, "lo_in.pcap") + " is a symbolic link"},
	} {
		var stdout, stderr bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		code := run(ctx, append(c.args, "--", "--grpc-server-addr", "127.0.0.1:0"), &stdout, &stderr)
		cancel()
		if code != exitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", c.args, code, stderr.String(), c.want)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me" {
		t.Errorf("the link's target was written: %q", b)
	}
}

// A frame longer than a port takes (9,300 bytes on veths whose MTU lets
// it through) is dropped and counted, never forwarded cut: the control
// socket's port_stats and the exit summary count it on its port, and
// the frames around it are forwarded whole.
func TestLongFrameNotForwarded(t *testing.T) {
	socks, ports := twoHostsMTU(t, 9600)
	dir := t.TempDir()
	rt := filepath.Join(dir, "s1-runtime.json")
	if err := os.WriteFile(rt, []byte(entries), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "ctl.sock")
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuf
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"-i", "1@" + ports[1], "-i", "2@" + ports[2], rcmJSON, "--entries", rt, "--control", sock,
			"--", "--grpc-server-addr", "127.0.0.1:0"}, &stdout, &stderr)
	}()
	stopped := false
	stop := func() string {
		if !stopped {
			stopped = true
			cancel()
			if code := <-done; code != exitOK {
				t.Errorf("exit %d: %s", code, stderr.String())
			}
		}
		return stdout.String()
	}
	defer stop()
	small := udp(t, 1, 2)
	forwarded := func(f []byte) bool { return len(f) == len(small) }
	var got []byte
	for deadline := time.Now().Add(30 * time.Second); got == nil && time.Now().Before(deadline); {
		if err := socks[0].Send(small); err != nil {
			t.Fatal(err)
		}
		got, _ = socks[1].RecvMatching(100*time.Millisecond, forwarded)
	}
	if got == nil {
		t.Fatalf("the switch forwards nothing: %s", stderr.String())
	}
	long := append(append([]byte(nil), small...), make([]byte, 9300-len(small))...)
	if err := socks[0].Send(long); err != nil {
		t.Fatal(err)
	}
	// A marker after it: once the marker is through, so is the long
	// frame, or it never will be (a port's frames are taken in order).
	marker := append([]byte(nil), small...)
	marker[len(marker)-1] = 0x5a
	if err := socks[0].Send(marker); err != nil {
		t.Fatal(err)
	}
	var big []byte
	if _, err := socks[1].RecvMatching(10*time.Second, func(f []byte) bool {
		if len(f) > len(small) {
			big = f
		}
		return forwarded(f) && f[len(f)-1] == 0x5a
	}); err != nil {
		t.Fatalf("the frame after the long one: %v", err)
	}
	if big != nil {
		t.Errorf("a frame of %d bytes left port 2: the 9300-byte frame forwarded cut", len(big))
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(c, "port_stats")
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var lines []string
	for sc := bufio.NewScanner(c); sc.Scan() && sc.Text() != "ok"; {
		lines = append(lines, sc.Text())
	}
	c.Close()
	if len(lines) != 2 || !strings.Contains(lines[0], "port 1 (") || !strings.HasSuffix(lines[0], ", 1 dropped as longer than 9216 bytes") ||
		!strings.HasSuffix(lines[1], ", 0 dropped as longer than 9216 bytes") {
		t.Errorf("port_stats: %q", lines)
	}
	if out := stop(); !regexp.MustCompile(`port 1 \([^)]*\): \d+ frames in, \d+ out, \d+ dropped at full queues, 1 dropped as longer than 9216 bytes`).MatchString(out) {
		t.Errorf("exit summary: %s", out)
	}
}
