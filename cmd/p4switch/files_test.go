package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
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
