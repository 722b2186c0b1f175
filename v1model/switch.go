// Package v1model is p4rcm's P4 target: it loads the JSON that p4c's
// BMv2 back end writes for a v1model program and runs it as BMv2's
// simple_switch does, packet for packet. The JSON is compiled once into
// closures over a flat array of field values, so the per-packet path
// allocates nothing.
//
// A Switch is driven from outside: Process takes a frame received on a
// port and hands every frame the program sends to an emit function. The
// ports, the queues and the clock belong to the caller (cmd/p4switch,
// tests), so the same Switch runs on veths and in replays of recorded
// traffic.
package v1model

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/p4rcm/p4rcm/internal/finetimer"
	"github.com/p4rcm/p4rcm/v1model/bmjson"
)

// DropPort is simple_switch's drop port: egress_spec 511 drops.
const DropPort = 511

// Instance types of standard_metadata.instance_type, as simple_switch
// numbers them.
const (
	InstanceNormal       = 0
	InstanceIngressClone = 1
	InstanceEgressClone  = 2
	InstanceCoalesced    = 3
	InstanceRecirculate  = 4
	InstanceReplication  = 5
	InstanceResubmit     = 6
)

// Config holds what a Switch takes besides the program.
type Config struct {
	// MaxFrame is the largest frame accepted, in bytes (default 9216).
	MaxFrame int
	// Clock returns the time since the switch started; timestamps in
	// standard_metadata are its microseconds. Default: the wall clock.
	Clock func() time.Duration
	// Seed seeds modify_field_rng_uniform (random()).
	Seed uint64
	// Logger receives log_msg output (info) and assertion failures.
	Logger *slog.Logger
	// Digest receives the digests the program generates.
	Digest func(Digest)
	// PriorityQueues is the number of strict-priority queues per port
	// (simple_switch's --priority-queues, default 1).
	PriorityQueues int
	// Trees, if not nil, keeps the expression trees of the document
	// compiled, for switches compiled from the same document after:
	// give every switch of one document the same Trees, and it only
	// that document.
	Trees *Trees
	// Interpret runs the controls by walking their compiled nodes, and
	// extracts and deparses headers by their layouts' tables, even where
	// generated code for them is built in (gen.go): for checking that
	// the two agree, and for measuring what the generated code saves.
	Interpret bool
}

// Digest is one digest message: the values of a learn list's fields.
type Digest struct {
	ListID int
	List   string
	Values []uint64
}

// Replica is one copy of a multicast group.
type Replica struct {
	Port int
	RID  int
}

// Switch is a loaded program with its tables, registers and counters.
// Its methods are safe for concurrent use.
type Switch struct {
	mu       sync.Mutex
	cfg      Config
	l        *layout
	errs     *errorCodes
	parser   *parser
	deparser *deparser
	ingress  *control
	egress   *control

	actions    []*action
	actionByID map[int]*action
	tables     map[string]*Table
	tableList  []*Table
	registers  map[string]*registerArray
	counters   map[string]*counterArray
	calcs      map[string]*calculation
	meters     map[string]*meterArray
	// directCounterOf names each table's direct counter.
	directCounterOf map[string]string
	profiles        map[string]*profile
	fieldLists      map[int][]int
	learnLists      map[int]*learnList
	vsets           map[string]*ValueSet

	mirror map[int][]Replica // clone sessions
	mcast  map[int][]Replica
	rng    *rand.Rand
	log    *slog.Logger
	start  time.Time

	free    []*packet
	input   []*packet
	queue   []queued
	asserts int
	fatal   error // a failed assert: the switch has stopped

	// The traffic manager of the live mode (Receive and Serve).
	live         bool
	inline       bool // ReceiveBatch drains the queues itself
	recirc       queue
	recircDrops  uint64
	ports        map[int]*egressPort
	portOrder    []int
	rr           int
	defaultDepth int
	defaultRate  float64
	defaultLine  float64 // SetPortRate for every port
	defaultDelay time.Duration
	// held is the frame holdFrame copied; frameFree, buffers of frames
	// that have come off a delay line, for the next ones.
	held      []byte
	frameFree [][]byte
	inFlight  int // frames on the ports' delay lines
	// waiter is what Serve waits on while it runs; wake ends its wait.
	// serveUntil is when (by Clock) Serve's wait ends: frames received
	// meanwhile wake it only if something is due before then.
	waiter     atomic.Pointer[finetimer.Waiter]
	serveUntil time.Duration
	// batchAt, while inBatch, is the time ReceiveBatch took its batch:
	// the clock for every packet of it, read once instead of at each of
	// the half-dozen points a packet's path reads it (frames that came
	// in one receive arrived together).
	batchAt time.Duration
	inBatch bool
	// arrivedLate, while a frame given to ReceiveBatchLate runs through
	// ingress, is how long ago its link delivered it; emitLate, while
	// emit runs, how long ago the frame it is given reached the far end
	// of its link (EmitLateness).
	arrivedLate, emitLate time.Duration
	// wakes counts wake's calls (tests: what wakes Serve).
	wakes uint64
}

// clock is the switch's time: the batch's, inside ReceiveBatch.
func (sw *Switch) clock() time.Duration {
	if sw.inBatch {
		return sw.batchAt
	}
	return sw.cfg.Clock()
}

type queued struct {
	p    *packet
	port int
	prio int
}

type registerArray struct {
	name  string
	width int
	cells []uint64
}

type counterArray struct {
	name           string
	packets, bytes []uint64
}

type learnList struct {
	id    int
	name  string
	slots []int
}

// ValueSet is a parser value set (value_set in P4), filled by the
// control plane.
type ValueSet struct {
	name   string
	width  int // bytes
	max    int
	values map[string]bool
}

func (v *ValueSet) match(key []byte) bool { return v.values[string(key)] }

// compiler carries what compiling one object needs, and where it is for
// errors.
type compiler struct {
	l     *layout
	errs  *errorCodes
	sw    *Switch
	where string
	act   *action // the action being compiled, nil elsewhere
	// straight is the primitive list compilePrimitives last compiled,
	// when it has no jumps; nil otherwise.
	straight    []prim
	straightOps []*op       // beside straight: the primitives a block runs inline
	lastOp      *op         // set by a primitive that compiles to one of those
	lastExtract *headerSpan // set by a parser op that extracts with a codec
	// steps and stepOps: the last action compiled, when it has jumps
	// (action.steps).
	steps   []prim
	stepOps []*op
	action  string
	// trees are the JSON trees of the expressions compiled so far, by
	// the address of each object's bytes (jsontree.go).
	trees map[*byte]*jsonNode
	// modBits, while an operand is compiled, is the number of low bits
	// of its value that matter (an operator above it masks the rest
	// away), or 0 for all: see compileOp.
	modBits int
}

func (c *compiler) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: %s", c.where, fmt.Sprintf(format, args...))
}

// Load reads a BMv2 JSON file and compiles it. Errors name the file and
// the object at fault.
func Load(path string, cfg Config) (*Switch, error) {
	doc, err := bmjson.Load(path)
	if err != nil {
		return nil, err
	}
	sw, err := New(doc, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sw, nil
}

// New compiles a decoded program. Anything the target does not implement
// is refused here, by name, rather than skipped when a packet meets it.
func New(doc *bmjson.Document, cfg Config) (*Switch, error) {
	if cfg.MaxFrame == 0 {
		cfg.MaxFrame = 9216
	}
	if cfg.PriorityQueues == 0 {
		cfg.PriorityQueues = 1
	}
	if cfg.PriorityQueues < 1 || cfg.PriorityQueues > 8 {
		return nil, fmt.Errorf("priority queues: %d, want 1 to 8", cfg.PriorityQueues)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	l, err := newLayout(doc)
	if err != nil {
		return nil, err
	}
	if !cfg.Interpret {
		for _, t := range l.types {
			if t.codec != nil {
				t.codec.useGenerated()
			}
		}
	}
	for _, h := range l.headers {
		if !h.metadata && h.typ.bytes() > cfg.MaxFrame {
			return nil, fmt.Errorf("headers %q: %d bytes, longer than the %d-byte frames the switch takes", h.name, h.typ.bytes(), cfg.MaxFrame)
		}
	}
	errs, err := newErrorCodes(doc)
	if err != nil {
		return nil, err
	}
	sw := &Switch{cfg: cfg, l: l, errs: errs, log: cfg.Logger, start: time.Now(),
		actionByID: map[int]*action{}, tables: map[string]*Table{}, registers: map[string]*registerArray{},
		counters: map[string]*counterArray{}, calcs: map[string]*calculation{}, meters: map[string]*meterArray{}, profiles: map[string]*profile{}, directCounterOf: map[string]string{}, fieldLists: map[int][]int{},
		learnLists: map[int]*learnList{}, vsets: map[string]*ValueSet{}, mirror: map[int][]Replica{}, mcast: map[int][]Replica{},
		rng:   rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15)),
		ports: map[int]*egressPort{}, defaultDepth: DefaultQueueDepth,
		recirc: queue{depth: bmv2RecirculationDepth}}
	if sw.cfg.Clock == nil {
		start := sw.start
		sw.cfg.Clock = func() time.Duration { return time.Since(start) }
	}
	if l.std.header < 0 || l.std.egressSpec < 0 || l.std.ingressPort < 0 {
		return nil, fmt.Errorf("no standard_metadata with ingress_port and egress_spec: not a v1model program")
	}
	if len(doc.ExternInstances) > 0 {
		return nil, fmt.Errorf("extern_instances: externs other than v1model's are not handled by this target")
	}
	c := &compiler{l: l, errs: errs, sw: sw}
	if err := sw.addMeters(doc, l); err != nil {
		return nil, err
	}
	for _, r := range doc.RegisterArrays {
		if r.Bitwidth > maxWidth || r.Bitwidth <= 0 {
			return nil, fmt.Errorf("register_arrays %q: %d-bit cells; this target handles 1 to %d", r.Name, r.Bitwidth, maxWidth)
		}
		sw.registers[r.Name] = &registerArray{name: r.Name, width: r.Bitwidth, cells: make([]uint64, r.Size)}
	}
	for _, ca := range doc.CounterArrays {
		if ca.IsDirect {
			sw.directCounterOf[ca.Binding] = ca.Name // counted in the table's entries
			continue
		}
		sw.counters[ca.Name] = &counterArray{name: ca.Name, packets: make([]uint64, ca.Size), bytes: make([]uint64, ca.Size)}
	}
	for _, fl := range doc.FieldLists {
		slots, err := c.fieldSlots("field_lists", fl)
		if err != nil {
			return nil, err
		}
		sw.fieldLists[fl.ID] = slots
	}
	for _, ll := range doc.LearnLists {
		slots, err := c.fieldSlots("learn_lists", ll)
		if err != nil {
			return nil, err
		}
		sw.learnLists[ll.ID] = &learnList{id: ll.ID, name: ll.Name, slots: slots}
	}
	for _, vs := range doc.ParseVSets {
		sw.vsets[vs.Name] = &ValueSet{name: vs.Name, width: (vs.CompressedBitwidth + 7) / 8, max: vs.MaxSize, values: map[string]bool{}}
	}
	for i := range doc.Calculations {
		calc, err := c.compileCalculation(&doc.Calculations[i])
		if err != nil {
			return nil, err
		}
		sw.calcs[calc.name] = calc
	}
	for i := range doc.Actions {
		a, err := c.compileAction(&doc.Actions[i])
		if err != nil {
			return nil, err
		}
		sw.actions = append(sw.actions, a)
		sw.actionByID[a.id] = a
	}
	if len(doc.Parsers) != 1 {
		return nil, fmt.Errorf("parsers: %d, a v1model program has one", len(doc.Parsers))
	}
	if sw.parser, err = c.compileParser(&doc.Parsers[0]); err != nil {
		return nil, err
	}
	if len(doc.Deparsers) != 1 {
		return nil, fmt.Errorf("deparsers: %d, a v1model program has one", len(doc.Deparsers))
	}
	if sw.deparser, err = c.compileDeparser(&doc.Deparsers[0]); err != nil {
		return nil, err
	}
	for i := range doc.Pipelines {
		bp := &doc.Pipelines[i]
		ctl, err := c.compileControl(bp)
		if err != nil {
			return nil, err
		}
		switch bp.Name {
		case "ingress":
			sw.ingress = ctl
		case "egress":
			sw.egress = ctl
		default:
			return nil, fmt.Errorf("pipelines %q: v1model has an ingress and an egress pipeline only", bp.Name)
		}
	}
	if sw.ingress == nil || sw.egress == nil {
		return nil, fmt.Errorf("pipelines: want ingress and egress")
	}
	if !cfg.Interpret {
		sw.ingress.useGenerated()
		sw.egress.useGenerated()
		sw.parser.useGenerated(errs.timeout)
	}
	for i := range doc.Checksums {
		bc := &doc.Checksums[i]
		ck, err := c.compileChecksum(bc)
		if err != nil {
			return nil, err
		}
		// Before format 2.x's verify/update flags, every checksum was both.
		if bc.Verify == nil || *bc.Verify {
			sw.parser.verify = append(sw.parser.verify, ck)
		}
		if bc.Update == nil || *bc.Update {
			sw.deparser.update = append(sw.deparser.update, ck)
		}
	}
	cfg.Trees.keep(c.trees)
	return sw, nil
}

func (c *compiler) fieldSlots(what string, fl bmjson.FieldList) ([]int, error) {
	var slots []int
	for i, el := range fl.Elements {
		if el.Type != "field" {
			return nil, fmt.Errorf("%s %q: element %d of type %q is not handled by this target", what, fl.Name, i, el.Type)
		}
		ref, err := el.Strings()
		if err != nil || len(ref) != 2 {
			return nil, fmt.Errorf("%s %q: element %d: want [header, field]", what, fl.Name, i)
		}
		if w, wide := c.l.wideField(ref[0], ref[1]); wide {
			slots = append(slots, w.slots...) // a digest carries its parts
			continue
		}
		slot, _, f, err := c.l.field(ref[0], ref[1])
		if err != nil {
			return nil, fmt.Errorf("%s %q: element %d: %w", what, fl.Name, i, err)
		}
		if f == nil {
			return nil, fmt.Errorf("%s %q: element %d: validity bits are not handled in field lists", what, fl.Name, i)
		}
		slots = append(slots, slot)
	}
	return slots, nil
}

// random returns a uniform value in [0, span].
func (sw *Switch) random(span uint64) uint64 {
	if span == ^uint64(0) {
		return sw.rng.Uint64()
	}
	return sw.rng.Uint64N(span + 1)
}

// assertFailed records a failed assert or assume. BMv2 aborts the
// switch there; the Go target stops too: Process, Receive and
// ReceiveBatch return the error from then on.
func (sw *Switch) assertFailed(op, where string) {
	sw.asserts++
	sw.log.Error(op+" failed", "where", where)
	if sw.fatal == nil {
		sw.fatal = fmt.Errorf("%s failed at %s: the switch stops, as BMv2 does", op, where)
	}
}

func (sw *Switch) logMessage(format string, vals []func(*packet) int64, p *packet) {
	var b strings.Builder
	i := 0
	for {
		j := strings.Index(format, "{}")
		if j < 0 || i >= len(vals) {
			b.WriteString(format)
			break
		}
		b.WriteString(format[:j])
		fmt.Fprint(&b, vals[i](p))
		format = format[j+2:]
		i++
	}
	sw.log.Info(b.String())
}

// Stopped returns why the switch stopped (a failed assert or assume), or
// nil while it runs.
func (sw *Switch) Stopped() error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.fatal
}

// AssertionFailures counts assert and assume calls that failed.
func (sw *Switch) AssertionFailures() int {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.asserts
}

func (sw *Switch) get() *packet {
	if n := len(sw.free); n > 0 {
		p := sw.free[n-1]
		sw.free = sw.free[:n-1]
		return p
	}
	return newPacket(sw.l, sw.cfg.MaxFrame)
}

func (sw *Switch) put(p *packet) { sw.free = append(sw.free, p) }

func (sw *Switch) now() uint64 { return uint64(sw.clock() / time.Microsecond) }

func (sw *Switch) set(p *packet, slot int, v uint64) {
	if slot >= 0 {
		p.f[slot] = v & ones(sw.l.width[slot])
	}
}

// Emit receives a frame the switch sends on a port. The frame is valid
// only during the call.
type Emit func(port int, frame []byte)

// Process runs a frame received on a port through the whole switch:
// parser, ingress, the replication and cloning simple_switch does,
// egress, deparser; every frame it sends goes to emit before Process
// returns. Queues are empty between calls: this is the replay mode, in
// which queue depths read 0. Frames longer than Config.MaxFrame are
// refused.
func (sw *Switch) Process(port int, frame []byte, emit Emit) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.fatal != nil {
		return sw.fatal
	}
	if sw.live {
		return fmt.Errorf("replay (Process) on a switch that runs live (Receive and Serve)")
	}
	if err := sw.checkFrame(port, frame); err != nil {
		return err
	}
	p := sw.arrive(port, frame)
	sw.input = append(sw.input, p)
	// Indices, not reslicing, so that the slices keep their capacity.
	var err error
	for in, out := 0, 0; in < len(sw.input) || out < len(sw.queue); {
		if in+out > maxPasses {
			// A program that recirculates until time passes would loop
			// here for ever: the clock does not move within a call.
			for _, p := range sw.input[in:] {
				sw.put(p)
			}
			for _, q := range sw.queue[out:] {
				sw.put(q.p)
			}
			err = fmt.Errorf("frame on port %d: more than %d passes through the pipeline (recirculate or resubmit in a loop): the rest dropped", port, maxPasses)
			break
		}
		if in < len(sw.input) {
			p := sw.input[in]
			in++
			sw.runIngress(p)
			continue
		}
		q := sw.queue[out]
		out++
		sw.runEgress(q.p, q.port, q.prio, emit)
	}
	sw.input = sw.input[:0]
	sw.queue = sw.queue[:0]
	if sw.fatal != nil {
		return sw.fatal
	}
	return err
}

// maxPasses bounds the passes one frame may make through the pipeline in
// Process.
const maxPasses = 10_000

// checkFrame refuses a frame longer than the switch takes.
func (sw *Switch) checkFrame(port int, frame []byte) error {
	if len(frame) > sw.cfg.MaxFrame {
		return fmt.Errorf("frame of %d bytes on port %d: longer than the %d-byte maximum", len(frame), port, sw.cfg.MaxFrame)
	}
	return nil
}

// arrive takes a frame into a fresh packet with the standard metadata of
// a frame received on port, as simple_switch's receive.
func (sw *Switch) arrive(port int, frame []byte) *packet {
	p := sw.get()
	p.reset(sw.l)
	p.n = copy(p.buf, frame)
	p.port = port
	p.ingressLen = p.n
	p.lengthReg = p.n
	sw.set(p, sw.l.std.ingressPort, uint64(port))
	sw.set(p, sw.l.std.packetLength, uint64(p.n))
	sw.set(p, sw.l.std.instanceType, InstanceNormal)
	sw.set(p, sw.l.std.ingressTimestamp, sw.now())
	return p
}

func (sw *Switch) runIngress(p *packet) {
	std := &sw.l.std
	sw.parser.run(p, sw.errs)
	sw.set(p, std.parserError, uint64(p.parserError))
	sw.set(p, std.checksumError, uint64(b2i(p.checksumErr)))
	sw.ingress.run(p)
	egressSpec := int(p.f[std.egressSpec])
	mgid := 0
	if std.mcastGrp >= 0 {
		mgid = int(p.f[std.mcastGrp])
	}
	if p.cloneSession != 0 {
		session, list := p.cloneSession-1, p.cloneList
		p.cloneSession, p.cloneList = 0, 0
		replicas := sw.mirror[session]
		for _, r := range replicas {
			c := sw.get()
			c.reset(sw.l)
			c.n = copy(c.buf, p.buf[:p.n])
			c.port, c.ingressLen, c.lengthReg = p.port, p.ingressLen, p.ingressLen
			sw.set(c, std.ingressPort, uint64(p.port))
			sw.parser.run(c, sw.errs)
			c.resetMetadata(sw.l)
			c.copyFields(p, sw.fieldLists[list])
			sw.set(c, std.instanceType, InstanceIngressClone)
			sw.cloneRID(c, replicas, r)
			sw.enqueue(c, r.Port)
		}
	}
	if p.learnList != 0 {
		sw.digest(p, p.learnList)
		p.learnList = 0
	}
	if p.resubmitList != 0 {
		c := sw.get()
		c.reset(sw.l)
		c.n = copy(c.buf, p.buf[:p.n])
		c.port, c.ingressLen, c.lengthReg = p.port, p.ingressLen, p.ingressLen
		if p.resubmitList > 0 {
			c.copyFields(p, sw.fieldLists[p.resubmitList])
		}
		sw.set(c, std.instanceType, InstanceResubmit)
		sw.set(c, std.packetLength, uint64(p.ingressLen))
		sw.input = append(sw.input, c)
		sw.put(p)
		return
	}
	if mgid != 0 {
		sw.set(p, std.instanceType, InstanceReplication)
		sw.multicast(p, mgid)
		sw.put(p)
		return
	}
	if egressSpec == DropPort {
		sw.put(p)
		return
	}
	sw.set(p, std.instanceType, InstanceNormal)
	sw.enqueue(p, egressSpec)
}

// cloneRID gives a clone its replica's egress_rid when the session has
// several copies: BMv2 then clones through a multicast group, and the
// copies tell themselves apart by it; a one-port session is BMv2's
// plain mirror port, which leaves egress_rid 0.
func (sw *Switch) cloneRID(c *packet, replicas []Replica, r Replica) {
	if len(replicas) > 1 {
		sw.set(c, sw.l.std.egressRID, uint64(r.RID))
	}
}

func (sw *Switch) multicast(p *packet, mgid int) {
	for _, r := range sw.mcast[mgid] {
		sw.set(p, sw.l.std.egressRID, uint64(r.RID))
		c := sw.get()
		c.copyFrom(p)
		c.ingressLen = p.ingressLen
		sw.enqueue(c, r.Port)
	}
}

// enqueue puts a packet on an egress port's queue. In replay mode the
// queue is the switch's FIFO of pending egress work.
func (sw *Switch) enqueue(p *packet, port int) {
	std := &sw.l.std
	prio := 0
	if std.priority >= 0 {
		prio = int(p.f[std.priority])
	}
	if prio >= sw.cfg.PriorityQueues {
		sw.put(p) // as simple_switch: priority out of range, dropped
		return
	}
	sw.set(p, std.enqTimestamp, sw.now())
	if sw.live {
		sw.enqueueLive(p, port, prio)
		return
	}
	sw.set(p, std.enqQdepth, 0)
	sw.queue = append(sw.queue, queued{p: p, port: port, prio: prio})
}

// runEgress runs p through egress and hands the frame to emit; it
// returns the frame's length, 0 when nothing went out on the port
// (dropped or recirculated).
func (sw *Switch) runEgress(p *packet, port, prio int, emit Emit) int {
	std := &sw.l.std
	now := sw.now()
	sw.set(p, std.egressTimestamp, now)
	if std.enqTimestamp >= 0 {
		sw.set(p, std.deqTimedelta, now-p.f[std.enqTimestamp])
	}
	if !sw.live {
		sw.set(p, std.deqQdepth, 0)
	}
	sw.set(p, std.qid, uint64(prio))
	sw.set(p, std.egressPort, uint64(port))
	sw.set(p, std.egressSpec, DropPort+1)
	sw.set(p, std.packetLength, uint64(p.lengthReg))
	sw.egress.run(p)
	if p.cloneSession != 0 {
		session, list := p.cloneSession-1, p.cloneList
		p.cloneSession, p.cloneList = 0, 0
		replicas := sw.mirror[session]
		for _, r := range replicas {
			c := sw.get()
			c.copyFrom(p)
			c.ingressLen = p.ingressLen
			c.resetMetadata(sw.l)
			c.copyFields(p, sw.fieldLists[list])
			sw.set(c, std.instanceType, InstanceEgressClone)
			sw.cloneRID(c, replicas, r)
			sw.enqueue(c, r.Port)
		}
	}
	if int(p.f[std.egressSpec]) == DropPort {
		sw.put(p)
		return 0
	}
	sw.deparser.run(p, sw.l)
	if p.recircList != 0 {
		c := sw.get()
		c.reset(sw.l)
		c.n = copy(c.buf, p.out)
		c.ingressLen, c.lengthReg = c.n, c.n
		if p.recircList > 0 {
			c.copyFields(p, sw.fieldLists[p.recircList])
		}
		sw.set(c, std.instanceType, InstanceRecirculate)
		sw.set(c, std.packetLength, uint64(c.n))
		if sw.live {
			// Live, a recirculated packet comes back at the
			// recirculation rate: a program that holds packets by
			// recirculating them cannot freeze the switch.
			if !sw.recirc.push(c, sw.clock()) {
				sw.recircDrops++
				sw.put(c)
			} else {
				c.heldBy = sw.ports[port]
				c.heldBy.looping++
			}
			sw.put(p)
			return 0
		}
		sw.input = append(sw.input, c)
		sw.put(p)
		return 0
	}
	n := len(p.out)
	emit(port, p.out)
	sw.put(p)
	return n
}

func (sw *Switch) digest(p *packet, id int) {
	ll := sw.learnLists[id]
	if ll == nil || sw.cfg.Digest == nil {
		return
	}
	d := Digest{ListID: id, List: ll.name, Values: make([]uint64, len(ll.slots))}
	for i, s := range ll.slots {
		d.Values[i] = p.f[s]
	}
	sw.cfg.Digest(d)
}
