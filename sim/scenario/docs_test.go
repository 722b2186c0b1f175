package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// yamlBlock finds the YAML code blocks of a Markdown file.
var yamlBlock = regexp.MustCompile("(?ms)^```yaml\n(.*?)^```")

// TestDocsYAMLParses parses every YAML block of the documentation as a
// scenario and builds it: the docs show what a user copies, so each block
// must load as written.
func TestDocsYAMLParses(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../README.md")
	blocks := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range yamlBlock.FindAllSubmatchIndex(data, -1) {
			blocks++
			line := 1 + strings.Count(string(data[:m[2]]), "\n")
			name := fmt.Sprintf("%s, the block at line %d", filepath.Base(f), line)
			s, err := Parse(data[m[2]:m[3]], name, ".")
			if err != nil {
				t.Errorf("%s: the block does not parse: %v", name, err)
				continue
			}
			if _, err := s.Build(); err != nil {
				t.Errorf("%s: the block does not build: %v", name, err)
			}
		}
	}
	if blocks < 2 {
		t.Errorf("found %d YAML blocks in %v; the docs hold at least the field reference and an example", blocks, files)
	}
}
