// Package controlplane is p4rcm's P4Runtime client, built on
// github.com/antoninbas/p4runtime-go-client (its RPC client, pipeline
// calls, entry builders and canonical byte strings), with what a
// controller of real switches needs on top:
//
//   - a session opens as primary or as backup, says which
//     (Session.Primary), and follows arbitration updates on the stream
//     (Session.Roles): a backup becomes primary when the primary leaves, a
//     primary is demoted by a higher election ID;
//   - a session adopts the pipeline already on the switch (AdoptPipeline,
//     checked by its cookie) instead of resetting the switch's tables;
//   - every name is resolved through the P4Info, in full, by alias or by
//     unique suffix, and an unknown name is refused before anything is
//     sent, with a status a caller can test (NOT_FOUND, or
//     INVALID_ARGUMENT when ambiguous) naming the closest names; a value
//     too wide for its field is refused naming the field and its width;
//   - writes go in batches, and a failed batch's per-update errors are
//     unpacked (WriteError), its status the first failed update's.
//
// The stream is read here, not by the library's Run: Run reports an
// arbitration update as a bare bool, which cannot tell "another controller
// is primary" (ALREADY_EXISTS) from "there is no primary" (NOT_FOUND, when
// a backup may take over), and it logs through logrus.
//
// Errors from the switch keep their gRPC status: status.Code(err) tells
// NOT_FOUND, ALREADY_EXISTS, PERMISSION_DENIED, ... apart.
package controlplane

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// closeWait bounds how long Close waits for the switch to end the
// stream after the session half-closes it.
const closeWait = time.Second

// maxMessage is the largest message a session receives.
const maxMessage = 256 << 20

// streamBuffer is how many digest lists, packet-ins or role changes wait
// for their reader before further ones are dropped (and counted).
const streamBuffer = 1024

// ElectionID is a controller's election ID, a 128-bit number: the higher
// one is primary.
type ElectionID struct{ High, Low uint64 }

func (e ElectionID) String() string {
	if e.High == 0 {
		return fmt.Sprint(e.Low)
	}
	return fmt.Sprintf("%d,%d", e.High, e.Low)
}

// Session is a controller's connection to one device: primary or
// backup, or a reader (DialReader), which only reads.
type Session struct {
	addr     string
	conn     *grpc.ClientConn
	c        *client.Client
	deviceID uint64
	role     string // the P4Runtime role, "" for the default one
	reader   bool   // DialReader's: no stream, no arbitration
	waitHeld bool   // Dial waits while the election ID is held
	tls      *tls.Config

	mu       sync.Mutex
	info     *p4configv1.P4Info // the pipeline's, once set or adopted
	election ElectionID         // changes when a backup takes over

	primary atomic.Bool
	roles   chan bool
	// reported is the election ID the switch's last arbitration update
	// carried: the primary's (or, with none, the highest seen).
	reported atomic.Pointer[ElectionID]

	// One goroutine (receive) reads the stream for the session's life;
	// sends, from callers and from receive, are serialised by sendMu.
	stream    p4v1.P4Runtime_StreamChannelClient
	cancel    context.CancelFunc
	sendMu    sync.Mutex
	recvDone  chan struct{}
	streamErr error // why the stream ended, if not by Close; set before recvDone closes

	digests   chan *p4v1.DigestList
	packetIns chan *p4v1.PacketIn
	dropped   atomic.Uint64

	closing   atomic.Bool // Close has begun: the stream's end is no error
	closeOnce sync.Once
	closeErr  error
}

// Option changes how Dial opens a session.
type Option func(*Session)

// WithRole opens the session in a P4Runtime role of this name instead
// of the default role. Each role has its own primary (the spec's
// "Controller Roles"), so a controller in a role of its own, a monitor
// for instance, neither contends with the default role's controllers
// nor displaces them; without a role configuration it has the whole
// pipeline, as the default role has. A server that does not keep roles
// apart (one that does not name the role in its arbitration answer) is
// refused with ErrRolesUnsupported.
func WithRole(name string) Option { return func(s *Session) { s.role = name } }

// ErrRolesUnsupported is Dial's error, with WithRole, for a server that
// answers arbitration without naming the role: one that ignores roles
// and would put the session among the default role's controllers.
var ErrRolesUnsupported = errors.New("the switch's P4Runtime server does not keep roles apart")

// Dial connects to the P4Runtime server at addr and asks to be the
// primary controller of device deviceID with election ID election (not
// 0, which P4Runtime reserves). It returns once the switch has answered:
// the session is then primary, or a backup if another controller holds a
// higher ID (Primary says which; a backup's writes are refused with
// PERMISSION_DENIED). A backup takes over when the switch announces that
// there is no primary (the primary left), with an election ID above the
// highest the switch has seen. Dial fails if the switch cannot be
// reached before ctx ends or refuses the request (a wrong device ID:
// NOT_FOUND; an election ID another live controller of the role holds:
// INVALID_ARGUMENT).
//
// Only writes need a session from Dial: reads need no arbitration, and a
// reader (DialReader) contends with no one.
func Dial(ctx context.Context, addr string, deviceID uint64, election ElectionID, opts ...Option) (*Session, error) {
	if election == (ElectionID{}) {
		return nil, status.Error(codes.InvalidArgument, "election ID 0 is no controller's (switches refuse it): give 1 or more")
	}
	var o Session
	for _, opt := range opts {
		opt(&o)
	}
	for {
		s, err := dialOnce(ctx, addr, deviceID, election, opts)
		if !o.waitHeld || status.Code(err) != codes.InvalidArgument || errors.Is(err, ErrRolesUnsupported) {
			return s, err
		}
		select {
		case <-ctx.Done():
			return nil, err // the ID's holder stayed: the caller words it
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// WaitWhileHeld has Dial try again, until its context ends, while
// another live controller of the role holds the election ID (which
// P4Runtime's servers refuse with INVALID_ARGUMENT): for commands that
// write, whose like with the same ID are done within a moment. Dial
// then returns that refusal if the holder stays.
func WaitWhileHeld() Option { return func(s *Session) { s.waitHeld = true } }

// newConn is the client connection to addr, over TLS when opts say so.
func newConn(addr string, opts []Option) (*grpc.ClientConn, error) {
	var o Session
	for _, opt := range opts {
		opt(&o)
	}
	creds := insecure.NewCredentials()
	if o.tls != nil {
		creds = credentials.NewTLS(o.tls)
	}
	// Pipelines and reads of many entries pass gRPC's 4 MiB default;
	// P4Runtime servers take up to 256 MiB (PI's, p4switch's).
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessage)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	return conn, nil
}

func dialOnce(ctx context.Context, addr string, deviceID uint64, election ElectionID, opts []Option) (*Session, error) {
	conn, err := newConn(addr, opts)
	if err != nil {
		return nil, err
	}
	s := &Session{addr: addr, conn: conn, deviceID: deviceID, election: election,
		roles: make(chan bool, streamBuffer), recvDone: make(chan struct{}),
		digests: make(chan *p4v1.DigestList, streamBuffer), packetIns: make(chan *p4v1.PacketIn, streamBuffer)}
	for _, o := range opts {
		o(s)
	}
	s.c = client.NewClientForRole(p4v1.NewP4RuntimeClient(conn), deviceID, s.electionProto(), s.roleProto())
	// The stream lives as long as the session, not as the caller's ctx;
	// WaitForReady makes an unreachable switch fail within ctx below.
	var streamCtx context.Context
	streamCtx, s.cancel = context.WithCancel(context.Background())
	opened := make(chan error, 1)
	go func() {
		var err error
		s.stream, err = s.c.StreamChannel(streamCtx, grpc.WaitForReady(true))
		opened <- err
	}()
	select {
	case err = <-opened:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err == nil {
		err = s.arbitrate()
	}
	if err != nil {
		s.cancel()
		conn.Close()
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	arbitrated := make(chan error, 1) // buffered: Dial may have given up waiting
	go s.receive(arbitrated)
	select {
	case err = <-arbitrated:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		s.Close()
		if errors.Is(err, ErrRolesUnsupported) {
			return nil, fmt.Errorf("%s: %w", addr, err)
		}
		return nil, fmt.Errorf("%s: arbitration for device %d: %w", addr, deviceID, err)
	}
	return s, nil
}

// DialReader connects to the P4Runtime server at addr to read device
// deviceID: pipelines, entries, counters. It opens no stream and takes
// part in no arbitration (P4Runtime's reads need none), so it contends
// with no controller, and any number of readers run beside a primary.
// Its writes are refused before they are sent; it receives no digests
// or packet-ins (their channels are nil). DialReader returns once the
// server has answered, and fails if none does before ctx ends. Of opts,
// it takes WithTLS.
func DialReader(ctx context.Context, addr string, deviceID uint64, opts ...Option) (*Session, error) {
	conn, err := newConn(addr, opts)
	if err != nil {
		return nil, err
	}
	s := &Session{addr: addr, conn: conn, deviceID: deviceID, reader: true, recvDone: make(chan struct{}), cancel: func() {}}
	close(s.recvDone)
	p4c := p4v1.NewP4RuntimeClient(conn)
	s.c = client.NewClient(p4c, deviceID, nil)
	// Capabilities needs no device: it only shows a P4Runtime server
	// answers; WaitForReady keeps trying until ctx ends.
	if _, err := p4c.Capabilities(ctx, &p4v1.CapabilitiesRequest{}, grpc.WaitForReady(true)); err != nil {
		conn.Close()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	return s, nil
}

// Ping asks the switch for its capabilities, which needs no device, no
// pipeline and no arbitration: an answer within ctx shows its P4Runtime
// server still answers.
func (s *Session) Ping(ctx context.Context) error {
	_, err := p4v1.NewP4RuntimeClient(s.conn).Capabilities(ctx, &p4v1.CapabilitiesRequest{})
	return err
}

// Reader reports whether the session is a reader (DialReader).
func (s *Session) Reader() bool { return s.reader }

// errReader refuses a reader's writes: without an election ID, some
// servers (BMv2's, when no controller is connected) would take them.
var errReader = status.Error(codes.PermissionDenied, "this session only reads (it took no part in arbitration)")

func (s *Session) electionProto() *p4v1.Uint128 {
	e := s.Election()
	if e == (ElectionID{}) { // a reader's
		return nil
	}
	return &p4v1.Uint128{High: e.High, Low: e.Low}
}

func (s *Session) roleProto() *p4v1.Role {
	if s.role == "" {
		return nil
	}
	return &p4v1.Role{Name: s.role}
}

// arbitrate sends the session's arbitration request.
func (s *Session) arbitrate() error {
	return s.send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{
		Arbitration: &p4v1.MasterArbitrationUpdate{DeviceId: s.deviceID, Role: s.roleProto(), ElectionId: s.electionProto()}}})
}

// send sends one message on the stream.
func (s *Session) send(req *p4v1.StreamMessageRequest) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	return s.stream.Send(req)
}

// receive reads the stream until it ends. The first arbitration answer
// is reported on arbitrated; later ones change the role (see Roles).
// Digest lists go to Digests (acknowledged once queued), packet-ins to
// PacketIns.
func (s *Session) receive(arbitrated chan<- error) {
	defer close(s.recvDone)
	defer close(s.roles)
	defer close(s.digests)
	defer close(s.packetIns)
	first := true
	for {
		resp, err := s.stream.Recv()
		if err != nil {
			if first {
				arbitrated <- err
			} else if !s.closing.Load() { // not ended by Close
				s.streamErr = fmt.Errorf("%s: stream: %w", s.addr, err)
			}
			return
		}
		switch {
		case resp.GetArbitration() != nil:
			if first && s.role != "" && resp.GetArbitration().GetRole().GetName() != s.role {
				arbitrated <- ErrRolesUnsupported
				return
			}
			s.arbitration(resp.GetArbitration())
			// "No primary" has this session ask again with a higher ID:
			// Dial returns with the answer to that, so that Primary is
			// settled when it does.
			if first && resp.GetArbitration().GetStatus().GetCode() != int32(codes.NotFound) {
				first = false
				arbitrated <- nil
			}
		case resp.GetDigest() != nil:
			if d := resp.GetDigest(); offer(s.digests, d, &s.dropped) {
				_ = s.send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_DigestAck{
					DigestAck: &p4v1.DigestListAck{DigestId: d.DigestId, ListId: d.ListId}}})
			}
		case resp.GetPacket() != nil:
			offer(s.packetIns, resp.GetPacket(), &s.dropped)
		}
	}
}

// arbitration takes an arbitration update: OK makes the session primary,
// ALREADY_EXISTS a backup, and NOT_FOUND (no primary) makes a backup take
// over with an election ID above the highest the switch has seen (its
// own added to it, so that two backups taking over do not collide).
func (s *Session) arbitration(a *p4v1.MasterArbitrationUpdate) {
	primary := a.GetStatus().GetCode() == int32(codes.OK)
	if id := a.GetElectionId(); id != nil {
		s.reported.Store(&ElectionID{High: id.GetHigh(), Low: id.GetLow()})
	}
	if s.primary.Swap(primary) != primary {
		offer(s.roles, primary, &s.dropped)
	}
	if a.GetStatus().GetCode() == int32(codes.NotFound) {
		seen := ElectionID{High: a.GetElectionId().GetHigh(), Low: a.GetElectionId().GetLow()}
		next := takeover(seen, s.Election())
		s.mu.Lock()
		s.election = next
		s.mu.Unlock()
		_ = s.arbitrate() // a failure ends the stream, which Recv reports
	}
}

// takeover is the election ID a backup asks again with when the switch
// says there is no primary and the highest ID it has seen is seen: seen
// plus its own, so that two backups taking over do not collide, and at
// most 2^128-1. It never wraps round: past the top it would come out
// below seen (a backup again, told again that there is no primary, and
// so on down through 0). At the top it is 2^128-1 itself, which still
// wins, since an ID at least the highest seen is primary.
func takeover(seen, own ElectionID) ElectionID {
	low, carry := bits.Add64(seen.Low, own.Low, 0)
	high, over := bits.Add64(seen.High, own.High, carry)
	if over != 0 {
		return ElectionID{High: math.MaxUint64, Low: math.MaxUint64}
	}
	return ElectionID{High: high, Low: low}
}

// offer queues v on ch, or counts it dropped when ch is full.
func offer[T any](ch chan T, v T, dropped *atomic.Uint64) bool {
	select {
	case ch <- v:
		return true
	default:
		dropped.Add(1)
		return false
	}
}

// Primary reports whether the switch has this session as its primary
// controller now.
func (s *Session) Primary() bool { return s.primary.Load() }

// PrimaryElection is the election ID the switch last named in an
// arbitration update: the primary's when there is one (P4Runtime's
// servers send the primary's, or the highest they have seen). ok is
// false before any update, and for a reader.
func (s *Session) PrimaryElection() (id ElectionID, ok bool) {
	if p := s.reported.Load(); p != nil {
		return *p, true
	}
	return ElectionID{}, false
}

// Role is the session's P4Runtime role, "" for the default one.
func (s *Session) Role() string { return s.role }

// Roles delivers each change of role the switch announces on the stream:
// true when this session becomes primary, false when it is demoted.
func (s *Session) Roles() <-chan bool { return s.roles }

// WaitPrimary waits until this session is primary, the stream ends or
// ctx does.
func (s *Session) WaitPrimary(ctx context.Context) error {
	for !s.Primary() {
		select {
		case <-s.recvDone:
			if err := s.Err(); err != nil {
				return err
			}
			return status.Error(codes.Unavailable, "the session is closed")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// Addr is the switch's address and DeviceID the device's.
func (s *Session) Addr() string     { return s.addr }
func (s *Session) DeviceID() uint64 { return s.deviceID }

// Election is the session's election ID: the one it dialled with, or
// the one it took over with.
func (s *Session) Election() ElectionID {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.election
}

// Err is why the stream ended before Close (the switch went away, say),
// or nil while it is up and after Close.
func (s *Session) Err() error {
	select {
	case <-s.recvDone:
		return s.streamErr
	default:
		return nil
	}
}

// Close ends the session: the stream (the channels of Digests, PacketIns
// and Roles close once its reader has returned) and the connection. It is
// safe to call more than once.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		if s.Reader() {
			s.closeErr = s.conn.Close()
			return
		}
		// Half-close first and wait (briefly) for the switch to end the
		// stream: it has then dropped this controller, so a backup's
		// next request finds the primary gone.
		s.closing.Store(true)
		s.sendMu.Lock()
		err := s.stream.CloseSend()
		s.sendMu.Unlock()
		if err == nil {
			select {
			case <-s.recvDone:
			case <-time.After(closeWait):
			}
		}
		s.closeErr = s.conn.Close()
		s.cancel()
		<-s.recvDone
	})
	return s.closeErr
}

// Digests delivers the digest lists the switch sends, in order; each
// delivered list has been acknowledged. A list that arrives when the
// channel (1024 lists) is full is dropped unacknowledged (the switch
// sends its digests again after the ack timeout) and counted by Dropped.
// Close closes the channel (as it does those of PacketIns and Roles).
func (s *Session) Digests() <-chan *p4v1.DigestList { return s.digests }

// PacketIns delivers the packets the switch sends to the controller.
func (s *Session) PacketIns() <-chan *p4v1.PacketIn { return s.packetIns }

// Dropped counts stream messages dropped because their channel was full.
func (s *Session) Dropped() uint64 { return s.dropped.Load() }

// SendPacketOut sends a packet from the controller into the switch.
func (s *Session) SendPacketOut(payload []byte, metadata ...*p4v1.PacketMetadata) error {
	if s.Reader() {
		return errReader
	}
	return s.send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Packet{
		Packet: &p4v1.PacketOut{Payload: payload, Metadata: metadata}}})
}
