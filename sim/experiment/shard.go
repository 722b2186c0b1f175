package experiment

import (
	"compress/gzip"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/sim/report"
)

// The files a shard's directory holds besides each run's report: its
// manifest, and beside each run's report the run's raw results, which
// Merge reads to compare and plot as one machine would have.
const (
	ShardFile   = "shard.json"
	ResultsFile = "results.gob.gz"
)

// shardManifest is shard.json: the study the shard belongs to, which part
// of it, and its runs.
type shardManifest struct {
	Study About `json:"study"`
	Shard Shard `json:"shard"`
	// WallSeconds is the time the shard took.
	WallSeconds float64    `json:"wall_seconds"`
	Runs        []shardRun `json:"runs"`
}

// shardRun is one run of a shard. Path is the directory of its report
// and results under the shard's, empty when it has none.
type shardRun struct {
	Index        int     `json:"index"`
	Point        int     `json:"point"`
	Scheme       string  `json:"scheme"`
	Seed         uint64  `json:"seed"`
	Rep          int     `json:"rep,omitempty"`
	Path         string  `json:"path,omitempty"`
	Hosts        int     `json:"hosts"`
	Flows        int     `json:"flows"`
	WallSeconds  float64 `json:"wall_seconds"`
	Error        string  `json:"error,omitempty"`
	RateInterval int64   `json:"rate_interval_ps,omitempty"`
}

// WriteShard writes a shard's runs into dir: each run's report where the
// whole study would put it, with its raw results beside it (ResultsFile),
// and, last, the manifest shard.json, so that a directory with a manifest
// is a complete shard. It returns the paths written.
func WriteShard(dir string, st *Study) ([]string, error) {
	if st.Shard == nil {
		return nil, errors.New("experiment: WriteShard of a whole study; use WriteDir")
	}
	m := shardManifest{Study: st.About, Shard: *st.Shard, WallSeconds: st.WallSeconds, Runs: []shardRun{}}
	m.Study.Vary = report.NonNil(m.Study.Vary)
	var paths []string
	for i, r := range st.Points {
		if err := checkNames(r); err != nil {
			return nil, err
		}
		pdir := ""
		if st.Swept() {
			pdir = pointDir(i, len(st.Points), r.Point)
		}
		ps, err := writeRunDirs(filepath.Join(dir, pdir), r)
		paths = append(paths, ps...)
		if err != nil {
			return paths, err
		}
		for j := range r.Runs {
			run := &r.Runs[j]
			sr := shardRun{Index: run.Index, Point: i, Scheme: run.Scheme, Seed: run.Seed, Rep: run.Rep, Hosts: run.Hosts,
				Flows: run.Flows, WallSeconds: run.WallSeconds, Error: run.Error, RateInterval: run.RateInterval}
			if run.Results != nil {
				sr.Path = filepath.ToSlash(filepath.Join(pdir, run.Dir))
				p, err := writeFileAtomic(filepath.Join(dir, pdir, run.Dir), ResultsFile, func(w io.Writer) error {
					return encodeResults(w, run.Results)
				})
				if err != nil {
					return paths, err
				}
				paths = append(paths, p)
			}
			m.Runs = append(m.Runs, sr)
		}
	}
	slices.SortFunc(m.Runs, func(a, b shardRun) int { return a.Index - b.Index })
	p, err := writeFileAtomic(dir, ShardFile, func(w io.Writer) error { return report.WriteJSON(w, m) })
	if err != nil {
		return paths, err
	}
	return append(paths, p), nil
}

// encodeResults writes results as gzipped gob: exact, and far smaller
// and faster to read back than the CSV files.
func encodeResults(w io.Writer, r *sim.Results) error {
	zw := gzip.NewWriter(w)
	if err := gob.NewEncoder(zw).Encode(r); err != nil {
		return err
	}
	return zw.Close()
}

func decodeResults(path string) (*sim.Results, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var r sim.Results
	if err := gob.NewDecoder(zr).Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// readManifest reads dir's shard.json.
func readManifest(dir string) (*shardManifest, error) {
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, unwrapPathError(err))
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s: is a file, not a shard's directory", dir)
	}
	data, err := os.ReadFile(filepath.Join(dir, ShardFile))
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(filepath.Join(dir, StudyJSONFile)); serr == nil {
			return nil, fmt.Errorf("%s: is a whole study's output, not a shard's (no %s)", dir, ShardFile)
		}
		return nil, fmt.Errorf("%s: not a shard's output (no %s; 'p4ctl experiment --shard i/N' writes one)", dir, ShardFile)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, unwrapPathError(err))
	}
	var m shardManifest
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ShardFile), err)
	}
	if m.Study.ID == "" || len(m.Study.Schemes) == 0 || len(m.Study.Seeds) == 0 || m.Shard.Count < 1 {
		return nil, fmt.Errorf("%s: not a complete shard manifest (study id, schemes, seeds and shard are required)", filepath.Join(dir, ShardFile))
	}
	return &m, nil
}

// unwrapPathError drops the path of a *fs.PathError, which the caller
// names already.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Merge reads the directories of a study's shards and rebuilds the whole
// study, compared, as Run on one machine would have given it: the same
// runs, figures and plots, so that WriteDir writes the same files, wall
// times aside. Its wall time is the longest shard's. It refuses, naming
// the directories, shards of different studies or versions, a run given
// twice, and a study with runs missing (naming them, and the shards they
// belong to).
func Merge(dirs []string) (*Study, error) {
	if len(dirs) == 0 {
		return nil, errors.New("experiment: merge needs the shards' directories")
	}
	var first *shardManifest
	owner := map[int]string{}
	var st *Study
	for _, dir := range dirs {
		m, err := readManifest(dir)
		if err != nil {
			return nil, err
		}
		if first == nil {
			first = m
			st, err = studyOf(m.Study)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ShardFile), err)
			}
		} else {
			if m.Study.ID != first.Study.ID {
				return nil, fmt.Errorf("%s is a shard of study %s (%s), %s of study %s (%s): parts of different studies",
					dir, m.Study.ID, m.Study.Scenario, dirs[0], first.Study.ID, first.Study.Scenario)
			}
			if m.Study.Version != first.Study.Version {
				return nil, fmt.Errorf("%s was run by %q, %s by %q: the same study by different versions; rerun one with the other's",
					dir, m.Study.Version, dirs[0], first.Study.Version)
			}
		}
		st.WallSeconds = max(st.WallSeconds, m.WallSeconds)
		total := st.Runs()
		for _, sr := range m.Runs {
			if sr.Index < 0 || sr.Index >= total || sr.Point < 0 || sr.Point >= len(st.Points) {
				return nil, fmt.Errorf("%s: run %d is not a run of this study of %d runs", filepath.Join(dir, ShardFile), sr.Index, total)
			}
			if d, ok := owner[sr.Index]; ok && d == dir {
				return nil, fmt.Errorf("%s is given twice: merge each shard once", dir)
			} else if ok {
				return nil, fmt.Errorf("run %d (%s seed %d) is in both %s and %s: merge each shard once", sr.Index, sr.Scheme, sr.Seed, d, dir)
			}
			owner[sr.Index] = dir
			run := RunResult{Index: sr.Index, Scheme: sr.Scheme, Seed: sr.Seed, Rep: sr.Rep, Hosts: sr.Hosts, Flows: sr.Flows,
				WallSeconds: sr.WallSeconds, Error: sr.Error, RateInterval: sr.RateInterval}
			if sr.Path != "" {
				p := filepath.Join(dir, filepath.FromSlash(sr.Path), ResultsFile)
				if !filepath.IsLocal(filepath.FromSlash(sr.Path)) {
					return nil, fmt.Errorf("%s: run %d's path %q leaves the shard's directory", filepath.Join(dir, ShardFile), sr.Index, sr.Path)
				}
				res, err := decodeResults(p)
				if err != nil {
					return nil, fmt.Errorf("run %d (%s seed %d) of %s: %w", sr.Index, sr.Scheme, sr.Seed, dir, err)
				}
				run.setResults(res)
			}
			st.Points[sr.Point].Runs = append(st.Points[sr.Point].Runs, run)
		}
	}
	if missing := st.Runs() - len(owner); missing > 0 {
		var idx []string
		for i := 0; i < st.Runs() && len(idx) < 10; i++ {
			if _, ok := owner[i]; !ok {
				idx = append(idx, fmt.Sprintf("%d", i))
			}
		}
		more := ""
		if missing > len(idx) {
			more = ", ..."
		}
		return nil, fmt.Errorf("the study has %d runs and the shards given hold %d: missing runs %s%s (of shard %s of %d); merge every shard",
			st.Runs(), len(owner), strings.Join(idx, ", "), more, missingShards(st.Runs(), first.Shard.Count, owner), first.Shard.Count)
	}
	for _, pt := range st.Points {
		slices.SortFunc(pt.Runs, runOrder(pt.Schemes))
	}
	compare := time.Now()
	st.Compare()
	st.AddReportTime(time.Since(compare))
	return st, nil
}

// missingShards names the shards, of count, that hold runs not in owner.
func missingShards(total, count int, owner map[int]string) string {
	var out []string
	for i := range count {
		lo, hi := Shard{Index: i, Count: count}.runs(total)
		for j := lo; j < hi; j++ {
			if _, ok := owner[j]; !ok {
				out = append(out, fmt.Sprintf("%d", i))
				break
			}
		}
	}
	return strings.Join(out, ", ")
}

// studyOf makes an empty Study, every point's Result and no runs, from
// what it is (a shard's record, or a new study's).
func studyOf(a About) (*Study, error) {
	if a.Level <= 0 || a.Level >= 1 || !slices.Contains(a.Schemes, a.Baseline) {
		return nil, errors.New("not a complete shard manifest (confidence level or baseline)")
	}
	for _, sc := range a.Schemes {
		if err := CheckScheme(sc); err != nil {
			return nil, err
		}
	}
	st := &Study{About: a}
	for _, pt := range points(a.Vary) {
		st.Points = append(st.Points, &Result{About: a, Point: pt})
	}
	return st, nil
}
