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

//go:embed data/*.txt
var dataFS embed.FS

// Preset describes a built-in scenario.
type Preset struct {
	Name        string `json:"name"`
	Description string `json:"description"`
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

// builtinData reads an embedded input file of the presets: the ns-3 RDMA
// simulator's 320-host fat tree and web-search flow file (the benchmark),
// and the topologies of the RCM paper's micro-benchmarks.
func builtinData(name string) ([]byte, error) {
	data, err := dataFS.ReadFile(path.Join("data", name))
	if err != nil {
		entries, _ := fs.ReadDir(dataFS, "data")
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return nil, fmt.Errorf("no built-in file %q (known: %s)", name, strings.Join(names, ", "))
	}
	return data, nil
}
