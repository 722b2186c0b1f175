package p4rt_test

import (
	"context"
	"encoding/binary"
	"net"
	"sync"
	"testing"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/p4rcm/p4rcm/p4rt"
	"github.com/p4rcm/p4rcm/v1model"
)

// cpuPort is runtime.p4's CPU port.
const cpuPort = 64

// dataType is the EtherType the tests put in runtime.p4's value set.
const dataType = 0x88b5

// serveWith starts a server with cfg on a loopback port and returns a
// client of it.
func serveWith(t testing.TB, cfg p4rt.Config) (*p4rt.Server, p4v1.P4RuntimeClient, *grpc.ClientConn) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := p4rt.New(cfg)
	g := srv.NewGRPCServer()
	go func() { _ = g.Serve(srv.Listener(lis)) }()
	t.Cleanup(g.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return srv, p4v1.NewP4RuntimeClient(conn), conn
}

// sent is a frame the switch sent, and the port it left by.
type sent struct {
	port  int
	frame []byte
}

// rig is a server running runtime.p4 with a primary controller, and the
// switch the server committed, which the test feeds frames. Frames the
// switch sends to the CPU port go to the server as packet-ins, as
// p4switch does; a controller's packet-outs enter the switch on it.
type rig struct {
	t    *testing.T
	srv  *p4rt.Server
	c    p4v1.P4RuntimeClient
	conn *grpc.ClientConn
	ct   *controller
	p    program

	mu  sync.Mutex
	sw  *v1model.Switch
	out []sent
}

// newRig is a rig with runtime.p4 set by a primary controller.
func newRig(t *testing.T) *rig {
	t.Helper()
	r := startRig(t)
	r.ct = connect(t, r.c, 1)
	if code, _ := r.ct.arbitration(); code != codes.OK {
		t.Fatalf("the only controller: %v, want OK", code)
	}
	setPipeline(t, r.c, r.ct, r.p, 1)
	return r
}

// startRig is a rig with no controller and no pipeline yet.
func startRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{t: t, p: loadProgram(t, "runtime")}
	r.srv, r.c, r.conn = serveWith(t, p4rt.Config{DeviceID: device,
		Commit: func(sw *v1model.Switch) { r.mu.Lock(); r.sw = sw; r.mu.Unlock() },
		PacketOut: func(sw *v1model.Switch, frame []byte) error {
			return sw.Process(cpuPort, frame, r.emit)
		}})
	return r
}

func (r *rig) emit(port int, frame []byte) {
	if port == cpuPort {
		r.srv.PacketIn(frame)
		return
	}
	r.mu.Lock()
	r.out = append(r.out, sent{port, append([]byte(nil), frame...)})
	r.mu.Unlock()
}

// send runs a frame received on port through the switch and returns
// what left by the front-panel ports.
func (r *rig) send(port int, frame []byte) []sent {
	r.t.Helper()
	r.mu.Lock()
	sw := r.sw
	r.out = nil
	r.mu.Unlock()
	if err := sw.Process(port, frame, r.emit); err != nil {
		r.t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out
}

// id is the P4Info ID of the object named name in runtime.p4.
func (r *rig) id(name string) uint32 { return id(r.t, r.p.info, name) }

// id is the P4Info ID of the object named name, whatever its kind: it
// looks through every list of the P4Info whose messages have a preamble.
func id(t testing.TB, info *p4configv1.P4Info, name string) uint32 {
	t.Helper()
	var found uint32
	info.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if !fd.IsList() || fd.Message() == nil || fd.Message().Fields().ByName("preamble") == nil {
			return true
		}
		preamble := fd.Message().Fields().ByName("preamble")
		for i, l := 0, v.List(); i < l.Len(); i++ {
			if p := l.Get(i).Message().Get(preamble).Message().Interface().(*p4configv1.Preamble); p.Name == name {
				found = p.Id
				return false
			}
		}
		return true
	})
	if found == 0 {
		t.Fatalf("no %s in the P4Info", name)
	}
	return found
}

// write sends updates as the rig's primary and returns each one's code.
func (r *rig) write(updates ...*p4v1.Update) []codes.Code {
	r.t.Helper()
	return write(r.t, r.c, r.ct, updates...)
}

// mustWrite sends updates that must all succeed.
func (r *rig) mustWrite(updates ...*p4v1.Update) {
	r.t.Helper()
	for i, code := range r.write(updates...) {
		if code != codes.OK {
			r.t.Fatalf("update %d (%v): %v", i, updates[i], code)
		}
	}
}

func (r *rig) read(entities ...proto.Message) []*p4v1.Entity {
	r.t.Helper()
	var es []*p4v1.Entity
	for _, e := range entities {
		es = append(es, entity(e))
	}
	return readAll(r.t, r.c, es...)
}

// allowData puts dataType in the value set the parser picks data by.
func (r *rig) allowData() {
	r.t.Helper()
	r.mustWrite(r.allowDataUpdate())
}

func (r *rig) allowDataUpdate() *p4v1.Update {
	return mod(&p4v1.ValueSetEntry{ValueSetId: r.id("ParseR.data_types"),
		Members: []*p4v1.ValueSetMember{{Match: []*p4v1.FieldMatch{exact(1, dataType>>8, dataType&0xff)}}}})
}

// entity wraps any entity message in a p4v1.Entity.
func entity(m proto.Message) *p4v1.Entity {
	switch x := m.(type) {
	case *p4v1.Entity:
		return x
	case *p4v1.TableEntry:
		return &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: x}}
	case *p4v1.ActionProfileMember:
		return &p4v1.Entity{Entity: &p4v1.Entity_ActionProfileMember{ActionProfileMember: x}}
	case *p4v1.ActionProfileGroup:
		return &p4v1.Entity{Entity: &p4v1.Entity_ActionProfileGroup{ActionProfileGroup: x}}
	case *p4v1.CounterEntry:
		return &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: x}}
	case *p4v1.DirectCounterEntry:
		return &p4v1.Entity{Entity: &p4v1.Entity_DirectCounterEntry{DirectCounterEntry: x}}
	case *p4v1.MeterEntry:
		return &p4v1.Entity{Entity: &p4v1.Entity_MeterEntry{MeterEntry: x}}
	case *p4v1.DirectMeterEntry:
		return &p4v1.Entity{Entity: &p4v1.Entity_DirectMeterEntry{DirectMeterEntry: x}}
	case *p4v1.RegisterEntry:
		return &p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: x}}
	case *p4v1.CloneSessionEntry:
		return &p4v1.Entity{Entity: &p4v1.Entity_PacketReplicationEngineEntry{PacketReplicationEngineEntry: &p4v1.PacketReplicationEngineEntry{
			Type: &p4v1.PacketReplicationEngineEntry_CloneSessionEntry{CloneSessionEntry: x}}}}
	case *p4v1.MulticastGroupEntry:
		return &p4v1.Entity{Entity: &p4v1.Entity_PacketReplicationEngineEntry{PacketReplicationEngineEntry: &p4v1.PacketReplicationEngineEntry{
			Type: &p4v1.PacketReplicationEngineEntry_MulticastGroupEntry{MulticastGroupEntry: x}}}}
	case *p4v1.DigestEntry:
		return &p4v1.Entity{Entity: &p4v1.Entity_DigestEntry{DigestEntry: x}}
	case *p4v1.ValueSetEntry:
		return &p4v1.Entity{Entity: &p4v1.Entity_ValueSetEntry{ValueSetEntry: x}}
	}
	panic("entity: not an entity message")
}

func ins(m proto.Message) *p4v1.Update {
	return &p4v1.Update{Type: p4v1.Update_INSERT, Entity: entity(m)}
}
func mod(m proto.Message) *p4v1.Update {
	return &p4v1.Update{Type: p4v1.Update_MODIFY, Entity: entity(m)}
}
func del(m proto.Message) *p4v1.Update {
	return &p4v1.Update{Type: p4v1.Update_DELETE, Entity: entity(m)}
}

// Offsets in runtime.p4's data header, after the Ethernet header.
const (
	offKey, offPort, offOp, offColorDirect, offColorIndirect, offCopy, offReg = 0, 4, 6, 7, 8, 9, 10
	dataLen                                                                   = 14
)

// dataFrame is a 60-byte frame with runtime.p4's data header.
func dataFrame(src byte, key uint32, port uint16, op byte) []byte {
	f := make([]byte, 60)
	copy(f, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, src})
	binary.BigEndian.PutUint16(f[12:], dataType)
	d := f[14:]
	binary.BigEndian.PutUint32(d[offKey:], key)
	binary.BigEndian.PutUint16(d[offPort:], port)
	d[offOp] = op
	return f
}

// data is the data header of a frame the switch sent.
func data(t testing.TB, s sent) []byte {
	t.Helper()
	if len(s.frame) < 14+dataLen {
		t.Fatalf("a %d-byte frame out of port %d", len(s.frame), s.port)
	}
	return s.frame[14 : 14+dataLen]
}

// ports lists the ports frames left by.
func ports(out []sent) []int {
	var ps []int
	for _, s := range out {
		ps = append(ps, s.port)
	}
	return ps
}

// next waits for the controller's next stream message that pick accepts.
func (c *controller) next(pick func(*p4v1.StreamMessageResponse) bool, within time.Duration) *p4v1.StreamMessageResponse {
	c.t.Helper()
	deadline := time.After(within)
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				c.t.Fatal("stream ended")
			}
			if pick(m) {
				return m
			}
		case <-deadline:
			return nil
		}
	}
}

// getPipeline is GetForwardingPipelineConfig's answer for one response type.
func getPipeline(t testing.TB, c p4v1.P4RuntimeClient, typ p4v1.GetForwardingPipelineConfigRequest_ResponseType) (*p4v1.ForwardingPipelineConfig, error) {
	t.Helper()
	r, err := c.GetForwardingPipelineConfig(context.Background(), &p4v1.GetForwardingPipelineConfigRequest{DeviceId: device, ResponseType: typ})
	return r.GetConfig(), err
}
