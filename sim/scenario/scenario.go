// Package scenario reads simulation scenarios: YAML files (or built-in
// presets) that name a topology, a workload, a congestion-control scheme
// and its parameters, a seed and what to record, and turns them into a
// sim.Config. Every error names the file, the line and the field.
package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Scenario is one scenario file.
type Scenario struct {
	Name        string     `yaml:"name"`
	Description string     `yaml:"description"`
	Seed        uint64     `yaml:"seed"`
	Stop        Duration   `yaml:"stop"`
	Topology    Topology   `yaml:"topology"`
	Workload    *Workload  `yaml:"workload"`
	Workloads   []Workload `yaml:"workloads"`
	// Scheme is the congestion-control scheme: dcqcn (PFC and DCQCN), pfc
	// (PFC only, no end-to-end control), lossy (DCQCN, PFC off, drops
	// recovered by go-back-N), rcm (PFC, DCQCN at the hosts and RCM in the
	// switches), rcm-rcc (rcm without adaptive routing), hpcc, timely and
	// dctcp (PFC and those schemes as the ns-3 RDMA simulator runs them),
	// rcm-hpcc, rcm-timely and rcm-dctcp (RCM in the switches with that
	// scheme at the hosts), ldcp (LDCP's window sender, PFC off) or
	// ldcp-rate (its rate-based variant, PFC off).
	Scheme string `yaml:"scheme"`
	DCQCN  DCQCN  `yaml:"dcqcn"`
	HPCC   HPCC   `yaml:"hpcc"`
	TIMELY TIMELY `yaml:"timely"`
	DCTCP  DCTCP  `yaml:"dctcp"`
	LDCP   LDCP   `yaml:"ldcp"`
	RCM    RCM    `yaml:"rcm"`
	Host   Host   `yaml:"host"`
	Switch Switch `yaml:"switch"`
	Output Output `yaml:"output"`

	file string     // where it came from, for messages
	dir  string     // for relative paths inside it
	root *yaml.Node // the document, for line numbers
	// sets say where values given on the command line came from, by
	// dotted path ("--set workload.load=0.5", "--load 0.5"): errors about them
	// name the override, not a line of the file.
	sets map[string]string
}

// Topology selects and sizes the network.
type Topology struct {
	// Kind is fattree, leafspine, dumbbell, star, testbed or ns3.
	Kind string `yaml:"kind"`
	// K is the fat tree's arity (k^3/4 hosts).
	K int `yaml:"k"`
	// Hosts is the star's host count.
	Hosts int `yaml:"hosts"`
	// Left and Right are the dumbbell's host counts.
	Left  int `yaml:"left"`
	Right int `yaml:"right"`
	// Leaf-spine shape.
	Leaves           int     `yaml:"leaves"`
	Spines           int     `yaml:"spines"`
	HostsPerLeaf     int     `yaml:"hosts_per_leaf"`
	Oversubscription float64 `yaml:"oversubscription"`
	UplinkRate       Rate    `yaml:"uplink_rate"`
	// HostsPerToR is the testbed's hosts per ToR (5 by default).
	HostsPerToR    int      `yaml:"hosts_per_tor"`
	HostRate       Rate     `yaml:"host_rate"`
	FabricRate     Rate     `yaml:"fabric_rate"`
	BottleneckRate Rate     `yaml:"bottleneck_rate"`
	Delay          Duration `yaml:"delay"`
	// File is an ns-3 RDMA simulator topology file, relative to the
	// scenario file.
	File string `yaml:"file"`
}

// Workload generates flows.
type Workload struct {
	// Kind is poisson, hotspot, incast, file or flows.
	Kind string `yaml:"kind"`
	// CDF is a built-in flow-size distribution (websearch, fbhadoop,
	// datamining, alistorage, googlerpc) or a CDF file.
	CDF       string   `yaml:"cdf"`
	Load      float64  `yaml:"load"`
	Start     Duration `yaml:"start"`
	Duration  Duration `yaml:"duration"`
	GroupSize int      `yaml:"group_size"`
	// Hosts limits a poisson or hotspot workload to these node IDs.
	Hosts    []int  `yaml:"hosts"`
	Priority *int   `yaml:"priority"`
	Class    string `yaml:"class"`
	// Incast.
	Senders  []int    `yaml:"senders"`
	Receiver *int     `yaml:"receiver"`
	Size     Size     `yaml:"size"`
	Sizes    []Size   `yaml:"sizes"`
	Skew     Duration `yaml:"skew"`
	// Hot spot.
	HotFraction float64 `yaml:"hot_fraction"`
	HotHosts    float64 `yaml:"hot_hosts"`
	// File is an ns-3 flow file, relative to the scenario file.
	File string `yaml:"file"`
	// Flows lists flows explicitly.
	Flows []FlowSpec `yaml:"flows"`
}

// FlowSpec is one explicit flow.
type FlowSpec struct {
	Src      int      `yaml:"src"`
	Dst      int      `yaml:"dst"`
	Size     Size     `yaml:"size"`
	Start    Duration `yaml:"start"`
	Priority *int     `yaml:"priority"`
	Class    string   `yaml:"class"`
}

// DCQCN picks a named parameter set and overrides any of its values.
type DCQCN struct {
	// Preset is paper, hpcc or mellanox (hpcc by default).
	Preset           string    `yaml:"preset"`
	G                *Fraction `yaml:"g" ns3:"EWMA_GAIN"`
	InitialAlpha     *float64  `yaml:"initial_alpha"`
	AlphaInterval    *Duration `yaml:"alpha_interval" ns3:"ALPHA_RESUME_INTERVAL"`
	DecreaseInterval *Duration `yaml:"decrease_interval" ns3:"RATE_DECREASE_INTERVAL"`
	RateOnFirstCNP   *float64  `yaml:"rate_on_first_cnp" ns3:"RateOnFirstCnp"`
	ClampTarget      *bool     `yaml:"clamp_target" ns3:"CLAMP_TARGET_RATE"`
	Timer            *Duration `yaml:"timer" ns3:"RP_TIMER"`
	ByteCounter      *Size     `yaml:"byte_counter"`
	F                *int      `yaml:"f" ns3:"FAST_RECOVERY_TIMES"`
	RAI              *Rate     `yaml:"rai" ns3:"RATE_AI"`
	RHAI             *Rate     `yaml:"rhai" ns3:"RATE_HAI"`
	MinRate          *Rate     `yaml:"min_rate" ns3:"MIN_RATE"`
	RefRate          *Rate     `yaml:"ref_rate"`
	ScaleWithRate    *bool     `yaml:"scale_with_rate"`
	CNPInterval      *Duration `yaml:"cnp_interval"`
	KMin             *Size     `yaml:"kmin" ns3:"KMIN_MAP"`
	KMax             *Size     `yaml:"kmax" ns3:"KMAX_MAP"`
	PMax             *float64  `yaml:"pmax" ns3:"PMAX_MAP"`
}

// HPCC picks a named HPCC parameter set and overrides any of its values
// (hpcc.Params documents each). The ns3 tags of this section and the
// others name the ns-3 RDMA simulator's setting for each value, where it
// has one: its configuration file's key, or an attribute of its RdmaHw.
type HPCC struct {
	// Preset is ns3 or paper (ns3 by default).
	Preset         string    `yaml:"preset"`
	Eta            *Fraction `yaml:"eta" ns3:"U_TARGET"`
	MIThresh       *int      `yaml:"mi_thresh" ns3:"MI_THRESH"`
	RAI            *Rate     `yaml:"rai" ns3:"RATE_AI"`
	MinRate        *Rate     `yaml:"min_rate" ns3:"MIN_RATE"`
	RefRate        *Rate     `yaml:"ref_rate"`
	ScaleWithRate  *bool     `yaml:"scale_with_rate"`
	FastReact      *bool     `yaml:"fast_react" ns3:"FAST_REACT"`
	SampleFeedback *bool     `yaml:"sample_feedback" ns3:"SAMPLE_FEEDBACK"`
	MultiRate      *bool     `yaml:"multi_rate" ns3:"MULTI_RATE"`
	INTMulti       *int      `yaml:"int_multi" ns3:"INT_MULTI"`
}

// TIMELY picks a named TIMELY parameter set and overrides any of its
// values (timely.Params documents each).
type TIMELY struct {
	// Preset is ns3 (the default).
	Preset        string    `yaml:"preset"`
	Alpha         *Fraction `yaml:"alpha" ns3:"TimelyAlpha"`
	Beta          *Fraction `yaml:"beta" ns3:"TimelyBeta"`
	TLow          *Duration `yaml:"t_low" ns3:"TimelyTLow"`
	THigh         *Duration `yaml:"t_high" ns3:"TimelyTHigh"`
	MinRTT        *Duration `yaml:"min_rtt" ns3:"TimelyMinRtt"`
	RAI           *Rate     `yaml:"rai" ns3:"RATE_AI"`
	RHAI          *Rate     `yaml:"rhai" ns3:"RATE_HAI"`
	HAIThresh     *int      `yaml:"hai_thresh"`
	MinRate       *Rate     `yaml:"min_rate" ns3:"MIN_RATE"`
	RefRate       *Rate     `yaml:"ref_rate"`
	ScaleWithRate *bool     `yaml:"scale_with_rate"`
}

// DCTCP picks a named DCTCP parameter set and overrides any of its values
// (dctcp.Params documents each).
type DCTCP struct {
	// Preset is ns3 (the default).
	Preset  string    `yaml:"preset"`
	G       *Fraction `yaml:"g" ns3:"EWMA_GAIN"`
	RAI     *Rate     `yaml:"rai" ns3:"DCTCP_RATE_AI"`
	MinRate *Rate     `yaml:"min_rate" ns3:"MIN_RATE"`
	KMin    *Size     `yaml:"kmin" ns3:"KMIN_MAP"`
	KMax    *Size     `yaml:"kmax" ns3:"KMAX_MAP"`
	PMax    *float64  `yaml:"pmax" ns3:"PMAX_MAP"`
	RefRate *Rate     `yaml:"ref_rate"`
}

// LDCP picks a named LDCP parameter set and overrides any of its values
// (ldcp.Params documents each). Sizes are bytes at ref_rate; windows are
// in BDPs of each flow's path.
type LDCP struct {
	// Preset is draft or delayed (draft by default).
	Preset       string    `yaml:"preset"`
	Alpha        *Fraction `yaml:"alpha"`
	Beta         *Fraction `yaml:"beta"`
	Gamma        *Fraction `yaml:"gamma"`
	Eta          *Fraction `yaml:"eta"`
	MaxWindow    *float64  `yaml:"max_window"`
	IW           *float64  `yaml:"iw"`
	AckEvery     *int      `yaml:"ack_every"`
	ProbeTimeout *Duration `yaml:"probe_timeout"`
	CNPInterval  *Duration `yaml:"cnp_interval"`
	KMin         *Size     `yaml:"kmin"`
	KMax         *Size     `yaml:"kmax"`
	PMax         *float64  `yaml:"pmax"`
	K            *Size     `yaml:"k"`
	BufMax       *Size     `yaml:"buf_max"`
	RefRate      *Rate     `yaml:"ref_rate"`
}

// RCM overrides any of RCM's constants (rcm.Defaults documents each).
type RCM struct {
	QEq            *Size     `yaml:"qeq"`
	Wq             *float64  `yaml:"wq"`
	W              *float64  `yaml:"w"`
	Gd             *Fraction `yaml:"gd"`
	SampleBytes    *Size     `yaml:"sample_bytes"`
	MinSampleBytes *Size     `yaml:"min_sample_bytes"`
	CAMDepth       *int      `yaml:"cam_depth"`
	CFRSampleEvery *int      `yaml:"cfr_sample_every"`
	CAMMinHits     *int      `yaml:"cam_min_hits"`
	Window         *Size     `yaml:"window"`
	MinShare       *Fraction `yaml:"min_share"`
	WorkConserving *bool     `yaml:"work_conserving"`
	CNInterval     *Duration `yaml:"cn_interval"`
	CNHold         *Duration `yaml:"cn_hold"`
	RegionCNs      *int      `yaml:"region_cns"`
	RegionWindow   *Duration `yaml:"region_window"`
	SARExisting    *bool     `yaml:"sar_existing"`
	PinIdle        *Duration `yaml:"pin_idle"`
	RefRate        *Rate     `yaml:"ref_rate"`

	// The mechanisms, each on unless set false (rcm.Params documents
	// each ablation). rcc is hold's older name.
	CRD   *bool `yaml:"crd"`
	CFR   *bool `yaml:"cfr"`
	Hold  *bool `yaml:"hold"`
	RCC   *bool `yaml:"rcc"`
	Limit *bool `yaml:"limit"`
	CN    *bool `yaml:"cn"`
	SAR   *bool `yaml:"sar"`
}

// Host configures the NICs.
type Host struct {
	MTU         int      `yaml:"mtu"`
	AckInterval int      `yaml:"ack_interval"`
	RTO         Duration `yaml:"rto"`
	// Window is the ns-3 simulator's sending window; by default on and
	// variable for hpcc and dctcp, as its run.py runs them, off otherwise.
	Window Window `yaml:"window"`
	// AckHighPrio sends the NIC's ACKs whether or not PFC pauses their
	// priority (the ns-3 simulator's ACK_HIGH_PRIO, which does no more);
	// by default false for hpcc and dctcp, as its run.py runs them, true
	// otherwise.
	AckHighPrio *bool `yaml:"ack_high_prio" ns3:"ACK_HIGH_PRIO"`
	// Wire sizes frames: ethernet (RoCEv2 over Ethernet, the default) or
	// ns3 (as the ns-3 RDMA simulator does, its ideal FCT included).
	Wire string `yaml:"wire"`
}

// Window is the ns-3 simulator's sending window (sim.Window).
type Window struct {
	Enabled  *bool `yaml:"enabled" ns3:"HAS_WIN"`
	Variable *bool `yaml:"variable" ns3:"VAR_WIN"`
	PerPath  *bool `yaml:"per_path" ns3:"GLOBAL_T (inverted)"`
}

// Switch configures every switch.
type Switch struct {
	Buffer Size `yaml:"buffer"`
	// PFCBeta selects dynamic PFC thresholds; PFCXOFF static ones.
	PFCBeta      *Fraction `yaml:"pfc_beta"`
	PFCBetaScale *bool     `yaml:"pfc_beta_scale"`
	PFCXOFF      Size      `yaml:"pfc_xoff"`
	// Lossless lists the priorities with PFC (default: those the flows use).
	Lossless []int `yaml:"lossless"`
	// Headroom is t_flight; zero derives it per port with buffercalc.
	Headroom    Size `yaml:"headroom"`
	XONOffset   Size `yaml:"xon_offset"`
	PauseQuanta int  `yaml:"pause_quanta"`
	QueueLimit  Size `yaml:"queue_limit"`
	WREDK       Size `yaml:"wred_k"`
	// BufMax caps every lossy egress queue, bytes at the host rate (the
	// LDCP draft's buf_max; the ldcp schemes default to ldcp.buf_max).
	BufMax Size `yaml:"buf_max"`
	// ECN overrides the DCQCN parameter set's marking curve.
	ECN *ECN `yaml:"ecn"`
	// AckInData queues ACKs and NACKs with their priority's data rather
	// than with CNPs and PFC frames in the strict-priority queue: what
	// the ns-3 simulator's switches do (their AckHighPrio attribute, which
	// its third.cc leaves 0). Off by default, as the DCQCN paper
	// recommends; the bench-fat320 preset and ns-3 configurations turn it
	// on.
	AckInData bool `yaml:"ack_in_data" ns3:"AckHighPrio of SwitchNode (inverted)"`
}

// ECN is a RED/ECN marking curve at a reference link rate.
type ECN struct {
	KMin    Size    `yaml:"kmin"`
	KMax    Size    `yaml:"kmax"`
	PMax    float64 `yaml:"pmax"`
	RefRate Rate    `yaml:"ref_rate"`
}

// Output says what to record besides the flows and port counters.
type Output struct {
	// NS3FCT has no effect: fct.txt is always written. It is kept so
	// that scenario files that set it still load.
	NS3FCT       bool         `yaml:"ns3_fct"`
	QueueSamples QueueSamples `yaml:"queue_samples"`
	RateSamples  RateSamples  `yaml:"rate_samples"`
	CCSamples    RateSamples  `yaml:"cc_samples"`
}

// QueueSamples samples switch egress queues.
type QueueSamples struct {
	Interval Duration `yaml:"interval"`
	Max      int      `yaml:"max"`
	// Ports are [node, port] pairs; empty samples every non-empty queue.
	Ports [][2]int `yaml:"ports"`
}

// RateSamples samples per-flow delivered bytes (rate_samples) or, with
// the same fields, the senders' DCQCN state (cc_samples).
type RateSamples struct {
	Interval Duration `yaml:"interval"`
	Flows    []int    `yaml:"flows"`
}

// Load reads a scenario file.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path, filepath.Dir(path))
}

// Parse reads a scenario from data; file names it in messages and dir
// anchors the relative paths it contains.
func Parse(data []byte, file, dir string) (*Scenario, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		// A syntax error: put the library's line number where ours go.
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if g := yamlLine.FindStringSubmatch(msg); g != nil {
			line, _ := strconv.Atoi(g[1])
			return nil, fmt.Errorf("%s:%d: %s", file, syntaxLine(line, g[2]), syntaxHint(g[2]))
		}
		return nil, fmt.Errorf("%s: %s", file, msg)
	}
	s := &Scenario{file: file, dir: dir, root: &root}
	if err := s.decode(data); err != nil {
		return nil, err
	}
	return s, nil
}

// syntaxLine corrects the line of a YAML syntax error. The library counts
// the lines of its parser's errors (all "did not find expected ...") from
// 0 and those of its scanner from 1; ours count from 1.
func syntaxLine(line int, msg string) int {
	if strings.HasPrefix(msg, "did not find expected") {
		return line + 1
	}
	return line
}

// syntaxHint adds what usually causes a YAML syntax error to its message.
func syntaxHint(msg string) string {
	switch {
	case strings.HasSuffix(msg, "expected ',' or '}'"):
		return msg + " (a { section is not closed: each { needs its })"
	case strings.HasSuffix(msg, "expected ',' or ']'"):
		return msg + " (a [ list is not closed: each [ needs its ])"
	case msg == "did not find expected key":
		return msg + " (check the indentation: keys of one section line up)"
	case msg == "found character that cannot start any token":
		return msg + " (a tab? YAML indents with spaces)"
	}
	return msg
}

// decode fills the struct from the document's bytes, strictly: unknown
// keys are errors.
func (s *Scenario) decode(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	file, dir, root, sets := s.file, s.dir, s.root, s.sets
	*s = Scenario{}
	err := dec.Decode(s)
	if errors.Is(err, io.EOF) {
		err = nil // an empty file: all defaults
	}
	s.file, s.dir, s.root, s.sets = file, dir, root, sets
	var fe *fieldError
	if errors.As(err, &fe) {
		return s.errorf(s.pathAt(fe.line, fe.column), "%s", fe.msg)
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return s.typeError(te)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", s.file, err)
	}
	return nil
}

// Set overrides one value by its dotted path ("workload.load",
// "dcqcn.preset", "switch.buffer"), creating sections as needed, as if
// the file had said so.
func (s *Scenario) Set(path, value string) error {
	return s.SetFrom(fmt.Sprintf("--set %s=%s", path, value), path, value)
}

// SetAll applies overrides written "path=value", in order, as --set
// gives them.
func (s *Scenario) SetAll(sets ...string) error {
	for _, kv := range sets {
		path, value, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("--set %q: want path=value", kv)
		}
		if err := s.Set(path, value); err != nil {
			return err
		}
	}
	return nil
}

// SetFrom is Set for a value that came from origin, as errors about it
// will say: a flag that stands for a path, "--load 0.5".
func (s *Scenario) SetFrom(origin, path, value string) error {
	keys := strings.Split(path, ".")
	if slices.Contains(keys, "") {
		return fmt.Errorf("%s: %q is not a path: want dotted keys such as workload.load=0.5", origin, path)
	}
	n := s.root
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"})
		}
		n = n.Content[0]
	}
	for i, k := range keys {
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s: %s is not a section", origin, strings.Join(keys[:i], "."))
		}
		var next *yaml.Node
		for j := 0; j+1 < len(n.Content); j += 2 {
			if n.Content[j].Value == k {
				next = n.Content[j+1]
			}
		}
		last := i == len(keys)-1
		if next == nil {
			next = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			if last {
				next = &yaml.Node{Kind: yaml.ScalarNode}
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, next)
		}
		if last {
			var v yaml.Node
			if err := yaml.Unmarshal([]byte(value), &v); err != nil || len(v.Content) != 1 {
				*next = yaml.Node{Kind: yaml.ScalarNode, Value: value}
			} else {
				*next = *v.Content[0]
			}
		}
		n = next
	}
	if s.sets == nil {
		s.sets = map[string]string{}
	}
	s.sets[path] = origin
	// Decode the edited tree. The decoder's positions are those of the
	// re-encoded text, so errors are placed in a tree parsed from it; the
	// edited tree keeps the file's lines for later messages.
	blockStyle(s.root) // one value per line, so that a line names a field
	data, err := yaml.Marshal(s.root)
	if err != nil {
		return fmt.Errorf("%s: %w", origin, err)
	}
	var encoded yaml.Node
	if err := yaml.Unmarshal(data, &encoded); err != nil {
		return fmt.Errorf("%s: %w", origin, err)
	}
	edited := s.root
	s.root = &encoded
	err = s.decode(data)
	s.root = edited
	return err
}

// Canonical is the scenario as YAML with every override applied and no
// comments: two scenarios that say the same give the same bytes, which
// is what identifies a study's scenario across machines.
func (s *Scenario) Canonical() ([]byte, error) {
	root := cloneNode(s.root)
	if root == nil {
		return nil, nil
	}
	var strip func(n *yaml.Node)
	strip = func(n *yaml.Node) {
		n.HeadComment, n.LineComment, n.FootComment = "", "", ""
		for _, c := range n.Content {
			strip(c)
		}
	}
	strip(root)
	blockStyle(root)
	data, err := yaml.Marshal(root)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.file, err)
	}
	return data, nil
}

// SetBy names what set path on the command line ("--set workload.load=0.5",
// "--load 0.5"), or "" if nothing did.
func (s *Scenario) SetBy(path string) string { return s.sets[path] }

// blockStyle turns flow-style sections ({a: 1, b: 2}) into block style.
func blockStyle(n *yaml.Node) {
	n.Style &^= yaml.FlowStyle
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// Clone makes an independent copy of s: Set on one leaves the other as it
// was. Messages from the copy name the same file, lines and overrides.
func (s *Scenario) Clone() (*Scenario, error) {
	c := &Scenario{file: s.file, dir: s.dir, root: cloneNode(s.root)}
	if len(s.sets) > 0 {
		c.sets = make(map[string]string, len(s.sets))
		for k, v := range s.sets {
			c.sets[k] = v
		}
	}
	if c.root != nil {
		if err := c.root.Decode(c); err != nil {
			return nil, fmt.Errorf("%s: copying the scenario: %w", s.file, err)
		}
	}
	return c, nil
}

func cloneNode(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = cloneNode(k)
	}
	c.Alias = cloneNode(n.Alias)
	return &c
}

// where places a message about field: the --set that gave it or one of
// its sections, else the file and line.
func (s *Scenario) where(field string, line int) string {
	// The longest matching path names it most closely; ties go in
	// alphabetical order, so that the message does not depend on map
	// order.
	best := ""
	for p := range s.sets {
		if field == p || strings.HasPrefix(field, p+".") || strings.HasPrefix(p, field+".") {
			if best == "" || len(p) > len(best) || len(p) == len(best) && p < best {
				best = p
			}
		}
	}
	if best != "" {
		return s.sets[best]
	}
	return fmt.Sprintf("%s:%d", s.file, line)
}

// lineOf finds the line of a dotted path in the file: "workload.load",
// "workloads.1.size"; if the path is absent, the line of its longest
// prefix there (0 if none).
func (s *Scenario) lineOf(path string) int {
	_, line := s.find(path)
	return line
}

// nodeAt is the node of a dotted path in the file, nil if absent.
func (s *Scenario) nodeAt(path string) *yaml.Node {
	n, _ := s.find(path)
	return n
}

// find walks a dotted path down the document: the node there (nil if
// absent) and the line of the path or of its longest prefix present.
func (s *Scenario) find(path string) (*yaml.Node, int) {
	n := s.root
	if n == nil {
		return nil, 0
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, k := range strings.Split(path, ".") {
		var next *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == k {
					next = n.Content[j+1]
					line = n.Content[j].Line
				}
			}
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(k); err == nil && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
				line = next.Line
			}
		}
		if next == nil {
			return nil, line
		}
		n = next
	}
	return n, line
}

// errorf makes an error at a field of the scenario: "file:line: field: ...".
func (s *Scenario) errorf(field, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %s", s.where(field, s.lineOf(field)), field, fmt.Sprintf(format, args...))
}

// pathAt is the dotted path of the value that starts at line and column.
func (s *Scenario) pathAt(line, column int) string {
	var path string
	walkValues(s.root, "", func(p string, _, v *yaml.Node) bool {
		if v.Kind == yaml.ScalarNode && v.Line == line && v.Column == column {
			path = p
			return true
		}
		return false
	})
	return path
}

// walkValues calls visit with the dotted path, the key (nil in a list) and
// the node of every value below n, depth first in document order, until
// visit returns true.
func walkValues(n *yaml.Node, prefix string, visit func(path string, k, v *yaml.Node) bool) bool {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if walkValues(c, prefix, visit) {
				return true
			}
		}
	case yaml.MappingNode:
		for j := 0; j+1 < len(n.Content); j += 2 {
			p := join(prefix, n.Content[j].Value)
			if visit(p, n.Content[j], n.Content[j+1]) || walkValues(n.Content[j+1], p, visit) {
				return true
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := join(prefix, strconv.Itoa(i))
			if visit(p, nil, c) || walkValues(c, p, visit) {
				return true
			}
		}
	}
	return false
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

// File is where the scenario came from.
func (s *Scenario) File() string { return s.file }

var (
	yamlLine      = regexp.MustCompile(`^line (\d+): (.*)$`)
	yamlUnmarshal = regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.*)$")
	yamlUnknown   = regexp.MustCompile(`^field (\S+) not found in type`)
)

// typeError turns the YAML library's type errors into ours: file, line and
// field first, then what is wrong in words.
func (s *Scenario) typeError(te *yaml.TypeError) error {
	msgs := make([]string, len(te.Errors))
	for i, m := range te.Errors {
		line, rest, key, value := 0, m, "", ""
		kind := yaml.ScalarNode
		if g := yamlLine.FindStringSubmatch(m); g != nil {
			line, _ = strconv.Atoi(g[1])
			rest = g[2]
		}
		if g := yamlUnmarshal.FindStringSubmatch(rest); g != nil {
			value = g[2]
			want := map[string]string{"float64": "a number", "int": "a whole number", "uint64": "a whole number",
				"bool": "true or false", "string": "a string"}[g[3]]
			if want == "" {
				want = "a " + strings.TrimPrefix(strings.TrimPrefix(g[3], "[]"), "scenario.")
				if strings.HasPrefix(g[3], "[]") {
					want = "a list"
				}
			}
			switch g[1] {
			case "seq":
				rest, kind = fmt.Sprintf("want %s, not a list", want), yaml.SequenceNode
			case "map":
				rest, kind = fmt.Sprintf("want %s, not a section", want), yaml.MappingNode
			default:
				rest = fmt.Sprintf("%q is not %s", g[2], want)
			}
		}
		if g := yamlUnknown.FindStringSubmatch(rest); g != nil {
			key = g[1]
		}
		path := s.pathOnLine(line, key, value, kind)
		if key != "" {
			rest = fmt.Sprintf("unknown field %q (see docs/scenarios.md for the fields of each section)", key)
		} else if path != "" {
			rest = path + ": " + rest
		}
		msgs[i] = fmt.Sprintf("%s: %s", s.where(path, line), rest)
	}
	return errors.New(strings.Join(msgs, "; "))
}

// pathOnLine is the dotted path of a value on line: the one under key, or
// else the one written as value, or else the first of its kind (a scalar,
// a list or a section). The YAML library gives a line but no column, and
// a flow-style section ({kind: x, load: y}) puts several values on one
// line.
func (s *Scenario) pathOnLine(line int, key, value string, kind yaml.Kind) string {
	var byKey, byValue, first string
	walkValues(s.root, "", func(p string, k, v *yaml.Node) bool {
		if k != nil && key != "" && k.Line == line && k.Value == key {
			byKey = p
			return true
		}
		if v.Kind == kind && v.Line == line {
			if first == "" {
				first = p
			}
			if byValue == "" && value != "" && v.Value == value {
				byValue = p
			}
		}
		return false
	})
	for _, p := range []string{byKey, byValue} {
		if p != "" {
			return p
		}
	}
	return first
}
