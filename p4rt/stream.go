package p4rt

import (
	"errors"
	"io"
	"sync"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
)

func toV1(ms []proto.Message) []protoadapt.MessageV1 {
	out := make([]protoadapt.MessageV1, len(ms))
	for i, m := range ms {
		out[i] = protoadapt.MessageV1Of(m)
	}
	return out
}

// outBuffer is how many messages wait for a slow controller's stream
// before packet-ins and digest lists to it are dropped (and counted).
const outBuffer = 4096

// conn is one controller's stream.
type conn struct {
	out      chan *p4v1.StreamMessageResponse
	done     chan struct{}
	role     string
	election *p4v1.Uint128 // nil: a backup for good
	joined   bool
	// peer is the connection the stream came on: writes with the
	// primary's election ID must come on it, or with its certificate.
	peer *peerConn
}

// send queues a message for the controller without blocking; a full
// buffer drops it.
func (c *conn) send(m *p4v1.StreamMessageResponse) bool {
	select {
	case c.out <- m:
		return true
	default:
		return false
	}
}

// arbiter elects the primary controller of each role, as the spec's
// "Rules for Handling MasterArbitrationUpdate Messages" say: a controller
// whose election ID is at least the highest ever seen for its role
// becomes (or stays) primary; when the primary leaves or steps down the
// role has none until one comes with such an ID.
type arbiter struct {
	device uint64
	policy *Policy
	mu     sync.Mutex
	roles  map[string]*roleState
}

type roleState struct {
	conns   []*conn
	primary *conn
	past    *p4v1.Uint128 // the highest election ID seen
}

func newArbiter(device uint64, policy *Policy) *arbiter {
	return &arbiter{device: device, policy: policy, roles: map[string]*roleState{}}
}

// errZeroElection refuses an election ID of 0. The spec gives a
// controller without an election ID the lowest rank, a backup that
// never becomes primary; 0 set as a value would rank above it and could
// make a primary of a client that meant to give none. Stratum refuses it
// (INVALID_ARGUMENT, "Invalid election ID"), as this server does, in
// arbitration, writes and pipeline changes alike.
var errZeroElection = errorf(codes.InvalidArgument, "election ID 0 is no controller's: give 1 or more, or none at all to follow as a backup that never becomes primary")

// isZero reports whether an election ID is given and is 0.
func isZero(e *p4v1.Uint128) bool {
	return e != nil && e.High == 0 && e.Low == 0
}

func cmp128(a, b *p4v1.Uint128) int {
	switch {
	case a.High != b.High:
		if a.High < b.High {
			return -1
		}
		return 1
	case a.Low != b.Low:
		if a.Low < b.Low {
			return -1
		}
		return 1
	}
	return 0
}

// mayWrite checks that a request (a Write or a pipeline change) with
// role and election comes from role's primary: the spec's NOT_FOUND for
// a role no controller ever arbitrated for (the default role is always
// known), PERMISSION_DENIED for an election ID that is not the
// primary's. The spec trusts a client not to give another's election
// ID; this server does not: the request must also come over the
// connection of the primary's stream or, under mutual TLS, from a
// connection authenticated as the same identity, so that a backup (or
// anyone who reads the ID off an arbitration notice) cannot write in
// the primary's name.
func (a *arbiter) mayWrite(role string, election *p4v1.Uint128, from *peerConn) error {
	if from == nil {
		return errorf(codes.Internal, "%v", errNoConn)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.roles[role]
	if r == nil && role != "" {
		return errorf(codes.NotFound, "role %q: no controller has arbitrated for it on device %d", role, a.device)
	}
	if isZero(election) {
		return errZeroElection
	}
	if election == nil || r == nil || r.primary == nil || cmp128(r.primary.election, election) != 0 {
		return errorf(codes.PermissionDenied, "not the primary controller of device %d, role %q", a.device, role)
	}
	p := r.primary.peer
	if p != from && !(p != nil && p.identity.same(from.identity)) {
		return errorf(codes.PermissionDenied, "election ID %d,%d is the primary's of device %d, role %q, but this request came neither over the primary's connection nor with its client certificate",
			election.High, election.Low, a.device, role)
	}
	return nil
}

// holdsPrimary reports whether a request from pc may be a primary's: pc
// carries a primary's stream (of any role), or is authenticated as the
// identity of one, or is the switch's own.
func (a *arbiter) holdsPrimary(pc *peerConn) bool {
	if pc == nil || pc.local {
		return true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.roles {
		if p := r.primary; p != nil && (p.peer == pc || p.peer != nil && p.peer.identity.same(pc.identity)) {
			return true
		}
	}
	return false
}

// isPrimaryStream reports whether c is its role's primary.
func (a *arbiter) isPrimaryStream(c *conn) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.roles[c.role]
	return r != nil && r.primary == c
}

// primaries are the primary controllers, one per role that has one.
func (a *arbiter) primaries() []*conn {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []*conn
	for _, r := range a.roles {
		if r.primary != nil {
			out = append(out, r.primary)
		}
	}
	return out
}

// arbitrate takes a MasterArbitrationUpdate from c. An error ends the
// stream with its status.
func (a *arbiter) arbitrate(c *conn, m *p4v1.MasterArbitrationUpdate) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	role := m.GetRole().GetName()
	if m.GetRole().GetConfig() != nil {
		return errorf(codes.InvalidArgument, "role %q: role configurations are not supported by this server", role)
	}
	if c.joined {
		if m.DeviceId != a.device {
			return errorf(codes.FailedPrecondition, "device %d: this stream is device %d's", m.DeviceId, a.device)
		}
		if role != c.role {
			return errorf(codes.FailedPrecondition, "role %q: this stream is role %q's; open another stream to change role", role, c.role)
		}
	} else if m.DeviceId != a.device {
		return errorf(codes.NotFound, "no device %d here (this server serves device %d)", m.DeviceId, a.device)
	}
	if isZero(m.ElectionId) {
		return errZeroElection
	}
	// Under a policy only the identities it names may be primary: the
	// others may follow as backups for good, without an election ID,
	// and their IDs never count towards the highest seen, so that they
	// can neither take the role nor lock the controllers out of it.
	if m.ElectionId != nil && !a.policy.mayWrite(c.peer) {
		return errorf(codes.PermissionDenied, "client %s may not be primary under the policy %s: arbitrate without an election ID to follow as a backup",
			c.peer.identityText(), a.policy.Path)
	}
	r := a.roles[role]
	if r == nil {
		r = &roleState{}
		a.roles[role] = r
	}
	if m.ElectionId != nil {
		for _, o := range r.conns {
			if o != c && o.election != nil && cmp128(o.election, m.ElectionId) == 0 {
				return errorf(codes.InvalidArgument, "election ID %d,%d is another live controller's", m.ElectionId.High, m.ElectionId.Low)
			}
		}
	}
	if !c.joined {
		c.joined, c.role = true, role
		r.conns = append(r.conns, c)
	}
	c.election = nil
	if m.ElectionId != nil {
		c.election = proto.Clone(m.ElectionId).(*p4v1.Uint128)
	}
	wasPrimary := r.primary == c
	if c.election != nil && (r.past == nil || cmp128(c.election, r.past) >= 0) {
		r.primary, r.past = c, c.election
		a.notifyAll(role, r)
		return nil
	}
	if wasPrimary {
		r.primary = nil
		a.notifyAll(role, r)
		return nil
	}
	a.notify(role, r, c)
	return nil
}

// leave removes a controller whose stream ended.
func (a *arbiter) leave(c *conn) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !c.joined {
		return
	}
	r := a.roles[c.role]
	for i, o := range r.conns {
		if o == c {
			r.conns = append(r.conns[:i], r.conns[i+1:]...)
			break
		}
	}
	if r.primary == c {
		r.primary = nil
		a.notifyAll(c.role, r)
	}
}

func (a *arbiter) notifyAll(role string, r *roleState) {
	for _, c := range r.conns {
		a.notify(role, r, c)
	}
}

// notify tells c who is primary (spec "Client Arbitration
// Notifications"): OK if it is, ALREADY_EXISTS if another is, NOT_FOUND
// if none is; the election ID is the highest seen.
func (a *arbiter) notify(role string, r *roleState, c *conn) {
	m := &p4v1.MasterArbitrationUpdate{DeviceId: a.device}
	if role != "" {
		m.Role = &p4v1.Role{Name: role}
	}
	if r.past != nil {
		m.ElectionId = proto.Clone(r.past).(*p4v1.Uint128)
	}
	switch {
	case r.primary == c:
		m.Status = &status.Status{Code: int32(codes.OK), Message: "Is primary"}
	case r.primary != nil:
		m.Status = &status.Status{Code: int32(codes.AlreadyExists), Message: "Is backup"}
	default:
		m.Status = &status.Status{Code: int32(codes.NotFound), Message: "No primary"}
	}
	c.send(&p4v1.StreamMessageResponse{Update: &p4v1.StreamMessageResponse_Arbitration{Arbitration: m}})
}

// StreamChannel serves one controller's stream: arbitration first, then
// packet-outs and digest acks from it, packet-ins, digest lists and
// arbitration notices to it.
//
// At most Config.MaxStreams streams are open at once (PI's 16 by
// default), and MaxStreamsPerIdentity of one client identity under
// mutual TLS: one past them ends at once with RESOURCE_EXHAUSTED, as the
// spec has a stream past the supported limit end, so that a client
// opening streams without end costs the switch nothing and leaves room
// for other controllers. Under a policy, only the identities it names
// open streams at all (tap).
func (s *Server) StreamChannel(stream p4v1.P4Runtime_StreamChannelServer) error {
	pc := connOf(stream.Context())
	release, err := s.openStream(pc)
	if err != nil {
		return err
	}
	defer release()
	c := &conn{out: make(chan *p4v1.StreamMessageResponse, outBuffer), done: make(chan struct{}), peer: pc}
	sendErr := make(chan error, 1)
	go func() {
		for {
			select {
			case m := <-c.out:
				if err := stream.Send(m); err != nil {
					sendErr <- err
					return
				}
			case <-c.done:
				return
			}
		}
	}()
	defer close(c.done)
	defer s.arb.leave(c)
	recvd := make(chan *p4v1.StreamMessageRequest)
	recvErr := make(chan error, 1)
	go func() {
		for {
			m, err := stream.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			select {
			case recvd <- m:
			case <-c.done:
				return
			}
		}
	}()
	for {
		var m *p4v1.StreamMessageRequest
		select {
		case m = <-recvd:
		case err := <-recvErr:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case err := <-sendErr:
			return err
		}
		switch x := m.Update.(type) {
		case *p4v1.StreamMessageRequest_Arbitration:
			if err := s.arb.arbitrate(c, x.Arbitration); err != nil {
				return err
			}
		case *p4v1.StreamMessageRequest_Packet:
			if err := s.packetOut(c, x.Packet); err != nil {
				c.send(streamError(err, &p4v1.StreamError{Details: &p4v1.StreamError_PacketOut{PacketOut: &p4v1.PacketOutError{PacketOut: x.Packet}}}))
			}
		case *p4v1.StreamMessageRequest_DigestAck:
			if !c.joined {
				c.send(streamError(errorf(codes.FailedPrecondition, "arbitrate first"), &p4v1.StreamError{}))
				continue
			}
			s.dig.ack(x.DigestAck)
		default:
			c.send(streamError(errorf(codes.Unimplemented, "stream message %T", m.Update), &p4v1.StreamError{}))
		}
	}
}

// openStream counts a stream of pc's, or refuses it past the caps;
// release gives its place back.
func (s *Server) openStream(pc *peerConn) (release func(), err error) {
	key := ""
	if pc != nil && !pc.local {
		key = pc.identity.key()
	}
	s.streamsMu.Lock()
	defer s.streamsMu.Unlock()
	switch {
	case s.streams >= s.lim.maxStreams:
		return nil, errorf(codes.ResourceExhausted, "%d streams are open, the most this server keeps: close one first", s.lim.maxStreams)
	case key != "" && s.streamsBy[key] >= s.lim.streamsPerID:
		return nil, errorf(codes.ResourceExhausted, "client %s holds %d streams, the most one identity may (--grpc-max-streams-per-identity): close one first",
			pc.identity, s.lim.streamsPerID)
	}
	s.streams++
	if key != "" {
		s.streamsBy[key]++
	}
	return func() {
		s.streamsMu.Lock()
		defer s.streamsMu.Unlock()
		s.streams--
		if key != "" {
			if s.streamsBy[key]--; s.streamsBy[key] == 0 {
				delete(s.streamsBy, key)
			}
		}
	}, nil
}

// streamError reports a failed stream message back to its sender.
func streamError(err error, e *p4v1.StreamError) *p4v1.StreamMessageResponse {
	st, _ := statusOf(err)
	e.CanonicalCode, e.Message = int32(st.Code()), st.Message()
	return &p4v1.StreamMessageResponse{Update: &p4v1.StreamMessageResponse_Error{Error: e}}
}
