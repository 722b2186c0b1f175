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
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// closeWait bounds how long Close waits for the switch to end the
// stream after the session half-closes it.
const closeWait = time.Second

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

// Session is a controller's connection to one device: primary or backup.
type Session struct {
	addr     string
	conn     *grpc.ClientConn
	c        *client.Client
	deviceID uint64

	mu       sync.Mutex
	info     *p4configv1.P4Info // the pipeline's, once set or adopted
	election ElectionID         // changes when a backup takes over

	primary atomic.Bool
	roles   chan bool

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

// Dial connects to the P4Runtime server at addr and asks to be the
// primary controller of device deviceID with election ID election (not
// 0, which P4Runtime reserves). It returns once the switch has answered:
// the session is then primary, or a backup if another controller holds a
// higher ID (Primary says which; a backup's writes are refused with
// PERMISSION_DENIED). A backup takes over when the switch announces that
// there is no primary (the primary left), with an election ID above the
// highest the switch has seen. Dial fails if the switch cannot be
// reached before ctx ends or refuses the request (a wrong device ID:
// NOT_FOUND).
func Dial(ctx context.Context, addr string, deviceID uint64, election ElectionID) (*Session, error) {
	if election == (ElectionID{}) {
		return nil, status.Error(codes.InvalidArgument, "controlplane: election ID 0 is reserved for backups that never become primary")
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("controlplane: %s: %w", addr, err)
	}
	s := &Session{addr: addr, conn: conn, deviceID: deviceID, election: election,
		roles: make(chan bool, streamBuffer), recvDone: make(chan struct{}),
		digests: make(chan *p4v1.DigestList, streamBuffer), packetIns: make(chan *p4v1.PacketIn, streamBuffer)}
	s.c = client.NewClient(p4v1.NewP4RuntimeClient(conn), deviceID, s.electionProto())
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
		return nil, fmt.Errorf("controlplane: %s: %w", addr, err)
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
		return nil, fmt.Errorf("controlplane: %s: arbitration for device %d: %w", addr, deviceID, err)
	}
	return s, nil
}

func (s *Session) electionProto() *p4v1.Uint128 {
	e := s.Election()
	return &p4v1.Uint128{High: e.High, Low: e.Low}
}

// arbitrate sends the session's arbitration request.
func (s *Session) arbitrate() error {
	return s.send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{
		Arbitration: &p4v1.MasterArbitrationUpdate{DeviceId: s.deviceID, ElectionId: s.electionProto()}}})
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
				s.streamErr = fmt.Errorf("controlplane: %s: stream: %w", s.addr, err)
			}
			return
		}
		switch {
		case resp.GetArbitration() != nil:
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
	if s.primary.Swap(primary) != primary {
		offer(s.roles, primary, &s.dropped)
	}
	if a.GetStatus().GetCode() == int32(codes.NotFound) {
		seen, own := a.GetElectionId(), s.Election()
		low := seen.GetLow() + own.Low
		carry := uint64(0)
		if low < own.Low {
			carry = 1
		}
		s.mu.Lock()
		s.election = ElectionID{High: seen.GetHigh() + own.High + carry, Low: low}
		s.mu.Unlock()
		_ = s.arbitrate() // a failure ends the stream, which Recv reports
	}
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
			return status.Error(codes.Unavailable, "controlplane: the session is closed")
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
	return s.send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Packet{
		Packet: &p4v1.PacketOut{Payload: payload, Metadata: metadata}}})
}
