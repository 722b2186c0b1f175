//go:build linux

package test

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/internal/race"
	"github.com/p4rcm/p4rcm/netlab"
)

// The README's `go run ./cmd/p4ctl emulate`, as written, on a clean copy
// of the checkout with nothing on the PATH but Go: it needs no p4switch
// or anything else installed, and leaves nothing behind.
func TestReadmeEmulateOnCleanCheckout(t *testing.T) {
	if err := netlab.Available(); err != nil {
		t.Skip(err)
	}
	if race.Enabled {
		t.Skip("real packets: runs in make test's pass without -race")
	}
	command := readmeCommand(t, "go run ./cmd/p4ctl emulate")
	dir := t.TempDir()
	copyCheckout(t, "..", dir)
	goenv := func(v string) string {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	// Go's own directory alone on the PATH; offline, from the module and
	// build caches the tests use.
	env := []string{"PATH=" + filepath.Join(goenv("GOROOT"), "bin"), "HOME=" + os.Getenv("HOME"),
		"GOPROXY=off", "GOFLAGS=-mod=readonly", "GOTOOLCHAIN=local"}
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		env = append(env, v+"="+goenv(v))
	}
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Dir, cmd.Env = dir, env
	before := leftovers(t)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("%s (%.0f s):\n%s", command, time.Since(start).Seconds(), out)
	if err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	if !strings.Contains(string(out), "results in p4rcm-out/") {
		t.Error("no results written")
	}
	if after := leftovers(t); after != before {
		t.Errorf("left behind:\nbefore %s\nafter  %s", before, after)
	}
}

// readmeCommand is the README's line that starts with prefix, its
// comment cut off.
func readmeCommand(t *testing.T, prefix string) string {
	t.Helper()
	f, err := os.Open("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, prefix) {
			line, _, _ = strings.Cut(line, "#")
			return strings.TrimSpace(line)
		}
	}
	t.Fatalf("README.md has no line starting %q", prefix)
	return ""
}

// copyCheckout copies the files of the checkout at src that git would
// keep (all but .git and what .gitignore names) to dst.
func copyCheckout(t *testing.T, src, dst string) {
	t.Helper()
	ignore, err := os.ReadFile(filepath.Join(src, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, p := range strings.Split(string(ignore), "\n") {
		if p = strings.TrimSpace(p); p != "" && !strings.HasPrefix(p, "#") {
			patterns = append(patterns, p)
		}
	}
	ignored := func(rel string, dir bool) bool {
		for _, p := range patterns {
			if strings.HasSuffix(p, "/") && !dir {
				continue
			}
			p = strings.TrimSuffix(p, "/")
			name := filepath.Base(rel)
			if strings.HasPrefix(p, "/") {
				name, p = rel, p[1:]
			}
			if ok, _ := filepath.Match(p, name); ok {
				return true
			}
		}
		return false
	}
	err = filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if rel == "." {
			return nil
		}
		if rel == ".git" || ignored(rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		info, err := in.Stat()
		if err != nil {
			return err
		}
		out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}
