package p4rt_test

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// goClient is a p4runtime-go-client session on the rig's server: its
// stream running, the arbitration result it reported, and the other
// stream messages.
type goClient struct {
	*client.Client
	primary chan bool
	msgs    chan *p4v1.StreamMessageResponse
}

func newGoClient(t *testing.T, r *rig, election uint64) *goClient {
	t.Helper()
	g := &goClient{Client: client.NewClient(p4v1.NewP4RuntimeClient(r.conn), device, &p4v1.Uint128{Low: election}),
		primary: make(chan bool, 10), msgs: make(chan *p4v1.StreamMessageResponse, 100)}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); _ = g.Run(stop, g.primary, g.msgs) }()
	t.Cleanup(func() { close(stop); <-done })
	return g
}

func (g *goClient) arbitration(t *testing.T) bool {
	t.Helper()
	select {
	case p := <-g.primary:
		return p
	case <-time.After(5 * time.Second):
		t.Fatal("p4runtime-go-client reported no arbitration")
		return false
	}
}

func (g *goClient) next(pick func(*p4v1.StreamMessageResponse) bool) *p4v1.StreamMessageResponse {
	deadline := time.After(5 * time.Second)
	for {
		select {
		case m := <-g.msgs:
			if pick(m) {
				return m
			}
		case <-deadline:
			return nil
		}
	}
}

// p4runtime-go-client, unchanged, programs the Go target: it sets
// runtime.p4 from its files and reads it back, writes, reads, modifies
// and deletes table entries, members, groups and one-shot sets (with
// the watch port it always sets), counters, clone sessions, multicast
// groups and digests; frames follow; its packet-out leaves and a
// packet-in and a digest list reach it; a second client with a lower
// election ID is told it is a backup and its write is refused.
func TestGoClient(t *testing.T) {
	r := startRig(t)
	ctx := t.Context()
	g := newGoClient(t, r, 10)
	if !g.arbitration(t) {
		t.Fatal("the first client is not primary")
	}
	// The library parses P4Info text strictly, and the pinned p4runtime
	// protos (v1.4.0-rc.5) predate a field p4c 1.2.5.16 writes
	// (initial_default_action): it gets the P4Info as those protos see it.
	info, err := prototext.Marshal(r.p.info)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.SetFwdPipeFromBytes(ctx, r.p.json, info, 42); err != nil {
		t.Fatal(err)
	}
	if got, err := g.GetFwdPipe(ctx, client.GetFwdPipeCookieOnly); err != nil || got.Cookie != 42 {
		t.Fatalf("GetFwdPipe: %v, %v; want cookie 42", got, err)
	}
	if err := g.WriteUpdate(ctx, r.allowDataUpdate()); err != nil {
		t.Fatal(err)
	}

	// Table entries.
	port := func(p byte) [][]byte { return [][]byte{{p}} }
	e := g.NewTableEntry("IngressR.big_t", map[string]client.MatchInterface{"hdr.data.key": &client.ExactMatch{Value: []byte{0, 0, 0, 7}}},
		g.NewTableActionDirect("IngressR.forward_counted", port(3)), nil)
	if err := g.InsertTableEntry(ctx, e); err != nil {
		t.Fatal(err)
	}
	if err := g.InsertTableEntry(ctx, e); status.Code(err) != codes.Unknown || len(status.Convert(err).Details()) != 1 {
		t.Errorf("a duplicate insert: %v, want UNKNOWN with one p4.v1.Error", err)
	}
	if got := ports(r.send(1, dataFrame(1, 7, 0, 1))); !slices.Equal(got, []int{3}) {
		t.Errorf("big_t key 7 -> 3: out %v", got)
	}
	got, err := g.ReadTableEntryWildcard(ctx, "IngressR.big_t")
	if err != nil || len(got) != 1 || !proto.Equal(got[0].Action, e.Action) || !proto.Equal(got[0].Match[0], exact(1, 7)) {
		t.Errorf("ReadTableEntryWildcard: %v, %v", got, err)
	}
	e.Action = g.NewTableActionDirect("IngressR.forward_counted", port(4))
	if err := g.ModifyTableEntry(ctx, e); err != nil {
		t.Fatal(err)
	}
	if got := ports(r.send(1, dataFrame(1, 7, 0, 1))); !slices.Equal(got, []int{4}) {
		t.Errorf("big_t key 7 modified to 4: out %v", got)
	}
	if err := g.DeleteTableEntry(ctx, e); err != nil {
		t.Fatal(err)
	}

	// Members, groups, one-shot.
	if err := g.InsertActionProfileMember(ctx, g.NewActionProfileMember("IngressR.members", 1, "IngressR.forward", port(5))); err != nil {
		t.Fatal(err)
	}
	if err := g.InsertTableEntry(ctx, g.NewTableEntry("IngressR.prof_t", map[string]client.MatchInterface{"hdr.data.port": &client.ExactMatch{Value: []byte{1}}},
		g.NewTableActionMember(1), nil)); err != nil {
		t.Fatal(err)
	}
	if got := ports(r.send(1, dataFrame(1, 0, 1, 2))); !slices.Equal(got, []int{5}) {
		t.Errorf("prof_t via member 1 -> 5: out %v", got)
	}
	for id, p := range map[uint32]byte{1: 7, 2: 8} {
		if err := g.InsertActionProfileMember(ctx, g.NewActionProfileMember("IngressR.spread", id, "IngressR.forward", port(p))); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.InsertActionProfileGroup(ctx, g.NewActionProfileGroup("IngressR.spread", 1,
		[]*p4v1.ActionProfileGroup_Member{{MemberId: 1, Weight: 1}, {MemberId: 2, Weight: 1}}, 4)); err != nil {
		t.Fatal(err)
	}
	sel := g.NewTableEntry("IngressR.sel_t", map[string]client.MatchInterface{"hdr.data.key": &client.LpmMatch{Value: []byte{10, 0, 0, 0}, PLen: 8}},
		g.NewTableActionGroup(1), nil)
	if err := g.InsertTableEntry(ctx, sel); err != nil {
		t.Fatal(err)
	}
	sel.Action = g.NewActionProfileActionSet().
		AddAction("IngressR.forward", port(11), 1, client.NewPortFromInt(11)).
		AddAction("IngressR.forward", port(12), 1, client.NewPortFromInt(12)).TableAction()
	if err := g.ModifyTableEntry(ctx, sel); err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for src := range byte(32) {
		for _, s := range r.send(1, dataFrame(src, 10<<24, 1000+uint16(src)*7, 3)) {
			seen[s.port] = true
		}
	}
	if len(seen) != 2 || !seen[11] || !seen[12] {
		t.Errorf("a one-shot set to 11 and 12 spread frames to %v", seen)
	}

	// Counters.
	r.send(1, dataFrame(1, 0, 0, 0))
	if d, err := g.ReadCounterEntry(ctx, "IngressR.port_frames", 1); err != nil || d.PacketCount == 0 {
		t.Errorf("ReadCounterEntry: %v, %v", d, err)
	}
	if err := g.ModifyCounterEntry(ctx, "IngressR.port_frames", 1, &p4v1.CounterData{}); err != nil {
		t.Fatal(err)
	}
	if all, err := g.ReadCounterEntryWildcard(ctx, "IngressR.port_frames"); err != nil || len(all) != 32 || all[1].PacketCount != 0 {
		t.Errorf("ReadCounterEntryWildcard after a reset: %d cells, %v", len(all), err)
	}

	// Replication.
	if err := g.InsertCloneSession(ctx, 5, []uint32{3}, client.CloneSessionOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := g.InsertMulticastGroup(ctx, 9, []uint32{4, 6}); err != nil {
		t.Fatal(err)
	}
	if got := ports(r.send(1, dataFrame(1, 9, 0, 9))); !slices.Equal(got, []int{4, 6}) {
		t.Errorf("multicast group 9: out %v", got)
	}
	if got := ports(r.send(1, dataFrame(1, 5, 0, 8))); len(got) != 2 {
		t.Errorf("clone session 5: out %v", got)
	}
	if err := g.DeleteMulticastGroup(ctx, 9); err != nil {
		t.Fatal(err)
	}
	if err := g.DeleteCloneSession(ctx, 5); err != nil {
		t.Fatal(err)
	}

	// Digests, packet-in, packet-out.
	if err := g.EnableDigest(ctx, "learn_t", &p4v1.DigestEntry_Config{MaxListSize: 1}); err != nil {
		t.Fatal(err)
	}
	r.send(2, dataFrame(9, 0, 0, 6))
	m := g.next(func(m *p4v1.StreamMessageResponse) bool { return m.GetDigest() != nil })
	if m == nil || len(m.GetDigest().Data) != 1 {
		t.Fatalf("digest list: %v", m)
	}
	if err := g.AckDigestList(ctx, m.GetDigest()); err != nil {
		t.Fatal(err)
	}
	r.send(7, dataFrame(1, 0, 0, 7))
	if m := g.next(func(m *p4v1.StreamMessageResponse) bool { return m.GetPacket() != nil }); m == nil ||
		!bytes.Equal(m.GetPacket().Metadata[0].Value, []byte{7}) {
		t.Errorf("packet-in: %v", m)
	}
	r.mu.Lock()
	r.out = nil
	r.mu.Unlock()
	if err := g.SendPacketOut(ctx, &p4v1.PacketOut{Payload: dataFrame(1, 0, 0, 0),
		Metadata: []*p4v1.PacketMetadata{{MetadataId: 1, Value: []byte{9}}, {MetadataId: 2, Value: []byte{0}}, {MetadataId: 3, Value: []byte{0}}}}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		r.mu.Lock()
		out := ports(r.out)
		r.mu.Unlock()
		if len(out) > 0 {
			if !slices.Equal(out, []int{9}) {
				t.Errorf("packet-out to 9 left by %v", out)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the packet-out never left")
		}
	}

	// A second client with a lower election ID.
	b := newGoClient(t, r, 5)
	if b.arbitration(t) {
		t.Error("a second client with a lower election ID was told it is primary")
	}
	if _, err := b.SetFwdPipeFromBytes(ctx, r.p.json, info, 1); status.Code(err) != codes.PermissionDenied {
		t.Errorf("a backup's SetFwdPipe: %v, want PermissionDenied", err)
	}
}
