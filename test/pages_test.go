//go:build linux

package test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// notebook are the words of a lab notebook, which no page a user reads
// holds: the docs say what is current, and git keeps the history. Each
// has a name for the message.
var notebook = []struct {
	name string
	re   *regexp.Regexp
}{
	// A date, except the one that stamps a table of measured figures:
	// "Measured 2026-11-28" (measuredDate).
	{"a date", regexp.MustCompile(`\b20\d\d-[01]\d-[0-3]\d\b`)},
	{"a time of day", regexp.MustCompile(`\b\d{1,2}:\d\d(?:[-–]\d{1,2}:\d\d)? UTC\b`)},
	{"the work's sittings", regexp.MustCompile(`(?i)\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|this|that|last|previous|next|earlier|later|same|morning's|night's|today's)\s+(?:session|sitting)s?\b|\bsittings?\b`)},
	{"a day of the work", regexp.MustCompile(`(?i)\b(?:earlier|later) (?:that|the same|this) day\b|\bthat (?:morning|night|evening)\b|\bthe night's\b|\bthis morning\b`)},
	{"an issue number", regexp.MustCompile(`(?i)\bissues? #?\d+|\(#\d+\)`)},
	{"what was tried and not kept", regexp.MustCompile(`(?i)\bnot kept\b|\btaken back\b`)},
}

// measuredDate is the one date a line may hold: the stamp of the figures
// of a table or a run, once.
var measuredDate = regexp.MustCompile(`\b[Mm]easured (?:on )?20\d\d-[01]\d-[0-3]\d\b`)

// notebookWords returns what in line a user's page must not hold.
func notebookWords(line string) []string {
	var found []string
	for _, w := range notebook {
		matches := w.re.FindAllString(line, -1)
		if w.name == "a date" && len(matches) == 1 && measuredDate.MatchString(line) {
			continue
		}
		if len(matches) > 0 {
			found = append(found, w.name+" ("+matches[0]+")")
		}
	}
	return found
}

// The words are found where they are and only there.
func TestNotebookWords(t *testing.T) {
	for _, c := range []struct {
		line string
		want bool
	}{
		{"A run of the first (2026-11-27, 13:30 UTC, Go target)", true},
		{"**Seventh session, 2026-11-27** (16:41-18:34 UTC, idle)", true},
		{"the fifth session's subsection read again", true},
		{"in the sitting after", true},
		{"Step 4 was followed later that day on the same machine", true},
		{"## Before and after (issue 30)", true},
		{"fixed in #12 (#12)", true},
		{"Held packets going round at six times: tried, not kept", true},
		{"Measured 2026-11-26 and again 2026-11-27", true},
		{"Measured 2026-11-28 at 03a104c (`make bench AREA=sim`)", false},
		{"each at 6.9 Mb/s: about 12% slower", false},
		{"primary and backup sessions (a backup takes over when the primary leaves)", false},
		{"a P4Runtime session with election ID 1", false},
		{"the issue's target is 95%", false},
	} {
		if got := len(notebookWords(c.line)) > 0; got != c.want {
			t.Errorf("%q: found %v, want %v", c.line, notebookWords(c.line), c.want)
		}
	}
}

// TestPagesAreManual reads every Markdown page of the checkout: none
// holds a dated diary entry, a narration of the work's sittings, an
// issue number or what was tried and not kept (the words are
// notebook's).
func TestPagesAreManual(t *testing.T) {
	var pages int
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != ".." && (strings.HasPrefix(name, ".") || name == "p4rcm-out" || name == "out") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".md") {
			return nil
		}
		pages++
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if words := notebookWords(line); len(words) > 0 {
				t.Errorf("%s:%d: %s: %s", path, i+1, strings.Join(words, ", "), line)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if pages < 10 {
		t.Errorf("read %d pages; the checkout has more", pages)
	}
}
