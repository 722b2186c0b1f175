package controlplane

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4rcm/p4rcm/p4"
	"github.com/p4rcm/p4rcm/tutorialjson"
)

// A tutorials runtime file applied to a switch installs every entry,
// group and session; applied again it changes nothing; after the switch
// restarts (empty, no pipeline) a new session converges on it; a file
// with a bad entry is refused whole, naming the line and field, with
// nothing written.
func TestApplyRuntime(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rt, err := tutorialjson.LoadRuntime("testdata/rcm-runtime.json")
	if err != nil {
		t.Fatal(err)
	}
	addr, sw := launch(ctx, t, nil)
	s := dial(ctx, t, addr, 1)
	p := rcmPipeline(t, 42)
	if _, err := s.EnsurePipeline(ctx, p); err != nil {
		t.Fatal(err)
	}
	done, err := s.ApplyRuntime(ctx, rt)
	if err != nil {
		t.Fatal(err)
	}
	if done != (Applied{Inserted: 5, Unchanged: 1}) {
		t.Errorf("first apply: %v, want 5 inserted, 1 unchanged (the default is drop already)", done)
	}
	if done, err = s.ApplyRuntime(ctx, rt); err != nil || done != (Applied{Unchanged: 6}) {
		t.Errorf("second apply: %v, %v; want nothing changed", done, err)
	}
	routes, _ := s.ReadEntries(ctx, p4.TableIPv4LPM)
	members, _ := s.ReadEntries(ctx, p4.TableECMPMember)
	if len(routes) != 2 || len(members) != 1 {
		t.Errorf("the switch holds %d routes and %d ECMP members, want 2 and 1", len(routes), len(members))
	}
	if ports, err := s.CloneSession(ctx, 2); err != nil || len(ports) != 1 || ports[0] != 1 {
		t.Errorf("clone session 2: %v, %v", ports, err)
	}

	// A route changed in the file is modified, the rest left alone.
	text, _ := os.ReadFile("testdata/rcm-runtime.json")
	path := filepath.Join(t.TempDir(), "s1-runtime.json")
	os.WriteFile(path, []byte(strings.Replace(string(text), `"port": 1,`, `"port": 2,`, 1)), 0o644)
	changed, err := tutorialjson.LoadRuntime(path)
	if err != nil {
		t.Fatal(err)
	}
	if done, err = s.ApplyRuntime(ctx, changed); err != nil || done != (Applied{Modified: 1, Unchanged: 5}) {
		t.Errorf("apply with one route changed: %v, %v; want 1 modified", done, err)
	}

	// A bad entry anywhere: refused whole, nothing written.
	os.WriteFile(path, []byte(strings.Replace(string(text), `"base": 100, "size": 2`, `"base": 100, "size": 70000`, 1)), 0o644)
	bad, err := tutorialjson.LoadRuntime(path)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := s.ReadEntries(ctx, p4.TableIPv4LPM)
	_, err = s.ApplyRuntime(ctx, bad)
	if err == nil || !strings.Contains(err.Error(), path+":16: action_params.size") || !strings.Contains(err.Error(), "16") {
		t.Errorf("a value too wide: %v, want the file, line 16 (the entry's), the field and its width", err)
	}
	if after, _ := s.ReadEntries(ctx, p4.TableIPv4LPM); len(after) != len(before) || !SameEntry(mustEntry(t, s, after[0]), mustEntry(t, s, before[0])) {
		t.Errorf("a refused file changed the switch")
	}

	// The switch restarts empty; the next session sets the pipeline and
	// the file converges it.
	sw.Stop()
	relaunch(ctx, t, sw)
	s2 := dial(ctx, t, addr, 1)
	if installed, err := s2.EnsurePipeline(ctx, p); err != nil || !installed {
		t.Fatalf("EnsurePipeline on the restarted switch: %v, %v", installed, err)
	}
	if done, err := s2.ApplyRuntime(ctx, rt); err != nil || done != (Applied{Inserted: 5, Unchanged: 1}) {
		t.Errorf("apply to the restarted switch: %v, %v", done, err)
	}
}

func mustEntry(t *testing.T, s *Session, e Entry) *p4v1.TableEntry {
	t.Helper()
	te, err := s.TableEntry(e)
	if err != nil {
		t.Fatal(err)
	}
	return te
}
