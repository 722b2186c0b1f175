// Package controlplane is p4rcm's P4Runtime client: a session with one
// switch (arbitration as the primary controller, the pipeline pushed from
// a P4Info and a device configuration), table entries written and read by
// the names in the P4Info, counters, clone sessions and digests.
//
// Names that are not in the P4Info are refused before anything is sent.
// An error from the switch wraps its gRPC status, so status.Code(err)
// tells NOT_FOUND, ALREADY_EXISTS, ... apart; for a write it is the code
// of the failed update (P4Runtime answers a failed batch with UNKNOWN and
// one p4.v1.Error per update in the details, which this package unpacks).
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"
	"os"
)

// digestBuffer is how many digest lists wait for the reader of Digests
// before further ones are dropped (and counted).
const digestBuffer = 1024

// Session is a primary controller's connection to one device.
type Session struct {
	conn     *grpc.ClientConn
	client   p4v1.P4RuntimeClient
	deviceID uint64
	election *p4v1.Uint128
	info     *p4configv1.P4Info

	// The stream: one goroutine (receive) reads it for the session's
	// life; sends, from the caller's goroutines and from receive (acks),
	// are serialised by sendMu, as gRPC allows one sender at a time.
	stream    p4v1.P4Runtime_StreamChannelClient
	streamCtx context.Context
	cancel    context.CancelFunc
	sendMu    sync.Mutex
	recvDone  chan struct{} // closed when receive has returned
	streamErr error         // why the stream ended, if not by Close; set before recvDone closes

	digests chan *p4v1.DigestList // closed when receive returns
	dropped atomic.Uint64

	closeOnce sync.Once
	closeErr  error
}

// Dial connects to the P4Runtime server at addr and becomes the primary
// controller of device deviceID with election ID electionID (> 0). From
// then until Close, the session reads the stream: see Digests.
func Dial(ctx context.Context, addr string, deviceID, electionID uint64) (*Session, error) {
	if electionID == 0 {
		return nil, errors.New("controlplane: election ID 0 is reserved for backups")
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("controlplane: %s: %w", addr, err)
	}
	s := &Session{conn: conn, client: p4v1.NewP4RuntimeClient(conn), deviceID: deviceID,
		election: &p4v1.Uint128{Low: electionID}, digests: make(chan *p4v1.DigestList, digestBuffer)}
	// The stream lives as long as the session, not as the caller's ctx.
	s.streamCtx, s.cancel = context.WithCancel(context.Background())
	if s.stream, err = s.client.StreamChannel(s.streamCtx); err != nil {
		s.Close()
		return nil, fmt.Errorf("controlplane: %s: stream: %w", addr, err)
	}
	req := &p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{
		Arbitration: &p4v1.MasterArbitrationUpdate{DeviceId: deviceID, ElectionId: s.election}}}
	if err := s.send(req); err != nil {
		s.Close()
		return nil, fmt.Errorf("controlplane: %s: arbitration: %w", addr, err)
	}
	arbitrated := make(chan error, 1) // buffered: Dial may have given up waiting
	s.recvDone = make(chan struct{})
	go s.receive(arbitrated)
	select {
	case err = <-arbitrated:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("controlplane: %s: arbitration: %w", addr, err)
	}
	return s, nil
}

// receive reads the stream until it ends: first the answer to the
// arbitration request, reported on arbitrated, then, if this session is
// primary, digest lists for Digests. Other messages (packets in, later
// arbitration updates, stream errors) are not used and are discarded.
func (s *Session) receive(arbitrated chan<- error) {
	defer close(s.recvDone)
	defer close(s.digests)
	resp, err := s.stream.Recv()
	switch {
	case err != nil:
		arbitrated <- err
		return
	case resp.GetArbitration() == nil:
		arbitrated <- fmt.Errorf("unexpected first message %v", resp)
		return
	case resp.GetArbitration().GetStatus().GetCode() != int32(codes.OK):
		arbitrated <- fmt.Errorf("not primary: %s", resp.GetArbitration().GetStatus().GetMessage())
		return
	}
	arbitrated <- nil
	for {
		resp, err := s.stream.Recv()
		if err != nil {
			if s.streamCtx.Err() == nil { // not ended by Close
				s.streamErr = fmt.Errorf("controlplane: stream: %w", err)
			}
			return
		}
		if d := resp.GetDigest(); d != nil && s.deliver(d) {
			s.ack(d)
		}
	}
}

// send sends one message on the stream.
func (s *Session) send(req *p4v1.StreamMessageRequest) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	return s.stream.Send(req)
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

// Close ends the session: the stream (Digests' channel is closed once the
// goroutine reading it has returned) and the connection. It is safe to
// call more than once; later calls return the first's result.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		s.cancel()
		if s.recvDone != nil {
			<-s.recvDone
		}
		s.closeErr = s.conn.Close()
	})
	return s.closeErr
}

// SetPipeline installs a program: its P4Info and the target's device
// configuration (for BMv2, the compiled JSON).
func (s *Session) SetPipeline(ctx context.Context, info *p4configv1.P4Info, deviceConfig []byte) error {
	_, err := s.client.SetForwardingPipelineConfig(ctx, &p4v1.SetForwardingPipelineConfigRequest{
		DeviceId:   s.deviceID,
		ElectionId: s.election,
		Action:     p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT,
		Config:     &p4v1.ForwardingPipelineConfig{P4Info: info, P4DeviceConfig: deviceConfig},
	})
	if err != nil {
		return fmt.Errorf("controlplane: set pipeline: %w", err)
	}
	s.info = info
	return nil
}

// write sends one update. The error, if any, carries the update's own
// status (see the package comment) and no prefix: callers add theirs.
func (s *Session) write(ctx context.Context, typ p4v1.Update_Type, e *p4v1.Entity) error {
	_, err := s.client.Write(ctx, &p4v1.WriteRequest{
		DeviceId: s.deviceID, ElectionId: s.election,
		Updates: []*p4v1.Update{{Type: typ, Entity: e}},
	})
	return updateError(err)
}

// upsert inserts e, or modifies it if it already exists.
func (s *Session) upsert(ctx context.Context, e *p4v1.Entity) error {
	err := s.write(ctx, p4v1.Update_INSERT, e)
	if status.Code(err) == codes.AlreadyExists {
		err = s.write(ctx, p4v1.Update_MODIFY, e)
	}
	return err
}

// updateError turns a failed Write's UNKNOWN status into the status of
// the first update that failed, from the p4.v1.Error details.
func updateError(err error) error {
	st, ok := status.FromError(err)
	if err == nil || !ok || st.Code() != codes.Unknown {
		return err
	}
	for _, d := range st.Details() {
		if e, ok := d.(*p4v1.Error); ok && codes.Code(e.CanonicalCode) != codes.OK {
			return status.Error(codes.Code(e.CanonicalCode), e.Message)
		}
	}
	return err
}

// read reads what matches e (a wildcard or one entity), calling each for
// every entity of the answer.
func (s *Session) read(ctx context.Context, e *p4v1.Entity, each func(*p4v1.Entity)) error {
	rc, err := s.client.Read(ctx, &p4v1.ReadRequest{DeviceId: s.deviceID, Entities: []*p4v1.Entity{e}})
	if err != nil {
		return err
	}
	for {
		resp, err := rc.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		for _, x := range resp.Entities {
			each(x)
		}
	}
}

// pipeline is the P4Info, or an error when no pipeline is set.
func (s *Session) pipeline() (*p4configv1.P4Info, error) {
	if s.info == nil {
		return nil, errors.New("controlplane: no pipeline set")
	}
	return s.info, nil
}

// find is the first of xs for which is holds, or nil.
func find[T any](xs []*T, is func(*T) bool) *T {
	for _, x := range xs {
		if is(x) {
			return x
		}
	}
	return nil
}

// lookup is the entity of the pipeline's P4Info that goes by name, among
// those list gives; kind names the list in the error when there is none.
func lookup[T any](s *Session, kind, name string, list func(*p4configv1.P4Info) []*T,
	preamble func(*T) *p4configv1.Preamble) (*T, error) {
	info, err := s.pipeline()
	if err != nil {
		return nil, err
	}
	x := find(list(info), func(x *T) bool { return named(preamble(x), name) })
	if x == nil {
		return nil, fmt.Errorf("controlplane: no %s %q in the P4Info", kind, name)
	}
	return x, nil
}

// named reports whether an entity goes by name, in full or by its alias.
func named(p *p4configv1.Preamble, name string) bool { return p.Name == name || p.Alias == name }

// ReadPipeline reads what SetPipeline takes from the files p4c-bm2-ss
// writes: the P4Info in text format and the BMv2 JSON.
func ReadPipeline(p4infoPath, jsonPath string) (*p4configv1.P4Info, []byte, error) {
	text, err := os.ReadFile(p4infoPath)
	if err != nil {
		return nil, nil, err
	}
	info := &p4configv1.P4Info{}
	if err := (prototext.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(text, info); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", p4infoPath, err)
	}
	device, err := os.ReadFile(jsonPath)
	if err != nil {
		return nil, nil, err
	}
	return info, device, nil
}
