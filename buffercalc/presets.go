package buffercalc

import (
	"fmt"
	"strings"
)

// Preset is a switch ASIC with its public figures.
type Preset struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Source      string  `json:"source"`
	Ports       int     `json:"ports"`
	Rate        float64 `json:"port_rate_bps"`
	Buffer      float64 `json:"buffer_bytes"`
	Priorities  int     `json:"lossless_priorities"`
	MTU         float64 `json:"mtu_bytes"`
	// Headroom is t_flight when the source states it; zero means the link
	// model computes it.
	Headroom float64 `json:"headroom_bytes,omitempty"`
}

// Vendors quote buffers in "MB"; they are read here as decimal megabytes,
// the convention under which the DCQCN paper's figures for the 12 MB
// Trident II come out.
//
// With all 8 priorities lossless, the headroom of a 100 Gb/s port on a 100 m
// cable (about 72 KB each) would exceed a 16 MB buffer, so the 100 Gb/s and
// faster presets make two priorities lossless, as SONiC's default buffer
// configuration does (priorities 3 and 4); --priorities overrides it.
var presets = []Preset{
	{
		Name:        "trident2",
		Description: "Broadcom Trident II (Arista 7050QX-32), the DCQCN paper's switch",
		Source:      "DCQCN paper (SIGCOMM 2015) section 4: 32 x 40 Gb/s, 12 MB shared buffer, 8 PFC priorities, t_flight 22.4 KB at 1500 B MTU",
		Ports:       32, Rate: 40e9, Buffer: 12e6, Priorities: 8, MTU: 1500, Headroom: 22400,
	},
	{
		Name:        "tomahawk",
		Description: "Broadcom Tomahawk BCM56960 (Arista 7060CX-32S)",
		Source:      "Arista 7060X series datasheet: 32 x 100 Gb/s, 16 MB packet buffer",
		Ports:       32, Rate: 100e9, Buffer: 16e6, Priorities: 2, MTU: 1500,
	},
	{
		Name:        "trident3",
		Description: "Broadcom Trident 3 BCM56870 (Arista 7050CX3-32S)",
		Source:      "Arista 7050X3 series datasheet: 32 x 100 Gb/s, 32 MB packet buffer",
		Ports:       32, Rate: 100e9, Buffer: 32e6, Priorities: 2, MTU: 1500,
	},
	{
		Name:        "tomahawk2",
		Description: "Broadcom Tomahawk 2 BCM56970 (Arista 7260CX3-64)",
		Source:      "Arista 7260X3 series datasheet: 64 x 100 Gb/s, 42 MB packet buffer",
		Ports:       64, Rate: 100e9, Buffer: 42e6, Priorities: 2, MTU: 1500,
	},
	{
		Name:        "tomahawk3",
		Description: "Broadcom Tomahawk 3 BCM56980 (Arista 7060DX4-32)",
		Source:      "Arista 7060X4 series datasheet: 32 x 400 Gb/s, 64 MB packet buffer",
		Ports:       32, Rate: 400e9, Buffer: 64e6, Priorities: 2, MTU: 1500,
	},
	{
		Name:        "spectrum",
		Description: "NVIDIA (Mellanox) Spectrum (SN2700)",
		Source:      "Mellanox SN2700 datasheet: 32 x 100 Gb/s, 16 MB fully shared buffer",
		Ports:       32, Rate: 100e9, Buffer: 16e6, Priorities: 2, MTU: 1500,
	},
}

// Presets lists the built-in switches in a fixed order.
func Presets() []Preset { return append([]Preset(nil), presets...) }

// LookupPreset finds a preset by name.
func LookupPreset(name string) (Preset, error) {
	names := make([]string, len(presets))
	for i, p := range presets {
		if strings.EqualFold(p.Name, name) {
			return p, nil
		}
		names[i] = p.Name
	}
	return Preset{}, fieldErr("preset", "unknown preset %q (known: %s)", name, strings.Join(names, ", "))
}

// Link is the preset's port with the standard worst-case delays.
func (p Preset) Link() Link { return StandardLink(p.Rate, p.MTU) }

// String is a one-line summary: "32 x 40 Gb/s, 12 MB".
func (p Preset) String() string {
	return fmt.Sprintf("%d x %s, %s", p.Ports, FormatRate(p.Rate), FormatSize(p.Buffer))
}
