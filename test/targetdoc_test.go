//go:build linux

package test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/p4rcm/p4rcm/internal/labtest"
	"github.com/p4rcm/p4rcm/internal/race"
)

// docs/target.md's recipe, its commands as the page writes them, in a
// network namespace (and a mount namespace, for /run/netns) of this
// test's own, so that its names and its port 9559 meet no one's: the
// namespaces and veths, p4switch with rcm.p4 and its entries, the ping,
// then `p4ctl stats` and `table dump` with p4ctl's defaults, which read
// the switch as started (the dump as the page shows it), and Ctrl-C,
// after which p4switch prints its ports' counts.
func TestTargetDocRecipe(t *testing.T) {
	labtest.Require(t)
	if race.Enabled {
		t.Skip("real packets: runs in make test's pass without -race")
	}
	for _, bin := range []string{"ip", "ethtool", "ping", "unshare", "setsid"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s is not installed: docs/target.md's recipe needs it (apt-get install iproute2 ethtool iputils-ping)", bin)
		}
	}
	doc, err := os.ReadFile("../docs/target.md")
	if err != nil {
		t.Fatal(err)
	}
	setup := docBlock(t, string(doc), "for n in 1 2; do")
	sw := docCommand(t, string(doc), "go run ./cmd/p4switch ")
	ping := docCommand(t, string(doc), "ip netns exec h1 ping ")
	stats := docCommand(t, string(doc), "go run ./cmd/p4ctl stats")
	dump := docCommand(t, string(doc), "go run ./cmd/p4ctl table dump ")
	wantDump := docOutput(t, string(doc), dump)
	log := t.TempDir() + "/p4switch.log"
	script := strings.Join([]string{
		"set -e",
		"mount -t tmpfs p4rcm-doc /run/netns",
		"ip link set lo up",
		setup,
		// The switch in a process group of its own, for Ctrl-C.
		"setsid " + sw + " > " + log + " 2>&1 &",
		"SW=$!",
		"for i in $(seq 600); do grep -q 'p4switch: running' " + log + " && break; sleep 0.2; done",
		ping,
		"echo @@stats", stats,
		"echo @@dump", dump,
		"kill -INT -$SW",
		"wait $SW || true",
		"echo @@log", "cat " + log,
	}, "\n")
	if err := os.MkdirAll("/run/netns", 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("unshare", "--net", "--mount", "--propagation", "private", "sh", "-c", script)
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("the recipe: %v", err)
	}
	text := string(out)
	_, after, _ := strings.Cut(text, "@@stats\n")
	statsOut, after, _ := strings.Cut(after, "@@dump\n")
	dumpOut, logOut, _ := strings.Cut(after, "@@log\n")
	rows := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(statsOut), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 2 {
			rows[f[0]], _ = strconv.Atoi(f[1])
		}
	}
	if !strings.Contains(statsOut, "PORT  RX") || rows["1"] < 3 || rows["2"] < 3 {
		t.Errorf("p4ctl stats printed\n%s\nwant the three pings received on ports 1 and 2", statsOut)
	}
	if strings.TrimSpace(dumpOut) != wantDump {
		t.Errorf("p4ctl table dump printed\n%s\nwant, as docs/target.md shows,\n%s", dumpOut, wantDump)
	}
	for _, w := range []string{"P4Runtime pipeline cookie", "p4switch: port 1 (veth1):", "p4switch: port 2 (veth2):"} {
		if !strings.Contains(logOut, w) {
			t.Errorf("p4switch's output lacks %q:\n%s", w, logOut)
		}
	}
}

// docBlock is the fenced block of doc that holds line.
func docBlock(t *testing.T, doc, line string) string {
	t.Helper()
	for i, block := range strings.Split(doc, "```") {
		if i%2 == 1 && strings.Contains(block, line) {
			return strings.TrimSpace(block)
		}
	}
	t.Fatalf("no block with %q", line)
	return ""
}

// docCommand is the command of doc's line "$ " + prefix...
func docCommand(t *testing.T, doc, prefix string) string {
	t.Helper()
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "$ "+prefix) {
			return strings.TrimPrefix(line, "$ ")
		}
	}
	t.Fatalf("no line \"$ %s...\"", prefix)
	return ""
}

// docOutput is what doc shows command printing: the lines after it, up
// to the next command or the block's end.
func docOutput(t *testing.T, doc, command string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "$ "+command+"\n")
	if !ok {
		t.Fatalf("no %q", command)
	}
	var out []string
	for _, line := range strings.Split(rest, "\n") {
		if strings.HasPrefix(line, "$ ") || strings.HasPrefix(line, "```") {
			break
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
