//go:build linux

package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/p4rcm/p4rcm/agent"
	"github.com/p4rcm/p4rcm/controlplane"
)

// snakeKey is the one key style of every --json: lower snake_case.
var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// jsonKeys lists the keys of doc (JSON, or JSON lines) that are not in
// snake_case, skipping the maps whose keys are data (names given as
// they are in the program or the topology).
func jsonKeys(t *testing.T, doc string, dataMaps ...string) []string {
	t.Helper()
	var bad []string
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case map[string]any:
			for k, y := range x {
				if !snakeKey.MatchString(k) && !slices.Contains(dataMaps, path) {
					bad = append(bad, path+"."+k)
				}
				walk(y, path+"."+k)
			}
		case []any:
			for _, y := range x {
				walk(y, path+"[]")
			}
		}
	}
	dec := json.NewDecoder(strings.NewReader(doc))
	for dec.More() {
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("not JSON: %v:\n%s", err, doc)
		}
		walk(v, "")
	}
	return bad
}

// Every --json output, and p4ctl host's records, in one key style:
// snake_case (units in the name: fct_ns, size_bytes).
func TestJSONKeysOneStyle(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"buffer", "--preset", "trident2", "--beta", "8", "--json"},
		{"buffer", "presets", "--json"},
		{"sim", "presets", "--json"},
		{"sim", "run", "--preset", "dcqcn-incast", "--set", "stop=200us", "-q", "--json", "-o", filepath.Join(dir, "run")},
	} {
		code, out, errOut := p4ctl(args...)
		if code != 0 {
			t.Fatalf("p4ctl %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		if bad := jsonKeys(t, out, ".drops.by_reason"); len(bad) > 0 {
			t.Errorf("p4ctl %s: keys not in snake_case: %v", strings.Join(args, " "), bad)
		}
	}
	// The types p4ctl prints that need a switch or a host to print.
	for _, v := range []any{
		hostRecord{Host: "h1", Flow: &agent.Result{ID: 1}, FCTNs: 1},
		hostRecord{Host: "h1", Stats: &agent.Stats{}},
		[]controlplane.CounterCell{{Index: 1}},
		[]PortStats{{Port: 1, Counters: map[string]int64{statKey(statColumns[0].head): 1, statKey(statColumns[4].head): 2}}},
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if bad := jsonKeys(t, string(b)); len(bad) > 0 {
			t.Errorf("%T: keys not in snake_case: %v in %s", v, bad, b)
		}
	}
}
