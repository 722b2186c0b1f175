//go:build linux

package test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/internal/labtest"
	"github.com/p4rcm/p4rcm/internal/race"
)

// docsIndex is the page whose commands TestDocsIndex runs.
const docsIndex = "../docs/README.md"

// A commandBlock is a fenced block of commands ("$ " lines), each with the
// lines the page shows it printing.
type commandBlock struct {
	line     int // of the block's first command, for messages
	commands []indexCommand
}

type indexCommand struct {
	text string
	// shown are the lines under the command; "..." stands for lines left
	// out.
	shown []string
}

// background says whether c runs in the background ("... &").
func (c indexCommand) background() bool { return strings.HasSuffix(c.text, " &") }

// commandBlocks reads the fenced blocks of doc that hold commands.
func commandBlocks(doc string) []commandBlock {
	var blocks []commandBlock
	var cur *commandBlock
	in := false
	for i, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			if in && cur != nil {
				blocks = append(blocks, *cur)
			}
			in, cur = !in, nil
			continue
		}
		if !in {
			continue
		}
		if text, ok := strings.CutPrefix(line, "$ "); ok {
			if cur == nil {
				cur = &commandBlock{line: i + 1}
			}
			cur.commands = append(cur.commands, indexCommand{text: text})
		} else if cur != nil {
			last := &cur.commands[len(cur.commands)-1]
			last.shown = append(last.shown, line)
		}
	}
	return blocks
}

// TestDocsIndex runs every command of docs/README.md as the page writes
// it, block by block, in a copy of the checkout with nothing on the PATH
// but Go and the system's own directories (offline, from the module and
// build caches the tests use): the Go target and everything else must
// come from the checkout. Each block runs in network, mount and PID
// namespaces of its own, so that a switch's port 9559 meets no one's and
// nothing it starts outlives it; a command ending in " &" runs in the
// background until the block ends, and the next waits for the first line
// the page shows it printing. Every command must succeed, print the lines
// the page shows (in order; "..." for lines left out), and leave no
// process, network namespace or interface behind.
func TestDocsIndex(t *testing.T) {
	labtest.Require(t)
	if race.Enabled {
		t.Skip("real packets: runs in make test's pass without -race")
	}
	doc, err := os.ReadFile(docsIndex)
	if err != nil {
		t.Fatal(err)
	}
	blocks := commandBlocks(string(doc))
	if len(blocks) < 5 {
		t.Fatalf("%s: %d blocks of commands; want one for each task", docsIndex, len(blocks))
	}
	dir := t.TempDir()
	copyCheckout(t, "..", dir)
	goenv := func(v string) string {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	env := []string{"PATH=" + filepath.Join(goenv("GOROOT"), "bin") + ":/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + os.Getenv("HOME"), "GOPROXY=off", "GOFLAGS=-mod=readonly", "GOTOOLCHAIN=local"}
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		env = append(env, v+"="+goenv(v))
	}
	if err := os.MkdirAll("/run/netns", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		t.Run(fmt.Sprintf("line %d", b.line), func(t *testing.T) {
			runCommandBlock(t, b, dir, env)
		})
	}
}

// runCommandBlock runs a block's commands in dir as one script and checks
// what each printed.
func runCommandBlock(t *testing.T, b commandBlock, dir string, env []string) {
	logs := t.TempDir()
	script := []string{"set -e", "mount -t tmpfs p4rcm-docs /run/netns", "ip link set lo up"}
	for i, c := range b.commands {
		script = append(script, fmt.Sprintf("echo @@%d", i))
		if !c.background() {
			script = append(script, c.text+" 2>&1")
			continue
		}
		log := filepath.Join(logs, fmt.Sprint(i))
		script = append(script, fmt.Sprintf("setsid %s > %s 2>&1", strings.TrimSuffix(c.text, "&"), log)+" &", fmt.Sprintf("BG%d=$!", i))
		if len(c.shown) > 0 {
			// Wait for the line the page shows it printing first.
			script = append(script, fmt.Sprintf("for i in $(seq 600); do grep -qF %s %s && break; sleep 0.2; done; cat %s",
				shellQuote(c.shown[0]), log, log))
		}
	}
	// The background commands stopped as Ctrl-C stops them, then what is
	// left: processes but this script's, namespaces, interfaces but lo.
	script = append(script, "echo @@end")
	for i, c := range b.commands {
		if c.background() {
			script = append(script, fmt.Sprintf("kill -INT -$BG%d 2>/dev/null || true; wait $BG%d || true", i, i))
		}
	}
	script = append(script, "for p in /proc/[0-9]*; do [ $p = /proc/$$ ] || [ $p = /proc/self ] || cat $p/comm 2>/dev/null || true; done",
		"ls /run/netns", "ip -o link show | grep -v ': lo:' || true")
	cmd := exec.Command("unshare", "--net", "--mount", "--propagation", "private", "--pid", "--fork", "--mount-proc",
		"sh", "-c", strings.Join(script, "\n"))
	cmd.Dir, cmd.Env = dir, env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("%.0f s:\n%s", time.Since(start).Seconds(), out)
	if err != nil {
		t.Fatalf("the block at line %d: %v", b.line, err)
	}
	text := string(out)
	for i := len(b.commands) - 1; i >= 0; i-- {
		before, printed, _ := strings.Cut(text, fmt.Sprintf("@@%d\n", i))
		printed, _, _ = strings.Cut(printed, "@@end\n")
		if err := showsLines(printed, b.commands[i].shown); err != nil {
			t.Errorf("$ %s: %v\nit printed:\n%s", b.commands[i].text, err, printed)
		}
		text = before
	}
	_, left, _ := strings.Cut(string(out), "@@end\n")
	var procs []string
	for _, l := range strings.Split(strings.TrimSpace(left), "\n") {
		if l != "" && l != "sh" && l != "cat" && l != "ls" && l != "ip" && l != "grep" {
			procs = append(procs, l)
		}
	}
	if len(procs) > 0 {
		t.Errorf("left behind: %v", procs)
	}
}

// showsLines checks that out holds the lines shown, in order, each whole;
// "..." stands for any lines.
func showsLines(out string, shown []string) error {
	lines := strings.Split(out, "\n")
	next := 0
	for _, want := range shown {
		if want == "..." || want == "" {
			continue
		}
		found := false
		for next < len(lines) {
			next++
			if strings.TrimRight(lines[next-1], " ") == strings.TrimRight(want, " ") {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("no line %q (in the page's order)", want)
		}
	}
	return nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

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
