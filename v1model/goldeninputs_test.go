package v1model

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// The golden cases' inputs are what the scripts the recording steps
// name write (docs/target.md): every committed case, with the same
// program, entries, frames, rates and notes, so that re-recording them
// all, from one build, records these cases and no others. Run from
// another directory, the scripts write beside themselves, where the
// recorder reads, and nothing where they were run from.
func TestGoldenInputsFromScripts(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 to run the golden cases' scripts")
	}
	dir := filepath.Join("testdata", "golden")
	// A copy of the scripts, run from elsewhere without --out: their
	// files must land beside them.
	scripts, cwd := t.TempDir(), t.TempDir()
	for _, f := range []string{"cases.py", "programs.py", "framing.py"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(scripts, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, script := range []string{"cases.py", "programs.py"} {
		cmd := exec.Command(python, filepath.Join(scripts, script))
		cmd.Dir = cwd
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", script, err, out)
		}
	}
	if stray, _ := os.ReadDir(cwd); len(stray) > 0 {
		t.Errorf("the scripts wrote %d files where they were run from, not beside themselves", len(stray))
	}
	written, _ := filepath.Glob(filepath.Join(scripts, "*.json"))
	committed, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	names := func(paths []string) []string {
		var out []string
		for _, p := range paths {
			out = append(out, filepath.Base(p))
		}
		slices.Sort(out)
		return out
	}
	if w, c := names(written), names(committed); !slices.Equal(w, c) {
		t.Errorf("the scripts write\n%v\nthe directory holds\n%v", w, c)
	}
	// What the recorder fills in (sent, counters, registers, digests,
	// recorded_with, digests_recorded) is not an input.
	inputs := []string{"about", "program", "runtime", "ports", "packets", "queue_rates", "priority_queues", "skip_registers", "skip_counters"}
	read := func(path string) map[string]any {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return m
	}
	for _, name := range names(committed) {
		got, want := read(filepath.Join(scripts, name)), read(filepath.Join(dir, name))
		if filepath.Ext(filepath.Base(name[:len(name)-len(".json")])) == ".runtime" {
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: the script writes other entries than the committed file's", name)
			}
			continue
		}
		for _, k := range inputs {
			if !reflect.DeepEqual(got[k], want[k]) {
				t.Errorf("%s: %s: the script writes %v, the committed file holds %v", name, k, short(got[k]), short(want[k]))
			}
		}
	}
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 120 {
		return string(b[:120]) + "..."
	}
	return string(b)
}
