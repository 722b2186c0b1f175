// Package outdir gives a command's results a directory of their own.
//
// A run writes into a fresh staging directory beside the one the user
// named, created before the run starts, so that an output path that cannot
// be written (under a file, on a read-only mount) is found in the first
// millisecond rather than after an hour of simulation. When the run is
// done, the staging directory replaces the target whole: the target never
// holds files from two runs, and a run that fails leaves the earlier
// results as they were.
//
// Only directories p4rcm made are replaced: each carries a marker file,
// and a non-empty directory without one is refused, so a mistyped -o never
// deletes a user's files.
package outdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// MarkerFile is the file that says a directory holds p4rcm's results and
// may be replaced by the next run into it.
const MarkerFile = ".p4rcm-results"

const markerText = "This directory holds results written by p4ctl. The next run that\n" +
	"names it as its output directory replaces it whole.\n"

// Dir is an output directory being prepared: results go into Path, and
// Commit puts them in the target's place.
type Dir struct {
	name    string // as the user gave it, for messages
	target  string // absolute
	staging string
	done    bool
}

// ErrNotOurs is returned by Prepare when the target is a non-empty
// directory p4rcm did not write.
var ErrNotOurs = errors.New("holds files p4rcm did not write; choose a new or empty directory, or one an earlier p4ctl run wrote")

// Prepare checks that target can take a new run's results and creates the
// staging directory beside it (making target's parent directories if
// needed). target may be missing, an empty directory, or a directory an
// earlier run wrote (it has MarkerFile); anything else is an error naming
// target. The caller writes into Path and then calls Commit, or Abort.
func Prepare(target string) (*Dir, error) {
	if target == "" {
		return nil, errors.New("the output directory is empty; name a directory")
	}
	name := target
	abs, err := filepath.Abs(target)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	target = abs
	if resolved, err := filepath.EvalSymlinks(target); err == nil {
		target = resolved // replace the directory a link points at, not the link
	}
	if wd, err := os.Getwd(); err == nil && wd == target {
		return nil, fmt.Errorf("%s: is the current directory, which a run would replace; name a directory inside it", name)
	}
	if err := checkReplaceable(name, target); err != nil {
		return nil, err
	}
	parent, base := filepath.Split(target)
	if parent == "" {
		parent = "."
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("%s: cannot create its parent directory: %w", name, unwrapPath(err))
	}
	staging, err := os.MkdirTemp(parent, "."+base+".new-")
	if err != nil {
		return nil, fmt.Errorf("%s: cannot write there: %w", name, unwrapPath(err))
	}
	d := &Dir{name: name, target: target, staging: staging}
	if err := os.Chmod(staging, 0o755); err != nil {
		d.Abort()
		return nil, fmt.Errorf("%s: %w", name, unwrapPath(err))
	}
	if err := os.WriteFile(filepath.Join(staging, MarkerFile), []byte(markerText), 0o644); err != nil {
		d.Abort()
		return nil, fmt.Errorf("%s: cannot write there: %w", name, unwrapPath(err))
	}
	return d, nil
}

// checkReplaceable says whether target may be replaced by a new run.
// name is target as the user gave it.
func checkReplaceable(name, target string) error {
	fi, err := os.Stat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("%s: %s is a file, not a directory", name, fileAncestor(target))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, unwrapPath(err))
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: exists and is not a directory", name)
	}
	entries, err := os.ReadDir(target)
	if err != nil {
		return fmt.Errorf("%s: %w", name, unwrapPath(err))
	}
	if len(entries) == 0 {
		return nil
	}
	if _, err := os.Lstat(filepath.Join(target, MarkerFile)); err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", name, ErrNotOurs)
}

// fileAncestor is the nearest ancestor of path that exists and is not a
// directory, the reason path cannot be made.
func fileAncestor(path string) string {
	for p := filepath.Dir(path); p != filepath.Dir(p); p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	return filepath.Dir(path)
}

// Path is the directory to write the results into.
func (d *Dir) Path() string { return d.staging }

// Name is the directory the results will be in after Commit, as the
// caller gave it to Prepare.
func (d *Dir) Name() string { return d.name }

// Commit puts the staging directory in the target's place, replacing an
// earlier run's directory whole. If it fails, the earlier directory is
// back where it was and the new results stay in the staging directory,
// whose path the error gives, so that nothing is lost.
func (d *Dir) Commit() error {
	if d.done {
		return errors.New("outdir: already committed or aborted")
	}
	// The target is checked again: something may have appeared there
	// while the run went on.
	if err := checkReplaceable(d.name, d.target); err != nil {
		return fmt.Errorf("%w; the new results are in %s", err, d.staging)
	}
	var old string
	if _, err := os.Lstat(d.target); err == nil {
		// Move the earlier results aside first (a rename does not replace
		// a directory), to a name as unlikely to be taken as the staging
		// directory's own.
		old = d.staging + ".old"
		if err := os.Rename(d.target, old); err != nil {
			return fmt.Errorf("%s: %w; the new results are in %s", d.name, unwrapLink(err), d.staging)
		}
	}
	if err := os.Rename(d.staging, d.target); err != nil {
		if old != "" {
			_ = os.Rename(old, d.target)
		}
		return fmt.Errorf("%s: %w; the new results are in %s", d.name, unwrapLink(err), d.staging)
	}
	d.done = true
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("the earlier results in %s could not be removed: %w", old, unwrapPath(err))
		}
	}
	return nil
}

// Abort removes the staging directory and what was written into it; the
// target is left as it was. It does nothing after Commit.
func (d *Dir) Abort() {
	if d.done {
		return
	}
	d.done = true
	os.RemoveAll(d.staging)
}

// unwrapLink drops the paths of an *os.LinkError (a failed rename).
func unwrapLink(err error) error {
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// unwrapPath drops the operation and path of an *fs.PathError, whose
// path is a temporary name the user never gave; messages name the target.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
