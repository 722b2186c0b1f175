package controlplane

import (
	"bytes"
	"context"
	"net"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/bmv2"
	"github.com/p4rcm/p4rcm/p4"
)

func freePort(t *testing.T) (string, int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String(), l.Addr().(*net.TCPAddr).Port
}

// Against BMv2 itself: become primary, push rcm.p4, insert a route and an
// ECMP member and read them back; names that are not in the P4Info are
// refused before anything is sent.
func TestSessionOnBMv2(t *testing.T) {
	if _, err := bmv2.Lookup(bmv2.SwitchBinary); err != nil {
		t.Skipf("skipping: %v", err)
	}
	addr, _ := freePort(t)
	_, thrift := freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sw, err := bmv2.Start(ctx, bmv2.Config{Name: "s1", DeviceID: 1, GRPCAddr: addr, ThriftPort: thrift, LogDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Stop()
	s, err := Dial(ctx, addr, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	info, err := p4.P4Info()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetPipeline(ctx, info, p4.DeviceConfig()); err != nil {
		t.Fatal(err)
	}
	err = s.InsertEntry(ctx, p4.TableIPv4LPM,
		[]Match{{Field: "hdr.ipv4.dst_addr", Value: []byte{10, 0, 0, 2}, PrefixLen: 32}},
		p4.ActionSetNexthop, []Param{{"port", []byte{2}}, {"src_mac", []byte{0xaa}}, {"dst_mac", []byte{0xbb}}})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := s.Entries(ctx, p4.TableIPv4LPM)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || !bytes.Equal(entries[0].Match[0].GetLpm().GetValue(), []byte{10, 0, 0, 2}) {
		t.Errorf("read back %v", entries)
	}
	if err := s.InsertEntry(ctx, "RcmIngress.nosuch", nil, p4.ActionDrop, nil); err == nil {
		t.Error("a table not in the P4Info was accepted")
	}
	if err := s.InsertEntry(ctx, p4.TableECMPMember, []Match{{Field: "meta.ecmp_member", Value: []byte{0, 1}}}, p4.ActionSetNexthop,
		[]Param{{"nosuch", []byte{1}}}); err == nil {
		t.Error("a parameter not in the P4Info was accepted")
	}
}
