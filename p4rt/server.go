// Package p4rt is the P4Runtime server of p4rcm's Go P4 target
// (package v1model): the service simple_switch_grpc offers, following
// the P4Runtime specification v1.4 (p4lang/p4runtime, docs/v1), for one
// device. The device config is the BMv2 JSON p4c-bm2-ss writes; the
// P4Info is checked against it before a pipeline is taken.
//
// State lives in two places that move together: the target's tables and
// externs, which packets see, and the server's copy of what controllers
// wrote, as canonical P4Runtime entities, which reads return. Every
// update is checked in full before either changes, so a rejected update
// leaves the switch as it was.
package p4rt

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/p4rcm/p4rcm/v1model"
)

// APIVersion is the P4Runtime version Capabilities reports.
const APIVersion = "1.4.0"

// readBatch is how many entities one ReadResponse carries at most, and
// readBytes how many bytes: under gRPC's default receive limit (4 MiB),
// so that a client that keeps it reads entries of any size.
const (
	readBatch = 1000
	readBytes = 3 << 20
)

// Config is what the server needs besides its pipelines.
type Config struct {
	// DeviceID is the one device the server serves.
	DeviceID uint64
	// Switch configures each pipeline's target (logger, seed, priority
	// queues, clock); its Digest is the server's.
	Switch v1model.Config
	// Commit hands a newly committed pipeline's switch to the data
	// plane, which moves its ports to it. Called with no lock held that
	// a packet path takes.
	Commit func(sw *v1model.Switch)
	// PacketOut sends a controller's packet (its packet_out header
	// prepended) into sw as if it came in on the CPU port.
	PacketOut func(sw *v1model.Switch, frame []byte) error
	// Logger receives the server's events; nil discards them.
	Logger *slog.Logger

	// Policy, if set, names the client identities (mutual TLS) that
	// may be primary, and hold streams; the others only read.
	Policy *Policy

	// Limits on what clients may hold; 0 takes the default of the same
	// name (DefaultMaxRecvMsgSize, ...), which says what each bounds.
	MaxRecvMsgSize            int
	MaxRequestBytes           int64
	MaxStreams                int
	MaxStreamsPerIdentity     int
	MaxConnections            int
	MaxConnectionsPerIdentity int
	MaxHandshakes             int
	MaxHandshakesPerAddr      int
	HandshakeTimeout          time.Duration
	IdleTimeout               time.Duration
	// KeepaliveTime, KeepaliveTimeout and BusyTimeout are the
	// keepalive's (0: the defaults): see DefaultKeepaliveTime and
	// liveness.go.
	KeepaliveTime, KeepaliveTimeout, BusyTimeout time.Duration
}

// Server is a P4Runtime server for one device.
type Server struct {
	p4v1.UnimplementedP4RuntimeServer
	cfg Config
	log *slog.Logger

	// mu serialises writes and pipeline changes and guards pipe and
	// saved; reads take it too. Lock order: mu, then a switch's lock,
	// then the digester's, then the arbiter's.
	mu    sync.Mutex
	pipe  *pipeline
	saved *pipeline
	cur   atomic.Pointer[pipeline] // pipe, for the packet paths

	arb *arbiter
	dig *digester

	packetIns, packetInDrops atomic.Uint64

	lim   limits
	guard *guard
	// inFlight is the bytes of requests that may be read at once
	// (MaxRequestBytes), which gated requests reserve.
	inFlight *budget
	// streamsMu guards the counts of StreamChannel streams open, in
	// all and by client identity (under mutual TLS).
	streamsMu sync.Mutex
	streams   int
	streamsBy map[string]int
}

// New returns a server with no pipeline: a controller sets one with
// SetForwardingPipelineConfig, as with simple_switch_grpc.
func New(cfg Config) *Server {
	s := &Server{cfg: cfg, log: cfg.Logger, lim: cfg.limits(), streamsBy: map[string]int{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.guard = newGuard(s.lim, s.log)
	s.inFlight = newBudget(s.lim.maxRequestBytes)
	s.arb = newArbiter(cfg.DeviceID, cfg.Policy)
	s.dig = newDigester(s.arb)
	return s
}

// errorf is a gRPC status error.
func errorf(code codes.Code, format string, args ...any) error {
	return status.Error(code, fmt.Sprintf(format, args...))
}

// unknownID refuses an ID the P4Info does not hold. The spec names no
// code for it; a request naming one is malformed, so INVALID_ARGUMENT,
// as simple_switch_grpc answers.
func unknownID(kind string, id uint32) error {
	return errorf(codes.InvalidArgument, "no %s with ID %d in the P4Info", kind, id)
}

func (s *Server) device(id uint64) error {
	if id != s.cfg.DeviceID {
		return errorf(codes.NotFound, "no device %d here (this server serves device %d)", id, s.cfg.DeviceID)
	}
	return nil
}

// Capabilities reports the P4Runtime version.
func (s *Server) Capabilities(context.Context, *p4v1.CapabilitiesRequest) (*p4v1.CapabilitiesResponse, error) {
	return &p4v1.CapabilitiesResponse{P4RuntimeApiVersion: APIVersion}, nil
}

// SetForwardingPipelineConfig verifies, saves and commits pipelines.
func (s *Server) SetForwardingPipelineConfig(ctx context.Context, req *p4v1.SetForwardingPipelineConfigRequest) (*p4v1.SetForwardingPipelineConfigResponse, error) {
	if err := s.device(req.DeviceId); err != nil {
		return nil, err
	}
	if err := s.arb.mayWrite(req.Role, req.ElectionId, connOf(ctx)); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	build := func() (*pipeline, error) {
		c := req.GetConfig()
		if c == nil {
			return nil, errorf(codes.InvalidArgument, "no config")
		}
		return s.newPipeline(c)
	}
	switch req.Action {
	case p4v1.SetForwardingPipelineConfigRequest_VERIFY:
		_, err := build()
		return &p4v1.SetForwardingPipelineConfigResponse{}, err
	case p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_SAVE:
		p, err := build()
		if err != nil {
			return nil, err
		}
		s.saved = p
	case p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT:
		p, err := build()
		if err != nil {
			return nil, err
		}
		s.commit(p)
	case p4v1.SetForwardingPipelineConfigRequest_COMMIT:
		if req.Config != nil {
			return nil, errorf(codes.InvalidArgument, "COMMIT takes no config: it commits the one VERIFY_AND_SAVE saved")
		}
		if s.saved == nil {
			return nil, errorf(codes.NotFound, "COMMIT: no pipeline saved (VERIFY_AND_SAVE one first)")
		}
		s.commit(s.saved)
	case p4v1.SetForwardingPipelineConfigRequest_RECONCILE_AND_COMMIT:
		p, err := build()
		if err != nil {
			return nil, err
		}
		if s.pipe != nil {
			if err := reconcile(s.pipe, p); err != nil {
				return nil, err
			}
		}
		s.commit(p)
	default:
		return nil, errorf(codes.InvalidArgument, "action %v", req.Action)
	}
	return &p4v1.SetForwardingPipelineConfigResponse{}, nil
}

func (s *Server) newPipeline(c *p4v1.ForwardingPipelineConfig) (*pipeline, error) {
	cfg := s.cfg.Switch
	var p *pipeline
	cfg.Digest = func(d v1model.Digest) { s.dig.add(p, d) }
	p, err := newPipeline(c.P4Info, c.P4DeviceConfig, c.Cookie, cfg)
	if err != nil {
		return nil, err
	}
	p.dig = s.dig
	return p, nil
}

// target is the pipeline reads and writes go to: a saved one, which
// packets do not see until COMMIT (the spec: after VERIFY_AND_SAVE,
// requests refer to the new config and COMMIT realizes what they wrote),
// or the committed one. Called with mu held.
func (s *Server) target() *pipeline {
	if s.saved != nil {
		return s.saved
	}
	return s.pipe
}

// commit makes p the pipeline packets and controllers see.
func (s *Server) commit(p *pipeline) {
	s.pipe, s.saved = p, nil
	s.cur.Store(p)
	s.dig.reset(p)
	if s.cfg.Commit != nil {
		s.cfg.Commit(p.sw)
	}
	s.log.Info("pipeline committed", "cookie", p.cookie.GetCookie())
}

// reconcile carries what controllers wrote to old over to p, which must
// take every entity as it is (same IDs and shapes); otherwise nothing is
// committed and the error says what did not fit. Counter and register
// values are data-plane state and start from zero.
func reconcile(old, p *pipeline) error {
	var ents []*p4v1.Entity
	collect := func(e *p4v1.Entity) error { ents = append(ents, e); return nil }
	_ = old.readProfiles(0, 0, false, collect)
	_ = old.readProfiles(0, 0, true, collect)
	_ = old.readPRE(&p4v1.PacketReplicationEngineEntry{Type: &p4v1.PacketReplicationEngineEntry_CloneSessionEntry{CloneSessionEntry: &p4v1.CloneSessionEntry{}}}, collect)
	_ = old.readPRE(&p4v1.PacketReplicationEngineEntry{Type: &p4v1.PacketReplicationEngineEntry_MulticastGroupEntry{MulticastGroupEntry: &p4v1.MulticastGroupEntry{}}}, collect)
	_ = old.readDigests(&p4v1.DigestEntry{}, collect)
	for _, id := range sortedIDs(old.tables) {
		for _, e := range old.st.entries(id) {
			if !e.isConst {
				ents = append(ents, tableEntity(proto.Clone(e.tableEntry(old.tables[id])).(*p4v1.TableEntry)))
			}
		}
		if d := old.st.table(id).deflt; d != nil {
			ents = append(ents, tableEntity(proto.Clone(d).(*p4v1.TableEntry)))
		}
	}
	for _, id := range sortedIDs(old.st.meterCfg) {
		for _, i := range sortedIDs(old.st.meterCfg[id]) {
			ents = append(ents, &p4v1.Entity{Entity: &p4v1.Entity_MeterEntry{MeterEntry: &p4v1.MeterEntry{
				MeterId: id, Index: &p4v1.Index{Index: i}, Config: old.st.meterCfg[id][i]}}})
		}
	}
	for _, id := range sortedIDs(old.st.valueSets) {
		ents = append(ents, &p4v1.Entity{Entity: &p4v1.Entity_ValueSetEntry{ValueSetEntry: old.st.valueSets[id]}})
	}
	for _, e := range ents {
		typ := p4v1.Update_INSERT
		switch x := e.Entity.(type) {
		case *p4v1.Entity_MeterEntry, *p4v1.Entity_ValueSetEntry:
			typ = p4v1.Update_MODIFY
		case *p4v1.Entity_TableEntry:
			if x.TableEntry.IsDefaultAction {
				typ = p4v1.Update_MODIFY
			}
		}
		if err := p.write(&p4v1.Update{Type: typ, Entity: e}); err != nil {
			return errorf(codes.InvalidArgument, "RECONCILE_AND_COMMIT: the new pipeline cannot take the state of the old: %v (use VERIFY_AND_COMMIT to start afresh)",
				status.Convert(err).Message())
		}
	}
	return nil
}

// GetForwardingPipelineConfig returns the committed pipeline, in part or
// in full.
func (s *Server) GetForwardingPipelineConfig(_ context.Context, req *p4v1.GetForwardingPipelineConfigRequest) (*p4v1.GetForwardingPipelineConfigResponse, error) {
	if err := s.device(req.DeviceId); err != nil {
		return nil, err
	}
	s.mu.Lock()
	p := s.pipe
	s.mu.Unlock()
	if p == nil {
		return nil, errorf(codes.FailedPrecondition, "no pipeline set")
	}
	c := &p4v1.ForwardingPipelineConfig{Cookie: p.cookie}
	switch req.ResponseType {
	case p4v1.GetForwardingPipelineConfigRequest_ALL:
		c.P4Info, c.P4DeviceConfig = p.info, p.json
	case p4v1.GetForwardingPipelineConfigRequest_COOKIE_ONLY:
	case p4v1.GetForwardingPipelineConfigRequest_P4INFO_AND_COOKIE:
		c.P4Info = p.info
	case p4v1.GetForwardingPipelineConfigRequest_DEVICE_CONFIG_AND_COOKIE:
		c.P4DeviceConfig = p.json
	default:
		return nil, errorf(codes.InvalidArgument, "response type %v", req.ResponseType)
	}
	return &p4v1.GetForwardingPipelineConfigResponse{Config: c}, nil
}

// Write applies a batch of updates in order, each on its own
// (CONTINUE_ON_ERROR, as BMv2). If any fails, the status is UNKNOWN with
// one p4.v1.Error per update in its details, OK for those that held.
//
// Write takes ownership of req: what it stores of action profile
// members and groups, default entries and the other entities keeps the
// parts of req that are canonical as given (actions, byte strings)
// rather than copies, and Read answers with them. (Table entries are
// stored as bytes, a copy, and keep nothing of req.) Over gRPC that costs
// a client nothing, since every request is decoded into messages of the
// server's own; a caller in this process (through a transport that
// does not copy) must not change req, or any message or byte slice in
// it, once written.
func (s *Server) Write(ctx context.Context, req *p4v1.WriteRequest) (*p4v1.WriteResponse, error) {
	if err := s.device(req.DeviceId); err != nil {
		return nil, err
	}
	if err := s.arb.mayWrite(req.Role, req.ElectionId, connOf(ctx)); err != nil {
		return nil, err
	}
	if req.Atomicity != p4v1.WriteRequest_CONTINUE_ON_ERROR {
		return nil, errorf(codes.Unimplemented, "atomicity %v: this target applies updates one by one (CONTINUE_ON_ERROR)", req.Atomicity)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.target()
	if p == nil {
		return nil, errorf(codes.FailedPrecondition, "no pipeline set: SetForwardingPipelineConfig first")
	}
	errs := make([]error, len(req.Updates))
	if len(req.Updates) >= parallelUpdates && runtime.GOMAXPROCS(0) >= 2 {
		p.writeBatch(req.Updates, errs)
	} else {
		for i, u := range req.Updates {
			errs[i] = p.write(u)
		}
	}
	failed := false
	for _, err := range errs {
		failed = failed || err != nil
	}
	if !failed {
		return &p4v1.WriteResponse{}, nil
	}
	st := status.New(codes.Unknown, "Write failure.")
	var details []proto.Message
	for _, err := range errs {
		e := &p4v1.Error{CanonicalCode: int32(codes.OK)}
		if err != nil {
			c := status.Convert(err)
			e.CanonicalCode, e.Message = int32(c.Code()), c.Message()
		}
		details = append(details, e)
	}
	// Details are proto.Message values (protoadapt-free in this grpc).
	if withDetails, err := st.WithDetails(toV1(details)...); err == nil {
		st = withDetails
	}
	return nil, st.Err()
}

// prepChunk is how many updates writeBatch prepares before it hands
// them on, and prepRing how many chunks it prepares ahead at most (the
// room it keeps for them, whatever the batch's size).
const (
	prepChunk = 32
	prepRing  = 16
)

// writeBatch applies updates in order, as write one by one, putting
// each one's error in errs. Their table entries are prepared on another
// goroutine (prepTable, which reads only what the program fixed) ahead
// of their turn: on two cores the checks, the key's forms and the
// target's entry of one update are made while the ones before are
// applied.
func (p *pipeline) writeBatch(us []*p4v1.Update, errs []error) {
	const ring = prepChunk * prepRing
	if p.preps == nil {
		p.preps = make([]tablePrep, ring)
	}
	// The table entry an update writes, nil for other updates (which
	// write applies itself).
	entry := func(u *p4v1.Update) *p4v1.TableEntry {
		if u == nil || u.Entity == nil || u.Type == p4v1.Update_UNSPECIFIED {
			return nil
		}
		return u.Entity.GetTableEntry()
	}
	// A chunk's room is prepared once free (the one applying it is
	// done with it), and applied once ready.
	ready, free := make(chan struct{}, prepRing), make(chan struct{}, prepRing)
	for range prepRing {
		free <- struct{}{}
	}
	go func() {
		for lo := 0; lo < len(us); lo += prepChunk {
			<-free
			for i := lo; i < min(lo+prepChunk, len(us)); i++ {
				if te := entry(us[i]); te != nil {
					p.prepTable(us[i].Type, te, &p.preps[i%ring], true)
				}
			}
			ready <- struct{}{}
		}
	}()
	for lo := 0; lo < len(us); lo += prepChunk {
		<-ready
		hi := min(lo+prepChunk, len(us))
		for i := lo; i < hi; i++ {
			if te := entry(us[i]); te != nil {
				errs[i] = p.applyTable(us[i].Type, te, &p.preps[i%ring])
			} else {
				errs[i] = p.write(us[i])
			}
		}
		// The room keeps nothing of the request alive.
		clear(p.preps[lo%ring : lo%ring+hi-lo])
		free <- struct{}{}
	}
}

// write applies one update to the pipeline.
func (p *pipeline) write(u *p4v1.Update) error {
	if u == nil || u.Entity == nil {
		return errorf(codes.InvalidArgument, "an update with no entity")
	}
	if u.Type == p4v1.Update_UNSPECIFIED {
		return errorf(codes.InvalidArgument, "update type UNSPECIFIED")
	}
	switch x := u.Entity.Entity.(type) {
	case *p4v1.Entity_TableEntry:
		return p.writeTable(u.Type, x.TableEntry)
	case *p4v1.Entity_ActionProfileMember:
		return p.writeMember(u.Type, x.ActionProfileMember)
	case *p4v1.Entity_ActionProfileGroup:
		return p.writeGroup(u.Type, x.ActionProfileGroup)
	case *p4v1.Entity_CounterEntry:
		return p.writeCounter(u.Type, x.CounterEntry)
	case *p4v1.Entity_DirectCounterEntry:
		return p.writeDirectCounter(u.Type, x.DirectCounterEntry)
	case *p4v1.Entity_MeterEntry:
		return p.writeMeter(u.Type, x.MeterEntry)
	case *p4v1.Entity_DirectMeterEntry:
		return p.writeDirectMeter(u.Type, x.DirectMeterEntry)
	case *p4v1.Entity_RegisterEntry:
		return p.writeRegister(u.Type, x.RegisterEntry)
	case *p4v1.Entity_PacketReplicationEngineEntry:
		return p.writePRE(u.Type, x.PacketReplicationEngineEntry)
	case *p4v1.Entity_DigestEntry:
		return p.writeDigest(u.Type, x.DigestEntry)
	case *p4v1.Entity_ValueSetEntry:
		return p.writeValueSet(u.Type, x.ValueSetEntry)
	case *p4v1.Entity_ExternEntry:
		return errorf(codes.Unimplemented, "extern entries: v1model has no architecture-specific externs")
	default:
		return errorf(codes.InvalidArgument, "an entity of no known kind")
	}
}

// Read streams what matches each entity of the request, in batches.
func (s *Server) Read(req *p4v1.ReadRequest, stream p4v1.P4Runtime_ReadServer) error {
	if err := s.device(req.DeviceId); err != nil {
		return err
	}
	if len(req.Entities) == 0 {
		return errorf(codes.InvalidArgument, "a read of nothing: give at least one entity")
	}
	var all []*p4v1.Entity
	if err := s.read(req, func(e *p4v1.Entity) error { all = append(all, e); return nil }); err != nil {
		return err
	}
	for len(all) > 0 {
		n, size := 0, 0
		for n < min(len(all), readBatch) {
			size += proto.Size(all[n])
			if n > 0 && size > readBytes {
				break
			}
			n++
		}
		if err := stream.Send(&p4v1.ReadResponse{Entities: all[:n]}); err != nil {
			return err
		}
		all = all[n:]
	}
	return nil
}

// read gathers the answer under the lock; Read sends it without.
func (s *Server) read(req *p4v1.ReadRequest, out func(*p4v1.Entity) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.target()
	if p == nil {
		return errorf(codes.FailedPrecondition, "no pipeline set")
	}
	for _, e := range req.Entities {
		var err error
		switch x := e.GetEntity().(type) {
		case *p4v1.Entity_TableEntry:
			err = p.readTables(x.TableEntry, out)
		case *p4v1.Entity_ActionProfileMember:
			err = p.readProfiles(x.ActionProfileMember.ActionProfileId, x.ActionProfileMember.MemberId, false, out)
		case *p4v1.Entity_ActionProfileGroup:
			err = p.readProfiles(x.ActionProfileGroup.ActionProfileId, x.ActionProfileGroup.GroupId, true, out)
		case *p4v1.Entity_CounterEntry:
			err = p.readCounters(x.CounterEntry, out)
		case *p4v1.Entity_DirectCounterEntry:
			err = p.readDirect(x.DirectCounterEntry.TableEntry, hasCounter, "counter", p.directCounterEntity, out)
		case *p4v1.Entity_MeterEntry:
			err = p.readMeters(x.MeterEntry, out)
		case *p4v1.Entity_DirectMeterEntry:
			err = p.readDirect(x.DirectMeterEntry.TableEntry, hasMeter, "meter", p.directMeterEntity, out)
		case *p4v1.Entity_RegisterEntry:
			err = p.readRegisters(x.RegisterEntry, out)
		case *p4v1.Entity_PacketReplicationEngineEntry:
			err = p.readPRE(x.PacketReplicationEngineEntry, out)
		case *p4v1.Entity_DigestEntry:
			err = p.readDigests(x.DigestEntry, out)
		case *p4v1.Entity_ValueSetEntry:
			err = p.readValueSets(x.ValueSetEntry, out)
		case *p4v1.Entity_ExternEntry:
			err = errorf(codes.Unimplemented, "extern entries: v1model has no architecture-specific externs")
		default:
			err = errorf(codes.InvalidArgument, "an entity of no known kind")
		}
		if err != nil {
			return err
		}
	}
	return nil
}
