package scenario

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

//go:embed presets/*.yaml
var presetFS embed.FS

//go:embed bench/*.txt
var benchFS embed.FS

// Preset describes a built-in scenario.
type Preset struct {
	Name        string
	Description string
}

// Presets lists the built-in scenarios in name order.
func Presets() []Preset {
	entries, _ := fs.ReadDir(presetFS, "presets")
	var ps []Preset
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".yaml")
		s, err := LoadPreset(name)
		desc := ""
		if err == nil {
			desc = s.Description
		}
		ps = append(ps, Preset{Name: name, Description: desc})
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	return ps
}

// LoadPreset reads a built-in scenario by name.
func LoadPreset(name string) (*Scenario, error) {
	data, err := presetFS.ReadFile(path.Join("presets", name+".yaml"))
	if err != nil {
		var names []string
		entries, _ := fs.ReadDir(presetFS, "presets")
		for _, e := range entries {
			names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
		}
		return nil, fmt.Errorf("unknown preset %q (known: %s)", name, strings.Join(names, ", "))
	}
	return Parse(data, "preset "+name, "")
}

// benchData reads an embedded benchmark input: the ns-3 RDMA simulator's
// 320-host fat tree and web-search flow file.
func benchData(name string) ([]byte, error) {
	data, err := benchFS.ReadFile(path.Join("bench", name))
	if err != nil {
		return nil, fmt.Errorf("no built-in benchmark file %q (fat320.topo.txt, websearch30_10ms.flows.txt)", name)
	}
	return data, nil
}
