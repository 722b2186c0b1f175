package report

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/p4rcm/p4rcm/sim"
)

// The names of the files WriteDir writes.
const (
	FlowsFile       = "flows.csv"
	NS3FCTFile      = "fct.txt"
	PortsFile       = "ports.csv"
	QueuesFile      = "queues.csv"
	RatesFile       = "rates.csv"
	CCFile          = "cc.csv"
	SummaryTextFile = "summary.txt"
	SummaryJSONFile = "summary.json"
)

// DirOptions tune WriteDir.
type DirOptions struct {
	// RateInterval is the rate sampling interval in picoseconds
	// (sim.RateSampling.Interval), used for the gbps column of rates.csv;
	// 0 means infer it from the samples (InferRateInterval).
	RateInterval int64
	// Summary tunes the summary files.
	Summary SummaryOptions
}

// output is one file of WriteDir and how to fill it.
type output struct {
	name  string
	write func(io.Writer) error
}

// WriteDir writes the report of r into dir, creating dir (mode 0o755) if
// missing: flows.csv, fct.txt (the ns-3 RDMA simulator's format),
// ports.csv, queues.csv if r has queue samples, rates.csv if it has rate
// samples, cc.csv if it has congestion-control samples, summary.txt and
// summary.json, in that order, which is also the order of the returned
// paths (dir joined with the name). Files are created with mode 0o644 and
// replace existing files of the same names; other files in dir are left
// alone.
//
// Writing is atomic per file and all-or-nothing for the set: every file is
// first written in full to a temporary file in dir (named ".NAME.*.tmp")
// and synced, and only when all of them are complete are they renamed into
// place. If anything fails before that, the temporary files are removed
// and no target is touched. Should a rename itself fail (which needs a
// concurrent change to dir), the remaining temporary files are removed and
// WriteDir returns the paths already renamed with the error. Errors name
// the file concerned.
func WriteDir(dir string, r *sim.Results, opts DirOptions) ([]string, error) {
	return writeDir(dir, r, opts, nil)
}

// writeDir is WriteDir with a seam for tests: wrap, if not nil, is given
// each file's name and temporary file and returns the writer its contents
// go through, so a test can make one output fail.
func writeDir(dir string, r *sim.Results, opts DirOptions, wrap func(name string, w io.Writer) io.Writer) ([]string, error) {
	if r == nil {
		return nil, errors.New("report: no results to write")
	}
	outs, err := outputs(r, opts)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	// A directory (or other non-file) in a target's place would make its
	// rename fail after others succeeded; refuse before writing anything.
	for _, o := range outs {
		path := filepath.Join(dir, o.name)
		if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() && fi.Mode()&os.ModeSymlink == 0 {
			return nil, fmt.Errorf("report: %s: exists and is not a regular file", path)
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("report: %s: %w", path, err)
		}
	}

	temps := make([]string, 0, len(outs))
	removeTemps := func(from int) {
		for _, t := range temps[from:] {
			os.Remove(t)
		}
	}
	for _, o := range outs {
		tmp, err := writeTemp(dir, o, wrap)
		if err != nil {
			removeTemps(0)
			return nil, fmt.Errorf("report: writing %s: %w", filepath.Join(dir, o.name), err)
		}
		temps = append(temps, tmp)
	}

	paths := make([]string, 0, len(outs))
	for i, o := range outs {
		path := filepath.Join(dir, o.name)
		if err := os.Rename(temps[i], path); err != nil {
			removeTemps(i)
			return paths, fmt.Errorf("report: writing %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// outputs lists the files to write for r.
func outputs(r *sim.Results, opts DirOptions) ([]output, error) {
	rateInterval := opts.RateInterval
	if len(r.RateSamples) > 0 && rateInterval <= 0 {
		var err error
		if rateInterval, err = InferRateInterval(r.RateSamples); err != nil {
			return nil, fmt.Errorf("report: %s: %w", RatesFile, err)
		}
	}
	s := Summarize(r, opts.Summary)
	outs := []output{
		{FlowsFile, func(w io.Writer) error { return WriteFlowsCSV(w, r.Flows) }},
		{NS3FCTFile, func(w io.Writer) error { return WriteNS3FCT(w, r.Flows) }},
		{PortsFile, func(w io.Writer) error { return WritePortsCSV(w, r.Ports, r.NotMeasured...) }},
	}
	if len(r.QueueSamples) > 0 {
		outs = append(outs, output{QueuesFile, func(w io.Writer) error { return WriteQueuesCSV(w, r.QueueSamples) }})
	}
	if len(r.RateSamples) > 0 {
		outs = append(outs, output{RatesFile, func(w io.Writer) error {
			return WriteRatesCSV(w, r.RateSamples, rateInterval)
		}})
	}
	if len(r.CCSamples) > 0 {
		outs = append(outs, output{CCFile, func(w io.Writer) error { return WriteCCCSV(w, r.CCSamples) }})
	}
	outs = append(outs,
		output{SummaryTextFile, func(w io.Writer) error { return WriteSummaryText(w, s) }},
		output{SummaryJSONFile, func(w io.Writer) error { return WriteSummaryJSON(w, s) }})
	return outs, nil
}

// writeTemp writes o into a new temporary file in dir (WriteTemp), through
// wrap if it is set.
func writeTemp(dir string, o output, wrap func(string, io.Writer) io.Writer) (string, error) {
	return WriteTemp(dir, o.name, func(w io.Writer) error {
		if wrap != nil {
			w = wrap(o.name, w)
		}
		return o.write(w)
	})
}

// WriteTemp writes a new temporary file ".NAME.*.tmp" in dir through write
// (buffered), gives it mode 0o644, syncs and closes it, and returns its
// path; on error it removes it. Renaming it into place, so that readers
// never see half a file, is the caller's.
func WriteTemp(dir, name string, write func(io.Writer) error) (path string, err error) {
	f, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 64<<10)
	if err := write(bw); err != nil {
		return "", err
	}
	if err := bw.Flush(); err != nil {
		return "", err
	}
	if err := f.Chmod(0o644); err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return f.Name(), nil
}
