package report

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/p4rcm/p4rcm/internal/testfs"
	"github.com/p4rcm/p4rcm/sim"
)

// sampleResults is a small run with every kind of data.
func sampleResults() *sim.Results {
	r := &sim.Results{
		Drops:      map[string]int64{"ttl": 2, "buffer_full": 0, "queue_limit": 1, "acl": 4},
		HostPauses: 3, End: 50_000_000, LastFinish: 40_000_000, Events: 999, DataPackets: 300, PacketHops: 1200, CNPs: 6,
		Faults: []string{},
	}
	for i := range 45 {
		f := done(i, int64(1+i*i*7919%30_000_000), int64(100+i*3), 1+float64(i%9)/4)
		f.Class = []string{"a", "b,c"}[i%2]
		r.Flows = append(r.Flows, f)
		r.Completed++
	}
	r.Flows = append(r.Flows, pending(45, 123))
	for i := range 6 {
		r.Ports = append(r.Ports, sim.PortRecord{Node: 10 + i/3, Port: i % 3, NodeName: "sw", Peer: i, Rate: 25e9,
			TxBytes: int64(i) * 1000, PausesSent: int64(i % 2), PausedTime: int64(i) * 1000, Utilisation: float64(i) / 7})
	}
	for i := range 4 {
		r.QueueSamples = append(r.QueueSamples, sim.QueueSample{Time: int64(i+1) * 1_000_000, Node: 10, Port: 1, Prio: 3, Bytes: float64(i) * 1500})
		r.RateSamples = append(r.RateSamples, sim.RateSample{Time: int64(i+1) * 1_000_000, Flow: 2, Bytes: int64(i) * 1000})
	}
	return r
}

func TestWriteDir(t *testing.T) {
	all := []string{FlowsFile, NS3FCTFile, PortsFile, QueuesFile, RatesFile, SummaryTextFile, SummaryJSONFile}
	tests := []struct {
		name   string
		modify func(*sim.Results)
		opts   DirOptions
		want   []string
	}{
		{"everything", func(*sim.Results) {}, DirOptions{}, all},
		{"no samples", func(r *sim.Results) { r.QueueSamples, r.RateSamples = nil, nil }, DirOptions{},
			[]string{FlowsFile, NS3FCTFile, PortsFile, SummaryTextFile, SummaryJSONFile}},
		{"empty run", func(r *sim.Results) { *r = sim.Results{} }, DirOptions{}, []string{FlowsFile, NS3FCTFile, PortsFile, SummaryTextFile, SummaryJSONFile}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out", "run1") // created by WriteDir
			r := sampleResults()
			tt.modify(r)
			paths, err := WriteDir(dir, r, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, n := range tt.want {
				want = append(want, filepath.Join(dir, n))
			}
			if !slices.Equal(paths, want) {
				t.Errorf("paths %v, want %v", paths, want)
			}
			names := testfs.Names(t, dir)
			sortedWant := slices.Sorted(slices.Values(tt.want))
			if !slices.Equal(names, sortedWant) {
				t.Errorf("dir holds %v, want %v", names, sortedWant)
			}
			for _, p := range paths {
				fi, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode().Perm() != 0o644 {
					t.Errorf("%s: mode %v, want 0644", p, fi.Mode().Perm())
				}
				if fi.Size() == 0 && filepath.Base(p) != NS3FCTFile {
					t.Errorf("%s is empty", p)
				}
			}
			// The files hold what the writers give.
			var flows bytes.Buffer
			if err := WriteFlowsCSV(&flows, r.Flows); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, FlowsFile)); !bytes.Equal(got, flows.Bytes()) {
				t.Errorf("flows.csv differs from WriteFlowsCSV")
			}
		})
	}
}

func TestWriteDirRateInterval(t *testing.T) {
	tests := []struct {
		name     string
		interval int64
		want     string // gbps of the sample of 3000 bytes
	}{
		{"inferred", 0, "24"},
		{"given", 2_000_000, "12"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := WriteDir(dir, sampleResults(), DirOptions{RateInterval: tt.interval}); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(dir, RatesFile))
			if err != nil {
				t.Fatal(err)
			}
			if want := "4000.000,2,3000," + tt.want + "\n"; !strings.HasSuffix(string(data), want) {
				t.Errorf("rates.csv ends\n%s\nwant %q", data, want)
			}
		})
	}
}

func TestWriteDirLeavesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(other, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, FlowsFile), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteDir(dir, sampleResults(), DirOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(other); string(got) != "keep me" {
		t.Errorf("notes.txt = %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, FlowsFile)); !strings.HasPrefix(string(got), "id,src,") {
		t.Errorf("flows.csv not replaced: %.20q", got)
	}
}

func TestDeterminism(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	for _, d := range dirs {
		// a fresh Results each time, so map iteration order differs
		if _, err := WriteDir(d, sampleResults(), DirOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	names := testfs.Names(t, dirs[0])
	if len(names) != 7 {
		t.Fatalf("wrote %v", names)
	}
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			a, err := os.ReadFile(filepath.Join(dirs[0], n))
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dirs[1], n))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("two writes differ:\n%s\n---\n%s", a, b)
			}
		})
	}

	// The summary does not depend on the order of the flows.
	r1, r2 := sampleResults(), sampleResults()
	slices.Reverse(r2.Flows)
	var j1, j2 bytes.Buffer
	if err := WriteSummaryJSON(&j1, Summarize(r1, SummaryOptions{})); err != nil {
		t.Fatal(err)
	}
	if err := WriteSummaryJSON(&j2, Summarize(r2, SummaryOptions{})); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(j1.Bytes(), j2.Bytes()) {
		t.Errorf("summary depends on flow order:\n%s\n---\n%s", j1.String(), j2.String())
	}
}

var errInjected = errors.New("injected write failure")

// failingWriter passes through budget bytes, then fails.
type failingWriter struct {
	w      io.Writer
	budget int
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.budget {
		n, _ := f.w.Write(p[:f.budget])
		f.budget = 0
		return n, errInjected
	}
	f.budget -= len(p)
	return f.w.Write(p)
}

func TestWriteDirAtomic(t *testing.T) {
	tests := []struct {
		name     string
		failFile string // file whose writer fails
		budget   int    // bytes it writes before failing
		dirAt    string // target replaced by a directory
		wantErr  string // in the error
	}{
		{"first file fails at once", FlowsFile, 0, "", FlowsFile},
		{"first file fails midway", FlowsFile, 100, "", FlowsFile},
		{"middle file fails", QueuesFile, 10, "", QueuesFile},
		{"last file fails", SummaryJSONFile, 50, "", SummaryJSONFile},
		{"target is a directory", "", 0, SummaryTextFile, SummaryTextFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			// An earlier run's file must survive a failed write untouched.
			old := filepath.Join(dir, FlowsFile)
			if err := os.WriteFile(old, []byte("earlier run"), 0o644); err != nil {
				t.Fatal(err)
			}
			before := []string{FlowsFile}
			if tt.dirAt != "" {
				if err := os.Mkdir(filepath.Join(dir, tt.dirAt), 0o755); err != nil {
					t.Fatal(err)
				}
				before = append(before, tt.dirAt)
				slices.Sort(before)
			}
			wrap := func(name string, w io.Writer) io.Writer {
				if name == tt.failFile {
					return &failingWriter{w: w, budget: tt.budget}
				}
				return w
			}
			paths, err := writeDir(dir, sampleResults(), DirOptions{}, wrap)
			if err == nil {
				t.Fatalf("no error; wrote %v", paths)
			}
			if !strings.Contains(err.Error(), filepath.Join(dir, tt.wantErr)) {
				t.Errorf("error %q does not name %s", err, tt.wantErr)
			}
			if tt.failFile != "" && !errors.Is(err, errInjected) {
				t.Errorf("error %q does not wrap the writer's error", err)
			}
			if len(paths) != 0 {
				t.Errorf("paths %v after a failed write", paths)
			}
			if names := testfs.Names(t, dir); !slices.Equal(names, before) {
				t.Errorf("dir holds %v after the failure, want only %v", names, before)
			}
			if got, _ := os.ReadFile(old); string(got) != "earlier run" {
				t.Errorf("earlier flows.csv changed to %.30q", got)
			}
		})
	}
}

func TestWriteDirErrors(t *testing.T) {
	t.Run("nil results", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "x")
		if _, err := WriteDir(dir, nil, DirOptions{}); err == nil {
			t.Error("no error")
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("dir created for nil results: %v", err)
		}
	})
	t.Run("dir is a file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(file, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := WriteDir(file, sampleResults(), DirOptions{}); err == nil {
			t.Error("no error")
		}
	})
	t.Run("rate interval not inferable", func(t *testing.T) {
		dir := t.TempDir()
		r := sampleResults()
		r.RateSamples = []sim.RateSample{{Time: 0}}
		_, err := WriteDir(dir, r, DirOptions{})
		if err == nil || !strings.Contains(err.Error(), RatesFile) {
			t.Errorf("error %v, want one naming %s", err, RatesFile)
		}
		if names := testfs.Names(t, dir); len(names) != 0 {
			t.Errorf("dir holds %v", names)
		}
	})
}
