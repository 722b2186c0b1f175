package scenario

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/p4rcm/p4rcm/internal/race"
	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/report"
)

// TestThreadsGiveTheSameBytes runs a preset of each family (the default
// fat tree under DCQCN, LDCP and its rate variant; RCM on a fat tree and
// on the victim topology file; the LDCP draft's scenario; a leaf-spine;
// the benchmark's first millisecond, under DCQCN and under HPCC, whose
// queues there grow enough that a telemetry record garbled on its way
// between parts changes the rates) on 1, 2 and 3 threads and wants the
// same bytes in every file a run writes. The benchmark is cut short with
// stop, so that the test also ends a run in parallel at StopAt; the other
// runs end with their last flow.
func TestThreadsGiveTheSameBytes(t *testing.T) {
	race.SkipLong(t)
	cases := []struct {
		preset string
		sets   []string
	}{
		{"default", []string{"workload.duration=1ms", "output.queue_samples.interval=10us", "output.queue_samples.max=5000",
			"output.rate_samples.interval=20us", "output.cc_samples.interval=10us"}},
		{"default", []string{"workload.duration=1ms", "scheme=ldcp"}},
		{"default", []string{"workload.duration=1ms", "scheme=ldcp-rate"}},
		{"default", []string{"workload.duration=1ms", "scheme=hpcc"}},
		{"default", []string{"workload.duration=1ms", "scheme=timely"}},
		{"default", []string{"workload.duration=1ms", "scheme=dctcp"}},
		{"rcm-hotspot", []string{"workload.duration=1ms", "scheme=rcm"}},
		{"rcm-incast-victim", nil},
		{"ldcp-draft", nil},
		{"leafspine-datamining", []string{"workload.duration=3ms"}},
		{"bench-fat320", []string{"stop=2001ms"}},
		{"bench-fat320", []string{"stop=2001ms", "scheme=hpcc"}},
	}
	for _, c := range cases {
		name := c.preset
		if len(c.sets) > 0 {
			name += "/" + c.sets[len(c.sets)-1]
		}
		t.Run(name, func(t *testing.T) {
			var first map[string][]byte
			for threads := 1; threads <= 3; threads++ {
				files, parts := threadsRun(t, c.preset, c.sets, threads)
				if threads > 1 && parts != threads {
					t.Fatalf("%d threads asked, %d parts", threads, parts)
				}
				if first == nil {
					first = files
					continue
				}
				for name, a := range first {
					if !bytes.Equal(a, files[name]) {
						t.Errorf("%s differs between 1 and %d threads", name, threads)
					}
				}
			}
		})
	}
}

// threadsRun runs preset with sets on threads threads and returns the
// bytes of every file it writes, and the number of parts it ran in.
func threadsRun(t *testing.T, preset string, sets []string, threads int) (map[string][]byte, int) {
	t.Helper()
	s, err := LoadPreset(preset)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetAll(sets...); err != nil {
		t.Fatal(err)
	}
	cfg, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Threads = threads
	n, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n.Run()
	res := n.Results()
	if len(res.Faults) > 0 {
		t.Fatalf("%d threads: faults %v", threads, res.Faults)
	}
	dir := t.TempDir()
	paths, err := report.WriteDir(dir, res, report.DirOptions{RateInterval: cfg.RateSampling.Interval})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = data
	}
	if len(files) < 5 {
		t.Fatalf("only %d files written", len(files))
	}
	return files, n.Threads()
}
