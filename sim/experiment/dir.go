package experiment

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/p4rcm/p4rcm/sim/report"
)

// The names of the files WriteDir writes besides each run's directory and
// the plots (Figure.Name plus ".png" and ".svg"): at each point, and for
// a sweep at the top.
const (
	ComparisonCSVFile  = "comparison.csv"
	ComparisonJSONFile = "comparison.json"
	HTMLFile           = "report.html"
	StudyCSVFile       = "study.csv"
	StudyJSONFile      = "study.json"
)

// WriteDir writes the study into dir, creating it if needed. Without a
// sweep, dir holds the one point's files (WritePointDir). With one, each
// point's go into its own directory ("p0_workload.load=0.3"), and dir
// holds the curves of the metrics against the swept value (PNG and SVG),
// study.csv, study.json and, last, report.html, which links to the rest.
// It returns the paths of the files written, in that order.
//
// Every file is written whole or not at all: to a temporary file in its
// directory, synced, then renamed into place; other files in dir are left
// alone. On an error WriteDir stops and returns the paths written so far.
func WriteDir(dir string, st *Study) ([]string, error) {
	if !st.Swept() {
		return WritePointDir(dir, st.Points[0])
	}
	curves, err := Curves(st)
	if err != nil {
		return nil, err
	}
	var paths []string
	for i, r := range st.Points {
		ps, err := WritePointDir(filepath.Join(dir, pointDir(i, len(st.Points), r.Point)), r)
		paths = append(paths, ps...)
		if err != nil {
			return paths, err
		}
	}
	return writeFiles(dir, paths, curves,
		file{StudyCSVFile, func(w io.Writer) error { return WriteStudyCSV(w, st) }},
		file{StudyJSONFile, func(w io.Writer) error { return WriteStudyJSON(w, st) }},
		file{HTMLFile, func(w io.Writer) error { return WriteStudyHTML(w, st, curves) }})
}

// WritePointDir writes one point's comparison into dir, creating it if
// needed: for each run with results, its directory RunResult.Dir with
// what report.WriteDir writes (faulty runs included, to look into them);
// the plots of Figures as PNG and SVG; comparison.csv, comparison.json
// and, last, report.html. It returns the paths of the files written, in
// that order, as WriteDir does.
func WritePointDir(dir string, r *Result) ([]string, error) {
	if err := checkNames(r); err != nil {
		return nil, err
	}
	figs, err := Figures(r)
	if err != nil {
		return nil, err
	}
	paths, err := writeRunDirs(dir, r)
	if err != nil {
		return paths, err
	}
	return writeFiles(dir, paths, figs,
		file{ComparisonCSVFile, func(w io.Writer) error { return WriteComparisonCSV(w, r) }},
		file{ComparisonJSONFile, func(w io.Writer) error { return WriteJSON(w, r) }},
		file{HTMLFile, func(w io.Writer) error { return WriteHTML(w, r, figs) }})
}

// file is a file of an output directory and what writes it.
type file struct {
	name  string
	write func(io.Writer) error
}

// writeFiles writes each figure as PNG and SVG, then files in order, into
// dir, each whole or not at all, and returns paths with theirs added; on
// an error it stops.
func writeFiles(dir string, paths []string, figs []Figure, files ...file) ([]string, error) {
	var all []file
	for _, f := range figs {
		all = append(all, file{f.Name + ".png", writeBytes(f.PNG)}, file{f.Name + ".svg", writeBytes(f.SVG)})
	}
	for _, f := range append(all, files...) {
		p, err := writeFileAtomic(dir, f.name, f.write)
		if err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// writeBytes writes data.
func writeBytes(data []byte) func(io.Writer) error {
	return func(w io.Writer) error { _, err := w.Write(data); return err }
}

// checkNames refuses schemes and run directories that could write
// outside the point's directory.
func checkNames(r *Result) error {
	for _, s := range r.Schemes {
		if err := CheckScheme(s); err != nil {
			return fmt.Errorf("experiment: %w", err)
		}
	}
	for i := range r.Runs {
		if run := &r.Runs[i]; run.Results != nil && run.Dir != RunDir(run.Scheme, run.Seed, run.Rep) {
			return fmt.Errorf("experiment: run %s: directory %q is not %q", run.Name(), run.Dir, RunDir(run.Scheme, run.Seed, run.Rep))
		}
	}
	return nil
}

// writeRunDirs writes each run's report into its directory under dir.
func writeRunDirs(dir string, r *Result) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("experiment: %w", err)
	}
	var paths []string
	for i := range r.Runs {
		run := &r.Runs[i]
		if run.Results == nil {
			continue
		}
		ps, err := report.WriteDir(filepath.Join(dir, run.Dir), run.Results,
			report.DirOptions{RateInterval: run.RateInterval})
		paths = append(paths, ps...)
		if err != nil {
			return paths, fmt.Errorf("experiment: run %s: %w", run.Name(), err)
		}
	}
	return paths, nil
}

// writeFileAtomic writes dir/name through a temporary file in dir that is
// synced and renamed into place, so that readers never see half a file.
func writeFileAtomic(dir, name string, write func(io.Writer) error) (path string, err error) {
	path = filepath.Join(dir, name)
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		return "", fmt.Errorf("experiment: writing %s: is a directory", path)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("experiment: writing %s: %w", path, err)
	}
	tmp, err := report.WriteTemp(dir, name, write)
	if err == nil {
		if err = os.Rename(tmp, path); err != nil {
			os.Remove(tmp)
		}
	}
	if err != nil {
		return "", fmt.Errorf("experiment: writing %s: %w", path, err)
	}
	return path, nil
}
