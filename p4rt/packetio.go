package p4rt

import (
	"math/big"
	"sync"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/p4rcm/p4rcm/v1model"
)

func statusOf(err error) (*status.Status, bool) { return status.FromError(err) }

// packetOut sends a controller's packet into the switch at the CPU port,
// its packet_out metadata packed in front of the payload as the
// program's controller header.
func (s *Server) packetOut(c *conn, po *p4v1.PacketOut) error {
	switch {
	case !c.joined:
		return errorf(codes.FailedPrecondition, "arbitrate first")
	case !s.arb.isPrimaryStream(c):
		return errorf(codes.PermissionDenied, "only the primary controller sends packets")
	}
	p := s.cur.Load()
	if p == nil {
		return errorf(codes.FailedPrecondition, "no pipeline set")
	}
	frame := po.Payload
	if h := p.packetOut; h != nil {
		hdr, err := h.pack(po.Metadata)
		if err != nil {
			return err
		}
		frame = append(hdr, po.Payload...)
	} else if len(po.Metadata) > 0 {
		return errorf(codes.InvalidArgument, "packet-out metadata, but the P4Info has no packet_out header")
	}
	if s.cfg.PacketOut == nil {
		return errorf(codes.Unimplemented, "this switch has no CPU port")
	}
	if err := s.cfg.PacketOut(p.sw, frame); err != nil {
		return errorf(codes.Internal, "%v", err)
	}
	return nil
}

// pack builds a controller header from metadata: every field once, in
// the P4Info's order, big-endian, padded to whole bytes.
func (h *ctrlHeader) pack(md []*p4v1.PacketMetadata) ([]byte, error) {
	vals := map[uint32][]byte{}
	for _, m := range md {
		if vals[m.MetadataId] != nil {
			return nil, errorf(codes.InvalidArgument, "packet-out metadata %d given twice", m.MetadataId)
		}
		vals[m.MetadataId] = m.Value
	}
	n := new(big.Int)
	for _, f := range h.fields {
		v, ok := vals[f.Id]
		if !ok {
			return nil, errorf(codes.InvalidArgument, "packet-out metadata %s is missing", f.Name)
		}
		c, err := fit(v, int(f.Bitwidth), "packet-out metadata "+f.Name)
		if err != nil {
			return nil, err
		}
		delete(vals, f.Id)
		n.Lsh(n, uint(f.Bitwidth)).Or(n, new(big.Int).SetBytes(c))
	}
	for id := range vals {
		return nil, errorf(codes.InvalidArgument, "packet-out metadata ID %d is not in the packet_out header", id)
	}
	size := (h.bits + 7) / 8
	n.Lsh(n, uint(size*8-h.bits))
	return padded(n.Bytes(), size), nil
}

// unpack splits a frame sent to the CPU port into packet_in metadata and
// payload; a frame shorter than the header is all payload.
func (h *ctrlHeader) unpack(frame []byte) ([]*p4v1.PacketMetadata, []byte) {
	size := (h.bits + 7) / 8
	if len(frame) < size {
		return nil, frame
	}
	n := new(big.Int).SetBytes(frame[:size])
	n.Rsh(n, uint(size*8-h.bits))
	var md []*p4v1.PacketMetadata
	for i := len(h.fields) - 1; i >= 0; i-- {
		f := h.fields[i]
		mask := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(f.Bitwidth)), big.NewInt(1))
		v := new(big.Int).And(n, mask)
		n.Rsh(n, uint(f.Bitwidth))
		b := v.Bytes()
		if len(b) == 0 {
			b = []byte{0}
		}
		md = append([]*p4v1.PacketMetadata{{MetadataId: f.Id, Value: b}}, md...)
	}
	return md, frame[size:]
}

// PacketIn delivers a frame the switch sent to its CPU port to the
// primary controllers, with the packet_in header's fields as metadata.
// It never blocks: a controller that does not keep up loses packet-ins
// (PacketInDrops counts them).
func (s *Server) PacketIn(frame []byte) {
	p := s.cur.Load()
	if p == nil {
		return
	}
	pi := &p4v1.PacketIn{Payload: append([]byte(nil), frame...)}
	if h := p.packetIn; h != nil {
		pi.Metadata, pi.Payload = h.unpack(pi.Payload)
	}
	m := &p4v1.StreamMessageResponse{Update: &p4v1.StreamMessageResponse_Packet{Packet: pi}}
	for _, c := range s.arb.primaries() {
		if c.send(m) {
			s.packetIns.Add(1)
		} else {
			s.packetInDrops.Add(1)
		}
	}
}

// PacketInDrops is how many packet-ins were dropped because a
// controller's stream was full.
func (s *Server) PacketInDrops() uint64 { return s.packetInDrops.Load() }

// digester turns the switch's digests into digest lists as each digest's
// configuration says: a list goes when it holds max_list_size digests or
// when its first has waited max_timeout_ns (0: at once); data sent and
// not acknowledged is not sent again until ack_timeout_ns has passed.
type digester struct {
	arb *arbiter
	mu  sync.Mutex
	p   *pipeline
	// per digest ID
	cfg     map[uint32]*p4v1.DigestEntry_Config
	pending map[uint32]*pendingList
	nextID  map[uint32]uint64
	// unacked holds each sent digest's data until its list is acked or
	// its ack timeout passes.
	unacked map[uint32]map[string]time.Time
	lists   map[[2]uint64][]string
	dropped uint64
}

type pendingList struct {
	data  []*p4v1.P4Data
	keys  []string
	timer *time.Timer
}

func newDigester(arb *arbiter) *digester {
	d := &digester{arb: arb}
	d.reset(nil)
	return d
}

// reset forgets everything of the previous pipeline and takes p's
// digest configurations.
func (d *digester) reset(p *pipeline) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, pl := range d.pending {
		if pl.timer != nil {
			pl.timer.Stop()
		}
	}
	d.p = p
	d.cfg, d.pending, d.nextID = map[uint32]*p4v1.DigestEntry_Config{}, map[uint32]*pendingList{}, map[uint32]uint64{}
	d.unacked, d.lists = map[uint32]map[string]time.Time{}, map[[2]uint64][]string{}
	if p != nil {
		for id, e := range p.st.digests {
			d.cfg[id] = e.Config
		}
	}
}

// configure sets (or, with nil, removes) a digest's configuration, if p
// is the committed pipeline.
func (d *digester) configure(p *pipeline, id uint32, c *p4v1.DigestEntry_Config) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p != d.p {
		return
	}
	if c == nil {
		delete(d.cfg, id)
		if pl := d.pending[id]; pl != nil && pl.timer != nil {
			pl.timer.Stop()
		}
		delete(d.pending, id)
		return
	}
	d.cfg[id] = c
}

// add takes one digest from pipeline p's switch (called with the
// switch's lock held: it must not block).
func (d *digester) add(p *pipeline, dg v1model.Digest) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p == nil || p != d.p {
		return
	}
	dd := p.digestByList[dg.List]
	if dd == nil {
		return
	}
	c := d.cfg[dd.id]
	if c == nil {
		return // not enabled by a controller
	}
	data := dd.data(dg.Values)
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(data)
	key := string(b)
	now := time.Now()
	if c.AckTimeoutNs > 0 {
		if t, ok := d.unacked[dd.id][key]; ok && now.Before(t) {
			return // sent, not acknowledged yet: a repeat
		}
	}
	pl := d.pending[dd.id]
	if pl == nil {
		pl = &pendingList{}
		d.pending[dd.id] = pl
	}
	for _, k := range pl.keys {
		if k == key && c.AckTimeoutNs > 0 {
			return // already in the list being built
		}
	}
	pl.data, pl.keys = append(pl.data, data), append(pl.keys, key)
	switch {
	case c.MaxTimeoutNs == 0 || (c.MaxListSize > 0 && len(pl.data) >= int(c.MaxListSize)):
		d.flush(dd.id)
	case pl.timer == nil:
		id := dd.id
		pl.timer = time.AfterFunc(time.Duration(c.MaxTimeoutNs), func() {
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.pending[id] == pl {
				d.flush(id)
			}
		})
	}
}

// flush sends digest id's pending list to the primary controllers.
func (d *digester) flush(id uint32) {
	pl := d.pending[id]
	delete(d.pending, id)
	if pl == nil || len(pl.data) == 0 {
		return
	}
	if pl.timer != nil {
		pl.timer.Stop()
	}
	c := d.cfg[id]
	d.nextID[id]++
	listID := d.nextID[id]
	if c.AckTimeoutNs > 0 {
		until := time.Now().Add(time.Duration(c.AckTimeoutNs))
		if d.unacked[id] == nil {
			d.unacked[id] = map[string]time.Time{}
		}
		for _, k := range pl.keys {
			d.unacked[id][k] = until
		}
		d.lists[[2]uint64{uint64(id), listID}] = pl.keys
	}
	m := &p4v1.StreamMessageResponse{Update: &p4v1.StreamMessageResponse_Digest{Digest: &p4v1.DigestList{
		DigestId: id, ListId: listID, Data: pl.data, Timestamp: time.Now().UnixNano()}}}
	for _, cn := range d.arb.primaries() {
		if !cn.send(m) {
			d.dropped++
		}
	}
}

// ack releases an acknowledged list's data: it may be sent again.
func (d *digester) ack(a *p4v1.DigestListAck) {
	d.mu.Lock()
	defer d.mu.Unlock()
	k := [2]uint64{uint64(a.DigestId), a.ListId}
	for _, key := range d.lists[k] {
		delete(d.unacked[a.DigestId], key)
	}
	delete(d.lists, k)
}

// data is a digest's values as P4Data: a struct of bit strings (members
// over 64 bits joined from the target's parts), or one bit string.
func (dd *digestDesc) data(parts []uint64) *p4v1.P4Data {
	var members []*p4v1.P4Data
	for _, w := range dd.members {
		ws := wordWidths(w)
		members = append(members, &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: joinWords(parts[:len(ws)], ws)}})
		parts = parts[len(ws):]
	}
	if len(members) == 1 && !dd.isStruct {
		return members[0]
	}
	return &p4v1.P4Data{Data: &p4v1.P4Data_Struct{Struct: &p4v1.P4StructLike{Members: members}}}
}
