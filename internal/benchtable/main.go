// Command benchtable runs p4rcm's benchmarks and writes BENCHMARKS.md:
// one table per area, each row what it measures, the command that
// measures it, the baseline measured in the same run, today's figure and
// the target. `make bench` runs it from the repository's root:
//
//	go run ./internal/benchtable [-area ns3,sim,...] [-ns3 DIR]
//
// The figures of each area are kept in measured.json beside this file,
// so that re-running one area rewrites its table and keeps the others.
// Each area's table says when, at which commit and on what machine it
// was measured, and how loaded the machine was.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// measured is measured.json: each area's last measurement by its key.
type measured map[string]areaRun

// areaRun is one measurement of an area.
type areaRun struct {
	Date    string   `json:"date"`
	Commit  string   `json:"commit"`
	Machine string   `json:"machine"`
	Load    string   `json:"load"`
	Results []result `json:"results"`
}

func main() {
	out := flag.String("o", "BENCHMARKS.md", "the page to write")
	store := flag.String("measured", "internal/benchtable/measured.json", "the figures of every area, read and written")
	only := flag.String("area", "", "measure only these areas, comma-separated: "+strings.Join(areaKeys(), ", "))
	ns3 := flag.String("ns3", "", "a build of the ns-3 RDMA simulator (its simulation/ directory holds build/ and "+ns3Config+"); without it its row says it is not built here")
	logDir := flag.String("log", "", "keep each command's output in this directory")
	render := flag.Bool("render", false, "measure nothing: write the page from the figures kept")
	flag.Parse()
	if err := run(*out, *store, *only, *ns3, *logDir, *render); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

func areaKeys() []string {
	var keys []string
	for _, a := range areas {
		keys = append(keys, a.Key)
	}
	return keys
}

func run(out, store, only, ns3, logDir string, renderOnly bool) error {
	m := measured{}
	if data, err := os.ReadFile(store); err == nil {
		if err := json.Unmarshal(data, &m); err != nil {
			return fmt.Errorf("%s: %w", store, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if !renderOnly {
		selected := areaKeys()
		if only != "" {
			selected = strings.Split(only, ",")
			for _, k := range selected {
				if !slices.Contains(areaKeys(), k) {
					return fmt.Errorf("-area %s: want some of %s", k, strings.Join(areaKeys(), ", "))
				}
			}
		}
		e, err := newEnv(ns3, logDir)
		if err != nil {
			return err
		}
		defer e.close()
		for _, a := range areas {
			if !slices.Contains(selected, a.Key) {
				continue
			}
			r, err := e.measure(a)
			if err != nil {
				return fmt.Errorf("%s: %w", a.Title, err)
			}
			m[a.Key] = r
			// Kept after every area, so that a failure later loses none.
			if err := writeStore(store, m); err != nil {
				return err
			}
		}
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	writePage(f, m)
	if err := f.Close(); err != nil {
		return err
	}
	writePage(os.Stdout, m)
	return nil
}

func writeStore(path string, m measured) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// env is where the rows' commands run: the repository's root, with the
// p4ctl of this checkout first on the PATH and a temporary directory of
// their own as TMPDIR.
type env struct {
	tmp, ns3, logDir string
	// outputs are the commands' outputs, so that rows that read one
	// command run it once.
	outputs map[string]string
	// logged counts the commands run, to name their logs.
	logged int
}

func newEnv(ns3, logDir string) (*env, error) {
	tmp, err := os.MkdirTemp("", "benchtable")
	if err != nil {
		return nil, err
	}
	e := &env{tmp: tmp, ns3: ns3, logDir: logDir, outputs: map[string]string{}}
	e.logf("building p4ctl")
	if out, err := exec.Command("go", "build", "-o", filepath.Join(tmp, "p4ctl"), "./cmd/p4ctl").CombinedOutput(); err != nil {
		e.close()
		return nil, fmt.Errorf("go build ./cmd/p4ctl: %v\n%s", err, out)
	}
	if logDir != "" {
		if err := os.MkdirAll(logDir, 0o755); err != nil {
			return nil, err
		}
	}
	return e, nil
}

func (e *env) close() { os.RemoveAll(e.tmp) }

func (e *env) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benchtable: "+format+"\n", args...)
}

// run runs command by sh and returns what it printed, the first time;
// later calls return the same output.
func (e *env) run(command string) (string, error) {
	if out, ok := e.outputs[command]; ok {
		return out, nil
	}
	out, err := e.runAgain(command)
	if err == nil {
		e.outputs[command] = out
	}
	return out, err
}

// runAgain runs command by sh and returns what it printed, every time:
// for a measurement repeated on purpose.
func (e *env) runAgain(command string) (string, error) {
	e.logf("%s", command)
	cmd := exec.Command("sh", "-c", command)
	cmd.Env = append(os.Environ(), "PATH="+e.tmp+":"+os.Getenv("PATH"), "TMPDIR="+e.tmp)
	start := time.Now()
	b, err := cmd.CombinedOutput()
	out := string(b)
	e.logf("... %.0f s", time.Since(start).Seconds())
	if e.logDir != "" {
		name := fmt.Sprintf("%02d.txt", e.logged)
		_ = os.WriteFile(filepath.Join(e.logDir, name), []byte("$ "+command+"\n"+out), 0o644)
	}
	e.logged++
	if err != nil {
		return "", fmt.Errorf("%s: %v\n%s", command, err, lastLines(out, 20))
	}
	return out, nil
}

func (e *env) json(command string, v any) error {
	out, err := e.run(command)
	if err != nil {
		return err
	}
	return parseCommandJSON(command, out, v)
}

// jsonAgain is json for a command run again on purpose (runAgain).
func (e *env) jsonAgain(command string, v any) error {
	out, err := e.runAgain(command)
	if err != nil {
		return err
	}
	return parseCommandJSON(command, out, v)
}

// parseCommandJSON is parseJSON naming command in its error.
func parseCommandJSON(command, out string, v any) error {
	if err := parseJSON(out, v); err != nil {
		return fmt.Errorf("%s: %w", command, err)
	}
	return nil
}

func (e *env) goBench(command string) (goBench, error) {
	out, err := e.run(command)
	if err != nil {
		return nil, err
	}
	return parseGoBench(out), nil
}

// medians runs command, a go test -bench, and returns the median of
// each named benchmark's values in unit.
func (e *env) medians(command, unit string, names ...string) ([]float64, error) {
	g, err := e.goBench(command)
	if err != nil {
		return nil, err
	}
	m := make([]float64, len(names))
	for i, name := range names {
		if m[i], err = g.median(name, unit); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// measure runs an area's rows.
func (e *env) measure(a area) (areaRun, error) {
	r := areaRun{Date: time.Now().UTC().Format("2006-01-02"), Commit: commit(), Machine: machine()}
	before := loadAverage()
	for _, row := range a.Rows {
		res, err := row.Measure(e, row)
		if err != nil {
			return r, fmt.Errorf("%s: %w", row.What, err)
		}
		r.Results = append(r.Results, res)
	}
	r.Load = fmt.Sprintf("%s before, %s after", before, loadAverage())
	return r, nil
}

func commit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	// Pages and the figures kept change nothing measured.
	st, _ := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	for _, l := range strings.Split(strings.TrimSpace(string(st)), "\n") {
		if l != "" && !strings.HasSuffix(l, ".md") && !strings.HasSuffix(l, "measured.json") {
			return c + " with changes"
		}
	}
	return c
}

// machine describes the machine: cores, processor, memory, Go.
func machine() string {
	model, mem := "", ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			mem = fmt.Sprintf(", %d GiB", (kb+1<<19)>>20)
		}
	}
	return fmt.Sprintf("%d cores (%s)%s, %s", runtime.NumCPU(), model, mem, runtime.Version())
}

// loadAverage is the one-minute load average.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// writePage writes BENCHMARKS.md.
func writePage(w io.Writer, m measured) {
	fmt.Fprint(w, `# Benchmarks

Each table is one area, measured by one run of `+"`make bench`"+` (or
`+"`make bench AREA=key`"+` for that area alone), which runs every command below
and writes this page. Each row gives what is measured, the command that
measures it (run in the repository's root, the checkout's `+"`p4ctl`"+` on the
PATH), the baseline measured in the same run, today's figure and the
target. Figures from another machine are never quoted: a row that cannot
be measured here says so. `+"`git log -p BENCHMARKS.md`"+` has every earlier
figure. docs/develop.md says how to add a row.
`)
	for _, a := range areas {
		fmt.Fprintf(w, "\n## %s\n\n%s\n\n", a.Title, wrap(a.About, 76))
		run, ok := m[a.Key]
		if !ok || len(run.Results) != len(a.Rows) {
			fmt.Fprintf(w, "Not measured yet: `make bench AREA=%s`.\n", a.Key)
			continue
		}
		fmt.Fprintf(w, "Measured %s at %s (`make bench AREA=%s`) on %s; load average %s.\n\n",
			run.Date, run.Commit, a.Key, run.Machine, run.Load)
		fmt.Fprintln(w, "| what | command | baseline, same run | today | target |")
		fmt.Fprintln(w, "|---|---|---|---|---|")
		for i, row := range a.Rows {
			res := run.Results[i]
			target := row.Target
			if res.Verdict != "" {
				target += ": " + res.Verdict
			}
			command := row.Command
			if !strings.HasPrefix(command, "`") {
				command = "`" + command + "`"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", row.What, command, res.Baseline, res.Figure, target)
		}
	}
}

// wrap breaks text into lines of at most width characters.
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for _, word := range strings.Fields(text) {
		if n > 0 && n+1+len(word) > width {
			b.WriteByte('\n')
			n = 0
		} else if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	return b.String()
}
