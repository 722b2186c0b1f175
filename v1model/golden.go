package v1model

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/p4rcm/p4rcm/v1model/bmjson"
)

// Golden is what a reference target (BMv2's simple_switch_grpc) did with
// a program: the frames it was given, in order, and what it sent on each
// port, its counters, registers and digests after them. The recorder
// writes it where BMv2 runs; Replay checks the Go target against it.
type Golden struct {
	// Program and Runtime are the compiled JSON and the runtime JSON
	// (entries), relative to the golden file.
	Program      string `json:"program"`
	Runtime      string `json:"runtime,omitempty"`
	RecordedWith string `json:"recorded_with"`
	// What the case checks, in words.
	About string `json:"about"`
	// Skip names registers whose values depend on the wall clock, each
	// with the reason; they are not compared.
	Skip map[string]string `json:"skip_registers,omitempty"`
	// SkipCounters names counters not compared, each with the reason.
	SkipCounters map[string]string `json:"skip_counters,omitempty"`
	// Clocks name the times from the target's clock that frames carry
	// (an INT record's), which BMv2's clock and the replay's cannot agree
	// on: they are compared by what a reader of them needs instead.
	Clocks []GoldenClock `json:"clock_fields,omitempty"`

	// QueueRates and QueueDepths (port -> packets per second, packets)
	// set the traffic manager as set_queue_rate and set_queue_depth.
	QueueRates  map[string]float64 `json:"queue_rates,omitempty"`
	QueueDepths map[string]int     `json:"queue_depths,omitempty"`
	// PriorityQueues is simple_switch_grpc's --priority-queues (0 for
	// one queue per port).
	PriorityQueues int `json:"priority_queues,omitempty"`
	// Ports are the switch's ports, each a veth on the recording rig.
	Ports   []int          `json:"ports"`
	Packets []GoldenPacket `json:"packets"`
	// DigestsRecorded says whether the recorder captured digests; when
	// false, Digests is not compared.
	DigestsRecorded bool `json:"digests_recorded"`
	// Sent holds, by port, the frames in the order the port sent them.
	Sent map[string][]string `json:"sent"`
	// Counters and Registers hold every non-zero cell: name, then
	// "index" -> [packets, bytes] or value.
	Counters map[string]map[string][2]uint64 `json:"counters"`
	// DirectCounters holds, by table, each entry's direct counter in the
	// order the entries were added.
	DirectCounters map[string][][2]uint64       `json:"direct_counters,omitempty"`
	Registers      map[string]map[string]uint64 `json:"registers"`
	Digests        []GoldenDigest               `json:"digests"`
}

// GoldenClock is a time a switch wrote into some of the frames one port
// sent: a big-endian count of nanoseconds, Bytes wide, at Offset of the
// port's frames Frames (indices in the order it sent them). Its bytes are
// left out of the frames' comparison; instead, on each target the times
// never go back from one of those frames to the next (modulo the field's
// width), and the gaps between them agree within ToleranceNs: a time in
// another unit, or from another point in the pipeline, differs by far
// more.
type GoldenClock struct {
	Port        int    `json:"port"`
	Frames      []int  `json:"frames"`
	Offset      int    `json:"offset"`
	Bytes       int    `json:"bytes"`
	ToleranceNs int64  `json:"tolerance_ns"`
	About       string `json:"about"`
}

// compareClocks checks g's clock fields in the frames the reference
// (g.Sent) and the Go target (sent) sent, and zeroes them in both for
// the byte comparison.
func (g *Golden) compareClocks(sent map[string][]string) []string {
	var diffs []string
	for ci, c := range g.Clocks {
		port := strconv.Itoa(c.Port)
		read := func(frames []string, who string) []uint64 {
			var vs []uint64
			for _, i := range c.Frames {
				if i >= len(frames) {
					diffs = append(diffs, fmt.Sprintf("clock_fields[%d]: %s sent no frame %d on port %s", ci, who, i, port))
					return nil
				}
				b, err := hex.DecodeString(frames[i])
				if err != nil || c.Offset+c.Bytes > len(b) || c.Bytes < 1 || c.Bytes > 8 {
					diffs = append(diffs, fmt.Sprintf("clock_fields[%d]: %s's frame %d on port %s holds no %d-byte field at %d", ci, who, i, port, c.Bytes, c.Offset))
					return nil
				}
				var v uint64
				for _, x := range b[c.Offset : c.Offset+c.Bytes] {
					v = v<<8 | uint64(x)
				}
				vs = append(vs, v)
				clear(b[c.Offset : c.Offset+c.Bytes])
				frames[i] = hex.EncodeToString(b)
			}
			return vs
		}
		ref, got := read(g.Sent[port], "reference"), read(sent[port], "Go target")
		if ref == nil || got == nil {
			continue
		}
		mod := uint64(1) << (8 * c.Bytes)
		gap := func(vs []uint64, i int) int64 {
			d := (vs[i] - vs[i-1]) & (mod - 1)
			if c.Bytes == 8 {
				d = vs[i] - vs[i-1]
			}
			return int64(d)
		}
		for i := 1; i < len(ref); i++ {
			r, o := gap(ref, i), gap(got, i)
			half := int64(mod / 2)
			switch {
			case r < 0 || (c.Bytes < 8 && r >= half):
				diffs = append(diffs, fmt.Sprintf("clock_fields[%d]: the reference's time goes back from frame %d to %d on port %s", ci, c.Frames[i-1], c.Frames[i], port))
			case o < 0 || (c.Bytes < 8 && o >= half):
				diffs = append(diffs, fmt.Sprintf("clock_fields[%d]: the Go target's time goes back from frame %d to %d on port %s", ci, c.Frames[i-1], c.Frames[i], port))
			case max(r-o, o-r) > c.ToleranceNs:
				diffs = append(diffs, fmt.Sprintf("clock_fields[%d]: from frame %d to %d on port %s the reference's time moved %d ns, the Go target's %d (tolerance %d)",
					ci, c.Frames[i-1], c.Frames[i], port, r, o, c.ToleranceNs))
			}
		}
	}
	return diffs
}

// GoldenPacket is a frame given to the switch.
type GoldenPacket struct {
	Port  int    `json:"port"`
	Frame string `json:"frame"` // hex
	// Burst sends the frame right after the previous one; otherwise the
	// recorder first waits for every port to be quiet for QuietUs, and
	// the replay's clock advances by as much. GapUs is a further wait,
	// in microseconds, on both.
	Burst bool  `json:"burst,omitempty"`
	GapUs int64 `json:"gap_us,omitempty"`
}

// replayStep is how far the replay's virtual clock moves at a time.
const replayStep = 100 * time.Microsecond

// QuietUs is how long the recorder waits for every port to fall quiet
// after a frame that is not followed by a burst: this long after the
// last frame any port sent, plus a queue gap (the slowest rate's) for
// every frame sent since it last waited, since a queue can drop frames
// at egress without sending anything for that long.
const QuietUs = 300_000

// quiet is how long, after the last frame out, the recorder waits before
// it sends the next frame that is not part of a burst.
func (g *Golden) quiet(sinceLast int) time.Duration {
	d := QuietUs * time.Microsecond
	slowest := 0.0
	for _, pps := range g.QueueRates {
		if pps > 0 && (slowest == 0 || pps < slowest) {
			slowest = pps
		}
	}
	if slowest > 0 {
		d += time.Duration(float64(sinceLast) / slowest * float64(time.Second))
	}
	return d
}

// GoldenDigest is one digest: its learn list and field values.
type GoldenDigest struct {
	List   string   `json:"list"`
	Values []uint64 `json:"values"`
}

// LoadGolden reads a golden file.
func LoadGolden(path string) (*Golden, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var g Golden
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&g); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &g, nil
}

// Replay runs the golden's frames through the Go target and returns
// every difference from what the reference target did, or none.
func Replay(path string) ([]string, error) { return replay(path, nil, nil, false) }

// replay is Replay with the switch compiled from doc, the golden's
// program decoded already, where doc is not nil, with trees; interpret
// is Config.Interpret.
func replay(path string, doc *bmjson.Document, trees *Trees, interpret bool) ([]string, error) {
	g, err := LoadGolden(path)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	var clock time.Duration
	var digests []GoldenDigest
	cfg := Config{
		PriorityQueues: g.PriorityQueues,
		Clock:          func() time.Duration { return clock },
		Digest:         func(d Digest) { digests = append(digests, GoldenDigest{List: d.List, Values: d.Values}) },
		Trees:          trees,
		Interpret:      interpret,
	}
	var sw *Switch
	if doc != nil {
		sw, err = New(doc, cfg)
	} else {
		sw, err = Load(filepath.Join(dir, g.Program), cfg)
	}
	if err != nil {
		return nil, err
	}
	if g.Runtime != "" {
		rt, err := LoadRuntime(filepath.Join(dir, g.Runtime))
		if err != nil {
			return nil, err
		}
		if err := sw.Install(rt); err != nil {
			return nil, err
		}
	}
	// Live: frames arrive at the recorder's times on a virtual clock and
	// leave the queues as the rates allow; a recirculated packet comes
	// back a clock step later, about what BMv2 takes.
	if err := sw.SetRecirculationRate(float64(time.Second / replayStep)); err != nil {
		return nil, err
	}
	for p, pps := range g.QueueRates {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, fmt.Errorf("%s: queue_rates: port %q", path, p)
		}
		if err := sw.SetQueueRate(n, -1, pps); err != nil {
			return nil, fmt.Errorf("%s: queue_rates: %w", path, err)
		}
	}
	for p, depth := range g.QueueDepths {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, fmt.Errorf("%s: queue_depths: port %q", path, p)
		}
		if err := sw.SetQueueDepth(n, -1, depth); err != nil {
			return nil, fmt.Errorf("%s: queue_depths: %w", path, err)
		}
	}
	// The clock follows the recorder's: a frame that is not part of a
	// burst comes quiet() after the last frame out (or after the frame
	// before it, if nothing came out since), a burst's frame GapUs after
	// the one before.
	lastOut, lastIn, sinceWait := time.Duration(0), time.Duration(0), 0
	sent := map[string][]string{}
	emit := func(port int, f []byte) {
		lastOut = clock
		k := strconv.Itoa(port)
		sent[k] = append(sent[k], hex.EncodeToString(f))
	}
	// drain sends what the queues let go by the clock's time. A switch
	// that never stops sending at one instant (packets recirculating
	// without a rate) ends the replay instead of hanging it.
	stuck := false
	drain := func() {
		for passes := 0; sw.serveLocked(emit) == 0; passes++ {
			if passes == 1_000_000 {
				stuck = true
				return
			}
		}
	}
	for i, gp := range g.Packets {
		frame, err := hex.DecodeString(gp.Frame)
		if err != nil {
			return nil, fmt.Errorf("%s: packets[%d]: frame: %v", path, i, err)
		}
		at := lastIn + time.Duration(gp.GapUs)*time.Microsecond
		if i > 0 && !gp.Burst {
			// Run the switch until it has been quiet long enough.
			for {
				drain()
				if clock >= max(lastOut, lastIn)+g.quiet(sinceWait) || stuck {
					break
				}
				clock += replayStep
			}
			at = clock + time.Duration(gp.GapUs)*time.Microsecond
			sinceWait = 0
		}
		for clock < at && !stuck {
			drain()
			clock = min(at, clock+replayStep)
		}
		lastIn = clock
		sinceWait++
		err = sw.Receive(gp.Port, frame)
		drain()
		if err != nil {
			return nil, fmt.Errorf("%s: packets[%d]: %w", path, i, err)
		}
		if stuck {
			return nil, fmt.Errorf("%s: packets[%d]: a million packets went through the switch without the clock moving", path, i)
		}
	}
	// The recorder waits for every port to fall quiet: so does this, up
	// to ten seconds of virtual time.
	for end := clock + 10*time.Second; clock < end && sw.queued() > 0 && !stuck; clock += replayStep {
		drain()
	}
	if stuck {
		return nil, fmt.Errorf("%s: a million packets went through the switch without the clock moving", path)
	}
	diffs := g.compareClocks(sent)
	ports := map[string]bool{}
	for p := range g.Sent {
		ports[p] = true
	}
	for p := range sent {
		ports[p] = true
	}
	for _, p := range sortedKeys(ports) {
		want, got := g.Sent[p], sent[p]
		for i := 0; i < max(len(want), len(got)); i++ {
			switch {
			case i >= len(got):
				diffs = append(diffs, fmt.Sprintf("port %s frame %d: reference sent %s, Go target nothing", p, i, want[i]))
			case i >= len(want):
				diffs = append(diffs, fmt.Sprintf("port %s frame %d: Go target sent %s, reference nothing", p, i, got[i]))
			case want[i] != got[i]:
				diffs = append(diffs, fmt.Sprintf("port %s frame %d:\n  reference %s\n  Go target %s", p, i, want[i], got[i]))
			}
		}
	}
	for _, name := range sw.Counters() {
		if _, skip := g.SkipCounters[name]; skip {
			continue
		}
		for i := 0; i < sw.CounterSize(name); i++ {
			pk, by, _ := sw.Counter(name, i)
			want := g.Counters[name][strconv.Itoa(i)]
			if want != [2]uint64{pk, by} {
				diffs = append(diffs, fmt.Sprintf("counter %s[%d]: reference %d packets %d bytes, Go target %d, %d", name, i, want[0], want[1], pk, by))
			}
		}
	}
	for table := range sw.CountedTables() {
		got, _ := sw.DirectCounters(table)
		if want := g.DirectCounters[table]; !slices.Equal(got, want) && (len(got) > 0 || len(want) > 0) {
			diffs = append(diffs, fmt.Sprintf("direct counter of %s: reference %v, Go target %v", table, want, got))
		}
	}
	for name := range g.Counters {
		if sw.CounterSize(name) == 0 {
			diffs = append(diffs, fmt.Sprintf("counter %s: not in the program", name))
		}
	}
	for _, name := range sw.Registers() {
		if _, skip := g.Skip[name]; skip {
			continue
		}
		for i := 0; i < sw.RegisterSize(name); i++ {
			v, _ := sw.Register(name, i)
			if want := g.Registers[name][strconv.Itoa(i)]; want != v {
				diffs = append(diffs, fmt.Sprintf("register %s[%d]: reference %d, Go target %d", name, i, want, v))
			}
		}
	}
	if !g.DigestsRecorded {
		return diffs, nil
	}
	if len(digests) != len(g.Digests) {
		diffs = append(diffs, fmt.Sprintf("digests: reference sent %d, Go target %d", len(g.Digests), len(digests)))
	}
	// In any order: BMv2 buffers each learn list apart and sends each
	// buffer from its own thread, so digests of two lists (rcm.p4 has two
	// of one name) cross.
	want, got := sortDigests(g.Digests), sortDigests(digests)
	for i := range min(len(got), len(want)) {
		w, d := want[i], got[i]
		if w.List != d.List || !slices.Equal(w.Values, d.Values) {
			diffs = append(diffs, fmt.Sprintf("digest %d (sorted): reference %s %v, Go target %s %v", i, w.List, w.Values, d.List, d.Values))
		}
	}
	return diffs, nil
}

func sortDigests(ds []GoldenDigest) []GoldenDigest {
	out := slices.Clone(ds)
	slices.SortFunc(out, func(a, b GoldenDigest) int {
		if a.List != b.List {
			return strings.Compare(a.List, b.List)
		}
		return slices.Compare(a.Values, b.Values)
	})
	return out
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, _ := strconv.Atoi(keys[i])
		b, _ := strconv.Atoi(keys[j])
		return a < b || a == b && strings.Compare(keys[i], keys[j]) < 0
	})
	return keys
}
