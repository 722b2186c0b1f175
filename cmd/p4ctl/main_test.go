package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/p4rcm/p4rcm/controlplane"
)

// p4ctl runs the command line in-process and returns its exit status and
// output.
func p4ctl(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestBufferTrident2(t *testing.T) {
	code, out, errOut := p4ctl("buffer", "--preset", "trident2")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"t_PFC (XOFF)  <=    24.47 KB",
		"XON           =     21.47 KB",
		"t_ECN         <      0.76 KB  t_PFC / n                   bound by ECN-before-PFC: INFEASIBLE, under one MTU (1500 B)",
		"t_flight used                          22.40 KB",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Dynamic thresholds, beta") {
		t.Error("dynamic section printed without --beta")
	}
}

func TestBufferTrident2Beta8(t *testing.T) {
	code, out, _ := p4ctl("buffer", "--preset", "trident2", "--beta", "8")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	want := "t_ECN                <     21.75 KB  beta (B - p n t_flight) / (p n (beta + 1))"
	if !strings.Contains(out, "Dynamic thresholds, beta 8") || !strings.Contains(out, want) {
		t.Errorf("output lacks the beta 8 bound %q:\n%s", want, out)
	}
}

func TestBufferJSONHasTheSameNumbers(t *testing.T) {
	code, out, _ := p4ctl("buffer", "--preset", "trident2", "--beta", "8", "--json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var got struct {
		Static struct {
			TPFC     struct{ KB float64 } `json:"t_pfc"`
			TECN     struct{ KB float64 } `json:"t_ecn_bound"`
			Feasible bool                 `json:"t_ecn_feasible"`
		} `json:"static"`
		Dynamic struct {
			Beta float64              `json:"beta"`
			TECN struct{ KB float64 } `json:"t_ecn_bound"`
		} `json:"dynamic"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if got.Static.TPFC.KB != 24.47 || got.Static.TECN.KB != 0.76 || got.Static.Feasible {
		t.Errorf("static = %+v, want t_PFC 24.47, t_ECN 0.76, infeasible", got.Static)
	}
	if got.Dynamic.Beta != 8 || got.Dynamic.TECN.KB != 21.75 {
		t.Errorf("dynamic = %+v, want beta 8, t_ECN 21.75", got.Dynamic)
	}
}

func TestBufferOverrides(t *testing.T) {
	// A 25 Gb/s, 48-port switch with 16 MiB and one lossless priority,
	// headroom from the link model.
	code, out, errOut := p4ctl("buffer", "--ports", "48", "--rate", "25G", "--buffer", "16MiB", "--priorities", "1", "--cable", "10m", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var a struct {
		Switch struct {
			Ports  int     `json:"ports"`
			Rate   float64 `json:"port_rate_bps"`
			Buffer float64 `json:"buffer_bytes"`
		} `json:"switch"`
		Headroom struct {
			Given bool    `json:"given"`
			Cable float64 `json:"cable_m"`
		} `json:"headroom"`
	}
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatal(err)
	}
	if a.Switch.Ports != 48 || a.Switch.Rate != 25e9 || a.Switch.Buffer != 16<<20 {
		t.Errorf("switch = %+v", a.Switch)
	}
	// The preset's stated 22.4 KB belongs to its 40 Gb/s link: a new rate
	// must fall back to the model.
	if a.Headroom.Given || a.Headroom.Cable != 10 {
		t.Errorf("headroom = %+v, want the model on a 10 m cable", a.Headroom)
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string // in the one-line message
	}{
		{[]string{"buffer", "--buffer", "-1MB"}, "--buffer"},
		{[]string{"buffer", "--buffer", "12XB"}, "--buffer"},
		{[]string{"buffer", "--buffer", "0"}, "--buffer"},
		{[]string{"buffer", "--rate", "40"}, "--rate"},
		{[]string{"buffer", "--ports", "-3"}, "--ports"},
		{[]string{"buffer", "--mtu", "0B"}, "--mtu"},
		{[]string{"buffer", "--headroom", "1MB"}, "--headroom"},
		{[]string{"buffer", "--preset", "nosuch"}, "--preset"},
		{[]string{"buffer", "--preset", "tomahawk", "--priorities", "8"}, "--headroom"},
		{[]string{"buffer", "--priorities", "9"}, "--priorities"},
		{[]string{"buffer", "--beta", "x"}, "--beta"},
		{[]string{"buffer", "--nosuch"}, "unknown flag"},
		{[]string{"buffer", "stray"}, "stray"},
		{[]string{"nosuch"}, "unknown command"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := p4ctl(tt.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if out != "" {
				t.Errorf("stdout not empty on error: %q", out)
			}
			if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tt.want) ||
				!(strings.Contains(errOut, "--help") || strings.Contains(errOut, "presets")) {
				t.Errorf("stderr %q: want one line naming %q and saying where to look", errOut, tt.want)
			}
		})
	}
}

func TestRuntimeErrorsExitOne(t *testing.T) {
	if got := exitCode(errors.New("switch unreachable")); got != exitRuntime {
		t.Errorf("plain error exits %d, want %d", got, exitRuntime)
	}
	if got := exitCode(usageErrorf("bad flag")); got != exitUsage {
		t.Errorf("usage error exits %d, want %d", got, exitUsage)
	}
}

func TestHelpOnEveryCommand(t *testing.T) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.Fields(c.CommandPath())[1:]
		code, out, _ := p4ctl(append(path, "--help")...)
		if code != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("%q --help: exit %d, output %q", c.CommandPath(), code, out)
		}
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				walk(sub)
			}
		}
	}
	walk(newRootCmd(nil, nil))
}

func TestVersion(t *testing.T) {
	code, out, _ := p4ctl("version")
	if code != 0 || !strings.HasPrefix(out, "p4ctl ") || !strings.Contains(out, "go1.") {
		t.Errorf("version: exit %d, %q", code, out)
	}
}

func TestBufferPresets(t *testing.T) {
	code, out, _ := p4ctl("buffer", "presets")
	if code != 0 || !strings.Contains(out, "trident2") || !strings.Contains(out, "tomahawk") {
		t.Errorf("presets: exit %d\n%s", code, out)
	}
}

// TestBinaryExitStatus runs the built binary, as a shell would, for the exit
// statuses main passes to the operating system.
func TestBinaryExitStatus(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "p4ctl")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"buffer", "--preset", "trident2"}, 0},
		{[]string{"buffer", "--buffer", "-1MB"}, 2},
	} {
		var stderr bytes.Buffer
		cmd := exec.Command(bin, tt.args...)
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tt.code {
			t.Errorf("p4ctl %s: exit %d, want %d (stderr %q)", strings.Join(tt.args, " "), code, tt.code, stderr.String())
		}
	}
}

// 'p4ctl p4switch' is the p4switch command, its flags and exit statuses
// its own: a wrong start exits 2 naming what is wrong.
func TestP4switchCommand(t *testing.T) {
	code, _, errOut := p4ctl("p4switch", "-i", "1", "../../p4/build/rcm.json")
	if code != 2 || !strings.Contains(errOut, "p4switch: -i \"1\": want PORT@IFACE") {
		t.Errorf("exit %d, %q; want 2 and p4switch's own message", code, errOut)
	}
	code, out, _ := p4ctl("p4switch", "--help")
	if code != 0 || !strings.Contains(out, "simple_switch_grpc") {
		t.Errorf("--help: exit %d, %q", code, out)
	}
}

// The docs' `p4ctl pipeline set` line is what it prints for the
// committed rcm.p4: its tables, actions and cookie, which change with
// every build of the program.
func TestDocsPipelineLine(t *testing.T) {
	p, err := controlplane.ReadPipeline("../../p4/build/rcm.p4info.txtpb", "../../p4/build/rcm.json", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("pipeline set on device 0 at 127.0.0.1:9559: %d tables, %d actions, cookie %#x",
		len(p.Info.Tables), len(p.Info.Actions), p.Cookie)
	for _, doc := range []string{"../../docs/controller.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s: no %q: run the session again and paste what it prints", doc, want)
		}
	}
}
