package outdir

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/p4rcm/p4rcm/internal/testfs"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// run prepares target, writes files into it and commits.
func run(t *testing.T, target string, files ...string) error {
	t.Helper()
	d, err := Prepare(target)
	if err != nil {
		return err
	}
	for _, f := range files {
		write(t, filepath.Join(d.Path(), f), f)
	}
	return d.Commit()
}

func TestNewDirectory(t *testing.T) {
	target := filepath.Join(t.TempDir(), "a", "b", "out")
	if err := run(t, target, "flows.csv"); err != nil {
		t.Fatal(err)
	}
	if got, want := testfs.Names(t, target), []string{MarkerFile, "flows.csv"}; !slices.Equal(got, want) {
		t.Errorf("target holds %v, want %v", got, want)
	}
	if got := testfs.Names(t, filepath.Dir(target)); !slices.Equal(got, []string{"out"}) {
		t.Errorf("parent holds %v: staging left behind", got)
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("target mode %v, %v; want 0755", fi.Mode(), err)
	}
}

// A second run replaces the first whole: nothing of the first is left.
func TestReplacesEarlierRunWhole(t *testing.T) {
	target := filepath.Join(t.TempDir(), "out")
	if err := run(t, target, "flows.csv", "rates.csv", "dcqcn-seed1/flows.csv"); err != nil {
		t.Fatal(err)
	}
	if err := run(t, target, "flows.csv"); err != nil {
		t.Fatal(err)
	}
	if got, want := testfs.Names(t, target), []string{MarkerFile, "flows.csv"}; !slices.Equal(got, want) {
		t.Errorf("target holds %v, want %v", got, want)
	}
	if got := testfs.Names(t, filepath.Dir(target)); !slices.Equal(got, []string{"out"}) {
		t.Errorf("parent holds %v: the earlier run was not removed", got)
	}
}

func TestEmptyDirectoryIsTaken(t *testing.T) {
	target := t.TempDir()
	if err := run(t, target, "flows.csv"); err != nil {
		t.Fatal(err)
	}
	if got := testfs.Names(t, target); !slices.Contains(got, "flows.csv") {
		t.Errorf("target holds %v", got)
	}
}

// A directory p4rcm did not write is refused before anything runs, and
// left as it was.
func TestRefusesOthersFiles(t *testing.T) {
	target := t.TempDir()
	write(t, filepath.Join(target, "thesis.tex"), "mine")
	_, err := Prepare(target)
	if err == nil || !strings.Contains(err.Error(), "holds files p4rcm did not write") || !strings.HasPrefix(err.Error(), target) {
		t.Fatalf("Prepare = %v, want a refusal naming %s", err, target)
	}
	if got := testfs.Names(t, target); !slices.Equal(got, []string{"thesis.tex"}) {
		t.Errorf("target now holds %v", got)
	}
	if got := testfs.Names(t, filepath.Dir(target)); len(got) != 1 {
		t.Errorf("parent holds %v: staging left behind", got)
	}
}

func TestUnwritableTargets(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	write(t, file, "x")
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ target, want string }{
		{filepath.Join(file, "out", "x"), file + " is a file, not a directory"},
		{file, "exists and is not a directory"},
		{"/proc/p4rcm-out", "/proc/p4rcm-out: cannot write there"},
		{"", "name a directory"},
	}
	if os.Geteuid() != 0 { // root writes into a 0555 directory
		cases = append(cases, struct{ target, want string }{filepath.Join(ro, "out"), "permission denied"})
	}
	for _, c := range cases {
		_, err := Prepare(c.target)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Prepare(%q) = %v, want an error with %q", c.target, err, c.want)
		}
	}
}

func TestCurrentDirectoryRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	if _, err := Prepare("."); err == nil || !strings.Contains(err.Error(), "current directory") {
		t.Errorf("Prepare(.) = %v, want a refusal", err)
	}
}

// Abort leaves the earlier results untouched and removes the new ones.
func TestAbortKeepsEarlierResults(t *testing.T) {
	target := filepath.Join(t.TempDir(), "out")
	if err := run(t, target, "flows.csv"); err != nil {
		t.Fatal(err)
	}
	d, err := Prepare(target)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(d.Path(), "half.csv"), "x")
	d.Abort()
	if got, want := testfs.Names(t, target), []string{MarkerFile, "flows.csv"}; !slices.Equal(got, want) {
		t.Errorf("target holds %v, want %v", got, want)
	}
	if got := testfs.Names(t, filepath.Dir(target)); !slices.Equal(got, []string{"out"}) {
		t.Errorf("parent holds %v: staging left behind", got)
	}
}

// Should someone put their own files in the target while the run goes
// on, Commit refuses and says where the new results are.
func TestCommitRechecks(t *testing.T) {
	target := filepath.Join(t.TempDir(), "out")
	d, err := Prepare(target)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(d.Path(), "flows.csv"), "new")
	write(t, filepath.Join(target, "notes.txt"), "mine")
	err = d.Commit()
	if err == nil || !strings.Contains(err.Error(), d.Path()) {
		t.Fatalf("Commit = %v, want a refusal naming %s", err, d.Path())
	}
	if got := testfs.Names(t, target); !slices.Equal(got, []string{"notes.txt"}) {
		t.Errorf("target holds %v", got)
	}
	if got := testfs.Names(t, d.Path()); !slices.Contains(got, "flows.csv") {
		t.Errorf("staging holds %v: new results lost", got)
	}
}

// A link to a directory is followed: the directory is replaced and the
// link kept.
func TestSymlinkTarget(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	link := filepath.Join(dir, "link")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := run(t, link, "flows.csv"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi.Mode(), err)
	}
	if got := testfs.Names(t, real); !slices.Contains(got, "flows.csv") {
		t.Errorf("real holds %v", got)
	}
}
