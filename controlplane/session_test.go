package controlplane

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/p4rcm/p4rcm/bmv2"
	"github.com/p4rcm/p4rcm/internal/p4switchbin"
	"github.com/p4rcm/p4rcm/p4"
)

// freePort is a loopback TCP address nothing listens on, and its port.
func freePort(t *testing.T) (string, int) {
	t.Helper()
	port, err := bmv2.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", port), port
}

// startSwitch starts the switch P4RCM_TARGET chooses (the Go target by
// default, BMv2 where asked and installed) with ports, becomes its
// primary controller and installs a program: by default the committed
// rcm.p4. The switch and the session end with the test.
func startSwitch(ctx context.Context, t *testing.T, ports map[int]string, info *p4configv1.P4Info, deviceConfig []byte) *Session {
	t.Helper()
	target, bin := p4switchbin.Choose(t)
	if info == nil {
		var err error
		if info, err = p4.P4Info(); err != nil {
			t.Fatal(err)
		}
		deviceConfig = p4.DeviceConfig()
	}
	addr, _ := freePort(t)
	_, thrift := freePort(t)
	sw, err := bmv2.Start(ctx, bmv2.Config{Name: "s1", DeviceID: 1, Ports: ports, GRPCAddr: addr, ThriftPort: thrift, LogDir: t.TempDir(), Target: target, Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sw.Stop() })
	s, err := Dial(ctx, addr, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.SetPipeline(ctx, info, deviceConfig); err != nil {
		t.Fatal(err)
	}
	return s
}

// Against BMv2 itself: become primary, push rcm.p4, insert a route,
// modify it, read it back and delete it, with the switch's codes for a
// duplicate and a missing entry; set a table's default action; names that
// are not in the P4Info, and an action that is not the table's, are
// refused before anything is sent.
func TestSession(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := startSwitch(ctx, t, nil, nil, nil)

	route := []Match{{Field: "hdr.ipv4.dst_addr", Value: []byte{10, 0, 0, 2}, PrefixLen: 32}}
	nexthop := func(port byte) []Param {
		return []Param{{"port", []byte{port}}, {"src_mac", []byte{0xaa}}, {"dst_mac", []byte{0xbb}}}
	}
	if err := s.InsertEntry(ctx, p4.TableIPv4LPM, route, p4.ActionSetNexthop, nexthop(2)); err != nil {
		t.Fatal(err)
	}
	entries, err := s.Entries(ctx, p4.TableIPv4LPM)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || !bytes.Equal(entries[0].Match[0].GetLpm().GetValue(), []byte{10, 0, 0, 2}) {
		t.Errorf("read back %v", entries)
	}
	err = s.InsertEntry(ctx, p4.TableIPv4LPM, route, p4.ActionSetNexthop, nexthop(2))
	if status.Code(err) != codes.AlreadyExists {
		t.Errorf("inserting the route again: %v, want code AlreadyExists", err)
	}
	if err := s.ModifyEntry(ctx, p4.TableIPv4LPM, route, p4.ActionSetNexthop, nexthop(3)); err != nil {
		t.Fatal(err)
	}
	if entries, err = s.Entries(ctx, p4.TableIPv4LPM); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || !bytes.Equal(entries[0].GetAction().GetAction().GetParams()[0].GetValue(), []byte{3}) {
		t.Errorf("after the modify, read back %v", entries)
	}
	if err := s.DeleteEntry(ctx, p4.TableIPv4LPM, route); err != nil {
		t.Fatal(err)
	}
	if entries, err = s.Entries(ctx, p4.TableIPv4LPM); err != nil || len(entries) != 0 {
		t.Errorf("after the delete, read back %v, %v", entries, err)
	}
	if err := s.DeleteEntry(ctx, p4.TableIPv4LPM, route); status.Code(err) != codes.NotFound {
		t.Errorf("deleting the route again: %v, want code NotFound", err)
	}
	if err := s.ModifyEntry(ctx, p4.TableIPv4LPM, route, p4.ActionDrop, nil); status.Code(err) != codes.NotFound {
		t.Errorf("modifying a missing route: %v, want code NotFound", err)
	}

	if err := s.SetDefaultAction(ctx, p4.TableIPv4LPM, p4.ActionSetNexthop, nexthop(4)); err != nil {
		t.Fatal(err)
	}
	var def []*p4v1.TableEntry
	err = s.read(ctx, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{
		TableId: entriesTableID(t, s, p4.TableIPv4LPM), IsDefaultAction: true}}}, func(e *p4v1.Entity) {
		def = append(def, e.GetTableEntry())
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(def) != 1 || !bytes.Equal(def[0].GetAction().GetAction().GetParams()[0].GetValue(), []byte{4}) {
		t.Errorf("default entry read back as %v", def)
	}

	refused := map[string]error{
		"a table not in the P4Info":     s.InsertEntry(ctx, "RcmIngress.nosuch", nil, p4.ActionDrop, nil),
		"an action not in the P4Info":   s.ModifyEntry(ctx, p4.TableIPv4LPM, route, "RcmIngress.nosuch", nil),
		"an action not the table's":     s.InsertEntry(ctx, p4.TableIPv4LPM, route, p4.ActionSetRED, nil),
		"a match field not the table's": s.DeleteEntry(ctx, p4.TableIPv4LPM, []Match{{Field: "nosuch"}}),
		"a parameter not the action's": s.InsertEntry(ctx, p4.TableECMPMember, []Match{{Field: "meta.ecmp_member", Value: []byte{0, 1}}},
			p4.ActionSetNexthop, []Param{{"nosuch", []byte{1}}}),
		"a default action for a table not in the P4Info": s.SetDefaultAction(ctx, "nosuch", p4.ActionDrop, nil),
	}
	for what, err := range refused {
		if err == nil {
			t.Errorf("%s was accepted", what)
		} else if _, fromSwitch := status.FromError(err); fromSwitch {
			t.Errorf("%s went to the switch: %v", what, err)
		}
	}
}

func entriesTableID(t *testing.T, s *Session, name string) uint32 {
	t.Helper()
	tb, err := s.table(name)
	if err != nil {
		t.Fatal(err)
	}
	return tb.Preamble.Id
}

// A failed Write answers UNKNOWN with one p4.v1.Error per update; the
// error returned carries the failed update's code and message.
func TestUpdateError(t *testing.T) {
	st, err := status.New(codes.Unknown, "").WithDetails(&p4v1.Error{CanonicalCode: int32(codes.OK)},
		&p4v1.Error{CanonicalCode: int32(codes.AlreadyExists), Message: "Clone session id already exists"})
	if err != nil {
		t.Fatal(err)
	}
	got := updateError(st.Err())
	if status.Code(got) != codes.AlreadyExists || status.Convert(got).Message() != "Clone session id already exists" {
		t.Errorf("updateError = %v", got)
	}
	if err := updateError(nil); err != nil {
		t.Errorf("updateError(nil) = %v", err)
	}
	plain := status.Error(codes.PermissionDenied, "Not primary")
	if got := updateError(plain); got != plain {
		t.Errorf("updateError(%v) = %v", plain, got)
	}
}
