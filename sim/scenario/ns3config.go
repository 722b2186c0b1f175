package scenario

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// The ns-3 RDMA simulator (HPCC's third.cc) reads one KEY VALUE... per
// line. FromNS3Config turns such a file into the scenario that runs the
// same experiment: its CC_MODE picks the scheme, each parameter goes to
// the scenario value the ns3 tags of the scheme sections name (RATE_AI to
// dcqcn.rai, hpcc.rai and timely.rai, as the ns-3 NIC has one rate step
// for all), the ECN maps become switch.ecn, and the topology and flow
// files it names are read as they are.

// ns3Defaults are the ns-3 simulator's own values of the keys a file may
// leave out (third.cc's globals and RdmaHw's attributes), so that an
// imported file runs as ns-3 would run it. Keys without a usable default
// (its TOPOLOGY_FILE, RATE_AI, L2_ACK_INTERVAL 0 that disables ACKs, the
// ECN maps it asserts on) are required instead.
var ns3Defaults = map[string]string{
	"CC_MODE": "1", "ENABLE_QCN": "1", "USE_DYNAMIC_PFC_THRESHOLD": "1", "PACKET_PAYLOAD_SIZE": "1000",
	"CLAMP_TARGET_RATE": "0", "ALPHA_RESUME_INTERVAL": "55", "RATE_DECREASE_INTERVAL": "4",
	"FAST_RECOVERY_TIMES": "5", "MIN_RATE": "100Mb/s", "DCTCP_RATE_AI": "1000Mb/s",
	"HAS_WIN": "1", "GLOBAL_T": "1", "VAR_WIN": "0", "FAST_REACT": "1", "U_TARGET": "0.95",
	"MI_THRESH": "5", "INT_MULTI": "1", "MULTI_RATE": "1", "SAMPLE_FEEDBACK": "0",
	"ACK_HIGH_PRIO": "0", "RATE_BOUND": "1", "BUFFER_SIZE": "16", "L2_CHUNK_SIZE": "0",
	"L2_BACK_TO_ZERO": "0", "ERROR_RATE_PER_LINK": "0", "SIMULATOR_STOP_TIME": "3.01",
	"LINK_DOWN": "0 0 0",
}

// ns3Required are the keys without a usable default, by CC_MODE (0: all).
var ns3Required = map[string][]int{
	"TOPOLOGY_FILE": nil, "FLOW_FILE": nil, "L2_ACK_INTERVAL": nil,
	"KMAX_MAP": nil, "KMIN_MAP": nil, "PMAX_MAP": nil,
	"RATE_AI": {1, 3, 7}, "RATE_HAI": {1, 7}, "RP_TIMER": {1}, "EWMA_GAIN": {1, 8},
}

// ns3Ignored are keys that name the ns-3 simulator's own output files
// and monitors, or settings with no effect on what the scenario runs:
// accepted, and listed in FromNS3Config's notes.
var ns3Ignored = map[string]string{
	"TRACE_FILE":        "p4rcm samples nothing by default (output.queue_samples, rate_samples, cc_samples)",
	"TRACE_OUTPUT_FILE": "see TRACE_FILE",
	"ENABLE_TRACE":      "see TRACE_FILE",
	"FCT_OUTPUT_FILE":   "p4rcm writes fct.txt, in this format, into its own output directory",
	"PFC_OUTPUT_FILE":   "PAUSE and RESUME counts per port are in ports.csv",
	"QLEN_MON_FILE":     "queues are sampled with output.queue_samples",
	"QLEN_MON_START":    "see QLEN_MON_FILE",
	"QLEN_MON_END":      "see QLEN_MON_FILE",
	"PAUSE_TIME":        "the ns-3 switch holds a paused queue until RESUME whatever the time; p4rcm's PAUSE lasts 65535 quanta, refreshed while the queue stays above XOFF",
	"PINT_LOG_BASE":     "HPCC-PINT only (CC_MODE 10)",
	"PINT_PROB":         "HPCC-PINT only (CC_MODE 10)",
}

// ns3Schemes maps CC_MODE to a scheme.
var ns3Schemes = map[int]string{1: "dcqcn", 3: "hpcc", 7: "timely", 8: "dctcp"}

// ns3Entry is one key of the file, with its values and line.
type ns3Entry struct {
	key    string
	values []string
	line   int // 0: the ns-3 default
}

// FromNS3Config reads a configuration file of the ns-3 RDMA simulator and
// returns the scenario that runs the same experiment, with notes on the
// keys it accepted but that change nothing here. A key it cannot honour
// is an error naming the file, line and key. Relative paths in the file
// are looked up as ns-3 would from its simulation directory: from the
// current directory, the file's own, or its parent (a file in mix/).
func FromNS3Config(path string) (*Scenario, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	entries := map[string]ns3Entry{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if prev, ok := entries[f[0]]; ok && prev.line > 0 {
			return nil, nil, fmt.Errorf("%s:%d: %s is given twice (first on line %d)", path, line, f[0], prev.line)
		}
		if len(f) < 2 {
			return nil, nil, fmt.Errorf("%s:%d: %s has no value", path, line, f[0])
		}
		entries[f[0]] = ns3Entry{key: f[0], values: f[1:], line: line}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	for k, v := range ns3Defaults {
		if _, ok := entries[k]; !ok {
			entries[k] = ns3Entry{key: k, values: strings.Fields(v)}
		}
	}
	im := &ns3Import{path: path, entries: entries}
	return im.build()
}

type ns3Import struct {
	path    string
	entries map[string]ns3Entry
	s       *Scenario
	used    map[string]bool
}

// origin names where a key's value came from, for messages.
func (im *ns3Import) origin(e ns3Entry) string {
	if e.line == 0 {
		return fmt.Sprintf("%s: %s (not given; the ns-3 default %s)", im.path, e.key, strings.Join(e.values, " "))
	}
	return fmt.Sprintf("%s:%d: %s", im.path, e.line, e.key)
}

func (im *ns3Import) errorf(key, format string, args ...any) error {
	return fmt.Errorf("%s: %s", im.origin(im.entries[key]), fmt.Sprintf(format, args...))
}

// get returns a key's entry, marking it used.
func (im *ns3Import) get(key string) (ns3Entry, bool) {
	e, ok := im.entries[key]
	im.used[key] = true
	return e, ok
}

// num reads a key's single value as a number.
func (im *ns3Import) num(key string) (float64, error) {
	e, _ := im.get(key)
	if len(e.values) != 1 {
		return 0, im.errorf(key, "want one value, got %d", len(e.values))
	}
	v, err := strconv.ParseFloat(e.values[0], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, im.errorf(key, "%q is not a number", e.values[0])
	}
	return v, nil
}

// set sets a scenario value from a key.
func (im *ns3Import) set(key, path, value string) error {
	return im.s.SetFrom(im.origin(im.entries[key]), path, value)
}

func (im *ns3Import) build() (*Scenario, []string, error) {
	im.used = map[string]bool{}
	name := strings.TrimSuffix(filepath.Base(im.path), filepath.Ext(im.path))
	base := fmt.Sprintf("name: %s\ndescription: %s\n", strconv.Quote(name),
		strconv.Quote("the ns-3 RDMA simulator's configuration "+im.path))
	s, err := Parse([]byte(base), im.path, "")
	if err != nil {
		return nil, nil, err
	}
	im.s = s
	mode, err := im.num("CC_MODE")
	if err != nil {
		return nil, nil, err
	}
	var missing []string
	for key, modes := range ns3Required {
		if _, ok := im.entries[key]; !ok && (modes == nil || contains(modes, int(mode))) {
			missing = append(missing, key)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, nil, fmt.Errorf("%s: %s missing; the ns-3 simulator has no usable default for them", im.path, strings.Join(missing, ", "))
	}
	steps := []func() error{im.scheme, im.files, im.host, im.params, im.switches, im.fixed}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, nil, err
		}
	}
	var left []ns3Entry
	for k, e := range im.entries {
		if !im.used[k] && e.line > 0 {
			left = append(left, e)
		}
	}
	sort.Slice(left, func(i, j int) bool { return left[i].line < left[j].line })
	var notes []string
	for _, e := range left {
		why, ok := ns3Ignored[e.key]
		if !ok {
			return nil, nil, fmt.Errorf("%s:%d: %s is not a key p4rcm can honour (docs/ns3.md lists the keys it reads)", im.path, e.line, e.key)
		}
		notes = append(notes, fmt.Sprintf("%s:%d: %s ignored: %s", im.path, e.line, e.key, why))
	}
	return im.s, notes, nil
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// scheme maps CC_MODE and ENABLE_QCN to the scheme.
func (im *ns3Import) scheme() error {
	mode, err := im.num("CC_MODE")
	if err != nil {
		return err
	}
	scheme, ok := ns3Schemes[int(mode)]
	switch {
	case int(mode) == 10:
		return im.errorf("CC_MODE", "10 is HPCC-PINT, which p4rcm does not model (HPCC is 3)")
	case !ok || mode != math.Trunc(mode):
		return im.errorf("CC_MODE", "%g is not a mode p4rcm runs (1 DCQCN, 3 HPCC, 7 TIMELY, 8 DCTCP)", mode)
	}
	qcn, err := im.num("ENABLE_QCN")
	if err != nil {
		return err
	}
	if qcn == 0 {
		switch scheme {
		case "dcqcn":
			scheme = "pfc" // no marks: DCQCN never cuts, PFC alone remains
		case "dctcp":
			return im.errorf("ENABLE_QCN", "0 leaves DCTCP without marks, which p4rcm does not run")
		}
	}
	return im.set("CC_MODE", "scheme", scheme)
}

// files resolves the topology and flow files as ns-3 would.
func (im *ns3Import) files() error {
	for _, f := range []struct{ key, kind, section string }{
		{"TOPOLOGY_FILE", "ns3", "topology"}, {"FLOW_FILE", "file", "workload"},
	} {
		e, _ := im.get(f.key)
		p, err := im.resolve(e.values[0])
		if err != nil {
			return im.errorf(f.key, "%v", err)
		}
		if err := im.set(f.key, f.section+".kind", f.kind); err != nil {
			return err
		}
		if err := im.set(f.key, f.section+".file", p); err != nil {
			return err
		}
	}
	return nil
}

// resolve finds a file named in the configuration.
func (im *ns3Import) resolve(name string) (string, error) {
	if filepath.IsAbs(name) {
		if _, err := os.Stat(name); err != nil {
			return "", err
		}
		return name, nil
	}
	dir := filepath.Dir(im.path)
	tried := []string{name, filepath.Join(dir, name), filepath.Join(dir, "..", name)}
	for _, p := range tried {
		if _, err := os.Stat(p); err == nil {
			return filepath.Abs(p)
		}
	}
	return "", fmt.Errorf("%s not found (looked in the current directory, %s and %s)", name, dir, filepath.Join(dir, ".."))
}

// host sets the NIC: payload, ACK interval, window and ACK priority.
func (im *ns3Import) host() error {
	payload, err := im.num("PACKET_PAYLOAD_SIZE")
	if err != nil {
		return err
	}
	if err := im.set("PACKET_PAYLOAD_SIZE", "host.mtu", strconv.Itoa(int(payload))); err != nil {
		return err
	}
	if err := im.s.SetFrom(im.path+": ns-3's frames", "host.wire", "ns3"); err != nil {
		return err
	}
	ack, err := im.num("L2_ACK_INTERVAL")
	if err != nil {
		return err
	}
	every := 1
	switch {
	case ack <= 0:
		return im.errorf("L2_ACK_INTERVAL", "%g turns ACKs off; p4rcm's receivers always acknowledge", ack)
	case ack <= payload:
	case math.Mod(ack, payload) == 0:
		every = int(ack / payload)
		chunk, err := im.num("L2_CHUNK_SIZE")
		if err != nil {
			return err
		}
		if chunk != 0 {
			return im.errorf("L2_CHUNK_SIZE", "%g with an ACK every %d packets: p4rcm does not acknowledge chunk boundaries apart", chunk, every)
		}
	default:
		return im.errorf("L2_ACK_INTERVAL", "%g bytes is not a whole number of %g-byte packets", ack, payload)
	}
	im.used["L2_CHUNK_SIZE"] = true
	if err := im.set("L2_ACK_INTERVAL", "host.ack_interval", strconv.Itoa(every)); err != nil {
		return err
	}
	for _, b := range []struct {
		key, path string
		invert    bool
	}{
		{"HAS_WIN", "host.window.enabled", false}, {"VAR_WIN", "host.window.variable", false},
		{"GLOBAL_T", "host.window.per_path", true}, {"ACK_HIGH_PRIO", "host.ack_high_prio", false},
	} {
		v, err := im.flag(b.key)
		if err != nil {
			return err
		}
		if err := im.set(b.key, b.path, strconv.FormatBool(v != b.invert)); err != nil {
			return err
		}
	}
	return nil
}

// flag reads a 0/1 key.
func (im *ns3Import) flag(key string) (bool, error) {
	v, err := im.num(key)
	if err != nil {
		return false, err
	}
	if v != 0 && v != 1 {
		return false, im.errorf(key, "want 0 or 1, got %g", v)
	}
	return v == 1, nil
}

// params sets every scheme section's value that an ns3 tag names, the
// rates and steps as given (not scaled by line rate), and the sections'
// own switches.
func (im *ns3Import) params() error {
	for _, sec := range []struct {
		name string
		typ  reflect.Type
	}{{"dcqcn", reflect.TypeOf(DCQCN{})}, {"hpcc", reflect.TypeOf(HPCC{})}, {"timely", reflect.TypeOf(TIMELY{})}, {"dctcp", reflect.TypeOf(DCTCP{})}} {
		for i := 0; i < sec.typ.NumField(); i++ {
			f := sec.typ.Field(i)
			key := f.Tag.Get("ns3")
			e, ok := im.entries[key]
			if key == "" || !ok || strings.HasSuffix(key, "_MAP") {
				continue
			}
			im.used[key] = true
			v, err := im.value(e, f.Type.Elem())
			if err != nil {
				return err
			}
			if err := im.set(key, sec.name+"."+yamlKey(f), v); err != nil {
				return err
			}
		}
		if _, ok := sec.typ.FieldByName("ScaleWithRate"); ok {
			if err := im.s.SetFrom(im.path+": rates as given", sec.name+".scale_with_rate", "false"); err != nil {
				return err
			}
		}
	}
	return nil
}

// value writes an entry's value as the scenario writes a value of type t.
func (im *ns3Import) value(e ns3Entry, t reflect.Type) (string, error) {
	if len(e.values) != 1 {
		return "", im.errorf(e.key, "want one value, got %d", len(e.values))
	}
	v := e.values[0]
	switch t {
	case reflect.TypeOf(Rate(0)):
		return v, nil
	case reflect.TypeOf(Duration(0)):
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return "", im.errorf(e.key, "%q is not a number of microseconds", v)
		}
		return v + "us", nil
	}
	switch t.Kind() {
	case reflect.Bool:
		b, err := im.flag(e.key)
		return strconv.FormatBool(b), err
	}
	return v, nil
}

// switches sets the buffer, PFC and the ECN curve.
func (im *ns3Import) switches() error {
	mb, err := im.num("BUFFER_SIZE")
	if err != nil {
		return err
	}
	if err := im.set("BUFFER_SIZE", "switch.buffer", strconv.FormatFloat(mb*1024*1024, 'f', -1, 64)); err != nil {
		return err
	}
	if dyn, err := im.flag("USE_DYNAMIC_PFC_THRESHOLD"); err != nil {
		return err
	} else if !dyn {
		return im.errorf("USE_DYNAMIC_PFC_THRESHOLD", "0: the ns-3 switch's threshold is dynamic whatever this says (SwitchMmu::GetPfcThreshold); set 1")
	}
	// ns-3's dynamic threshold: the free buffer shifted right by 3 (1/8),
	// one step less per doubling of a port's rate over the NICs'.
	if err := im.set("USE_DYNAMIC_PFC_THRESHOLD", "switch.pfc_beta", "1/8"); err != nil {
		return err
	}
	if err := im.set("USE_DYNAMIC_PFC_THRESHOLD", "switch.pfc_beta_scale", "true"); err != nil {
		return err
	}
	// Its switches queue ACKs with data whatever ACK_HIGH_PRIO says.
	if err := im.s.SetFrom(im.path+": ns-3's switches", "switch.ack_in_data", "true"); err != nil {
		return err
	}
	qcn, _ := im.flag("ENABLE_QCN")
	kmin, err := im.ecnMap("KMIN_MAP", 1000)
	if err != nil {
		return err
	}
	kmax, err := im.ecnMap("KMAX_MAP", 1000)
	if err != nil {
		return err
	}
	pmax, err := im.ecnMap("PMAX_MAP", 1)
	if err != nil {
		return err
	}
	if !qcn {
		return nil
	}
	// One curve at the lowest rate the maps give, scaled with each port's
	// rate; maps that do not scale so are refused.
	ref := kmin.rates[0]
	for _, m := range []struct {
		key   string
		curve ecnCurve
		scale bool
	}{{"KMIN_MAP", kmin, true}, {"KMAX_MAP", kmax, true}, {"PMAX_MAP", pmax, false}} {
		for i, r := range m.curve.rates {
			want := m.curve.at(ref)
			if m.scale {
				want *= r / ref
			}
			if math.Abs(m.curve.vals[i]-want) > 1e-9*math.Abs(want) {
				return im.errorf(m.key, "at %s the value is %g, not %g: p4rcm scales one curve with the link rate", strconv.FormatFloat(r, 'g', -1, 64), m.curve.vals[i], want)
			}
		}
	}
	for _, kv := range [][2]string{
		{"switch.ecn.ref_rate", strconv.FormatFloat(ref, 'f', -1, 64) + "bps"},
		{"switch.ecn.kmin", strconv.FormatFloat(kmin.at(ref), 'f', -1, 64)},
		{"switch.ecn.kmax", strconv.FormatFloat(kmax.at(ref), 'f', -1, 64)},
		{"switch.ecn.pmax", strconv.FormatFloat(pmax.at(ref), 'f', -1, 64)},
	} {
		if err := im.set("KMIN_MAP", kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}

// ecnCurve is an ECN map: values by link rate, rates ascending.
type ecnCurve struct {
	rates, vals []float64
}

func (c ecnCurve) at(rate float64) float64 {
	for i, r := range c.rates {
		if r == rate {
			return c.vals[i]
		}
	}
	return math.NaN()
}

// ecnMap reads "n rate value rate value ..." with values times unit.
func (im *ns3Import) ecnMap(key string, unit float64) (ecnCurve, error) {
	e, _ := im.get(key)
	var c ecnCurve
	n, err := strconv.Atoi(e.values[0])
	if err != nil || n < 1 || len(e.values) != 1+2*n {
		return c, im.errorf(key, "want a count n and n pairs of rate and value, got %q", strings.Join(e.values, " "))
	}
	for i := 0; i < n; i++ {
		r, err1 := strconv.ParseFloat(e.values[1+2*i], 64)
		v, err2 := strconv.ParseFloat(e.values[2+2*i], 64)
		if err1 != nil || err2 != nil || !(r > 0) || !(v >= 0) {
			return c, im.errorf(key, "pair %d (%s %s) is not a positive rate and a value", i+1, e.values[1+2*i], e.values[2+2*i])
		}
		c.rates = append(c.rates, r)
		c.vals = append(c.vals, v*unit)
	}
	sort.Sort(byRate(c))
	return c, nil
}

type byRate ecnCurve

func (b byRate) Len() int           { return len(b.rates) }
func (b byRate) Less(i, j int) bool { return b.rates[i] < b.rates[j] }
func (b byRate) Swap(i, j int) {
	b.rates[i], b.rates[j] = b.rates[j], b.rates[i]
	b.vals[i], b.vals[j] = b.vals[j], b.vals[i]
}

// fixed checks the keys whose only value p4rcm honours, and the stop
// time.
func (im *ns3Import) fixed() error {
	for _, f := range []struct{ key, want, why string }{
		{"ERROR_RATE_PER_LINK", "0", "p4rcm's links do not corrupt packets"},
		{"L2_BACK_TO_ZERO", "0", "p4rcm's senders go back to the NACKed byte, not to zero"},
		{"RATE_BOUND", "1", "p4rcm's senders are always paced at their rate"},
		{"LINK_DOWN", "0 0 0", "p4rcm does not take links down during a run"},
	} {
		e, _ := im.get(f.key)
		got := strings.Join(e.values, " ")
		same := got == f.want
		if v, err := strconv.ParseFloat(got, 64); err == nil && f.want != "0 0 0" {
			w, _ := strconv.ParseFloat(f.want, 64)
			same = v == w
		}
		if !same {
			return im.errorf(f.key, "%s is not supported (only %s): %s", got, f.want, f.why)
		}
	}
	stop, err := im.num("SIMULATOR_STOP_TIME")
	if err != nil {
		return err
	}
	if stop <= 0 {
		return im.errorf("SIMULATOR_STOP_TIME", "must be positive, got %g", stop)
	}
	return im.set("SIMULATOR_STOP_TIME", "stop", strconv.FormatFloat(stop, 'f', -1, 64)+"s")
}
