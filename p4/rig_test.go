package p4_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net"
	"os"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4rcm/p4rcm/controlplane"
	"github.com/p4rcm/p4rcm/internal/labtest"
	"github.com/p4rcm/p4rcm/internal/p4switchbin"
	"github.com/p4rcm/p4rcm/netlab"
	"github.com/p4rcm/p4rcm/p4"
	"github.com/p4rcm/p4rcm/switchproc"
)

// The packet tests run rcm.p4 (the committed build) on BMv2 with three
// hosts on veths, each in a network namespace of its own, program it over
// P4Runtime and send real frames. Host n is on switch port n and has
// address 10.0.0.n; 10.0.9.0/24 is an ECMP group over ports 2 and 3.
const (
	hostA = 1
	hostB = 2
	hostC = 3
)

var ecmpPrefix = net.IPv4(10, 0, 9, 0).To4()

// ecmpBase is the ECMP group's first member index.
const ecmpBase = 1

// frameBytes is the size of the test's data frames.
const frameBytes = 1000

// rig is one switch with its hosts and controller.
type rig struct {
	t     *testing.T
	ctx   context.Context
	sw    *switchproc.Switch
	s     *controlplane.Session
	hosts map[int]*netlab.Socket
	sent  int // frames sent, to pace runs
}

func hostIP(n int) net.IP       { return net.IPv4(10, 0, 0, byte(n)).To4() }
func hostMAC(n int) []byte      { return []byte{0x02, 0, 0, 0, 0, byte(n)} }
func switchMAC(port int) []byte { return []byte{0x02, 0, 0, 0, 1, byte(port)} }

// newRig starts the switch and its hosts, pushes the program and
// installs the routes, a clone session per port (for PAUSEs and CNs)
// and CAM digests. It skips the test when BMv2 or network namespaces
// are not available here.
func newRig(t *testing.T) *rig {
	t.Helper()
	target, bin := p4switchbin.Choose(t)
	labtest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	lab, err := netlab.New("p4t")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lab.Close(); err != nil {
			t.Error(err)
		}
	})
	r := &rig{t: t, ctx: ctx, hosts: map[int]*netlab.Socket{}}
	ports := map[int]string{}
	for _, n := range []int{hostA, hostB, hostC} {
		h, err := lab.Host(fmt.Sprintf("h%d", n))
		if err != nil {
			t.Fatal(err)
		}
		link, err := lab.Link(h, "eth0", hostMAC(n))
		if err != nil {
			t.Fatal(err)
		}
		ports[n] = link.SwitchIf
		if r.hosts[n], err = h.Socket("eth0"); err != nil {
			t.Fatal(err)
		}
	}
	port, thrift, err := switchproc.FreeSwitchPorts()
	if err != nil {
		t.Fatal(err)
	}
	grpcAddr := fmt.Sprintf("127.0.0.1:%d", port)
	logs := t.TempDir()
	r.sw, err = switchproc.Start(ctx, switchproc.Config{Name: "s1", DeviceID: 1, Ports: ports, GRPCAddr: grpcAddr,
		ThriftPort: thrift, PriorityQueues: 2, LogDir: logs, Target: target, Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.sw.Stop()
		if t.Failed() {
			if b, err := os.ReadFile(logs + "/s1.txt"); err == nil {
				t.Logf("switch log tail:\n%s", b[max(0, len(b)-4000):])
			}
		}
	})
	if r.s, err = controlplane.Dial(ctx, grpcAddr, 1, controlplane.ElectionID{Low: 1}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.s.Close() })
	info, err := p4.P4Info()
	if err != nil {
		t.Fatal(err)
	}
	r.must(r.s.SetPipeline(ctx, controlplane.Pipeline{Info: info, DeviceConfig: p4.DeviceConfig()}))
	for _, n := range []int{hostA, hostB, hostC} {
		r.insert(p4.TableIPv4LPM, []controlplane.Match{{Field: "hdr.ipv4.dst_addr", Value: hostIP(n), PrefixLen: 32}},
			p4.ActionSetNexthop, "port", u(n, 9), "src_mac", switchMAC(n), "dst_mac", hostMAC(n))
		r.must(r.s.SetCloneSession(ctx, p4.CloneSession(uint32(n)), uint32(n)))
	}
	r.insert(p4.TableIPv4LPM, []controlplane.Match{{Field: "hdr.ipv4.dst_addr", Value: ecmpPrefix, PrefixLen: 24}},
		p4.ActionSetECMPGroup, "base", u(ecmpBase, 16), "size", u(2, 16))
	for i, n := range []int{hostB, hostC} {
		r.insert(p4.TableECMPMember, []controlplane.Match{
			{Field: "meta.ecmp_base", Value: u(ecmpBase, 16)}, {Field: "meta.ecmp_offset", Value: u(i, 16)}},
			p4.ActionSetNexthop, "port", u(n, 9), "src_mac", switchMAC(n), "dst_mac", hostMAC(n))
	}
	r.must(r.s.EnableDigest(ctx, p4.DigestCAM, time.Millisecond, 1, time.Second))
	r.must(r.s.EnableDigest(ctx, p4.DigestNamed, time.Millisecond, 1, time.Second))
	return r
}

func (r *rig) must(err error) {
	r.t.Helper()
	if err != nil {
		r.t.Fatal(err)
	}
}

// u is v as a P4Runtime value of the given bit width.
func u(v, bits int) []byte {
	b := make([]byte, (bits+7)/8)
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
	return b
}

// insert adds a table entry; params alternate names and values.
func (r *rig) insert(table string, m []controlplane.Match, action string, params ...any) {
	r.t.Helper()
	r.must(r.s.InsertEntry(r.ctx, controlplane.Entry{Table: table, Match: m, Action: action, Params: paramList(params)}))
}

// portConfig installs the entry of a table keyed by a port number.
func (r *rig) portConfig(table string, port int, action string, params ...any) {
	r.t.Helper()
	field := map[string]string{
		p4.TableIngressPortConfig: "standard_metadata.ingress_port",
		p4.TableRCMConfig:         "standard_metadata.egress_spec",
		p4.TableREDConfig:         "standard_metadata.egress_port",
	}[table]
	m := []controlplane.Match{{Field: field, Value: u(port, 9)}}
	e := controlplane.Entry{Table: table, Match: m, Action: action, Params: paramList(params)}
	if err := r.s.InsertEntry(r.ctx, e); err != nil {
		r.must(r.s.ModifyEntry(r.ctx, e))
	}
}

func paramList(params []any) []controlplane.Param {
	var out []controlplane.Param
	for i := 0; i < len(params); i += 2 {
		out = append(out, controlplane.Param{Name: params[i].(string), Value: params[i+1].([]byte)})
	}
	return out
}

// counter reads one counter cell's packets.
func (r *rig) counter(name string, port int) int64 {
	r.t.Helper()
	n, _, err := r.s.Counter(r.ctx, name, int64(port))
	r.must(err)
	return n
}

// flow is a UDP flow between the test's hosts (RoCEv2 when dport is
// 4791), in the priority its DSCP's class selector gives (dscp >> 3).
type flow struct {
	src, dst     net.IP
	sport, dport uint16
	dscp         uint8
}

// id is the flow ID the program computes: CRC-32 of the 5-tuple as a CN
// carries it.
func (f flow) id() uint32 {
	b := make([]byte, 0, 13)
	b = append(b, f.src...)
	b = append(b, f.dst...)
	b = binary.BigEndian.AppendUint16(b, f.sport)
	b = binary.BigEndian.AppendUint16(b, f.dport)
	b = append(b, byte(layers.IPProtocolUDP))
	return crc32.ChecksumIEEE(b)
}

// frame is one of f's packets, frameBytes long, with ECN codepoint ecn
// and seq in its payload.
func (f flow) frame(ecn uint8, seq int) []byte {
	eth := &layers.Ethernet{SrcMAC: hostMAC(1), DstMAC: switchMAC(1), EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TOS: f.dscp<<2 | ecn, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: f.src, DstIP: f.dst}
	udp := &layers.UDP{SrcPort: layers.UDPPort(f.sport), DstPort: layers.UDPPort(f.dport)}
	udp.SetNetworkLayerForChecksum(ip)
	payload := make([]byte, frameBytes-14-20-8)
	binary.BigEndian.PutUint32(payload, uint32(seq))
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, eth, ip, udp, gopacket.Payload(payload)); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// received is a data frame as a host got it.
type received struct {
	flow flow
	seq  int
	ecn  uint8
	ttl  uint8
	eth  *layers.Ethernet
	ip   *layers.IPv4
	at   time.Time // when the host read it
}

// send sends frames from host n, in runs of at most 16 back to back:
// BMv2 reads its ports more slowly than a veth delivers, and loses
// frames of longer runs before its pipeline sees them.
func (r *rig) send(n int, frames ...[]byte) {
	r.t.Helper()
	for _, f := range frames {
		if r.sent++; r.sent%16 == 0 {
			time.Sleep(time.Millisecond)
		}
		r.must(r.hosts[n].Send(f))
	}
}

// recvData collects the UDP data frames host n gets until want have come
// or nothing has come for quiet.
func (r *rig) recvData(n, want int, quiet time.Duration) []received {
	r.t.Helper()
	var out []received
	for len(out) < want {
		b, err := r.hosts[n].Recv(quiet)
		if errors.Is(err, netlab.ErrTimeout) {
			break
		}
		r.must(err)
		p := gopacket.NewPacket(b, layers.LayerTypeEthernet, gopacket.Default)
		ip, _ := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		udp, _ := p.Layer(layers.LayerTypeUDP).(*layers.UDP)
		if ip == nil || udp == nil || len(udp.Payload) < 4 {
			continue
		}
		out = append(out, received{
			flow: flow{src: ip.SrcIP.To4(), dst: ip.DstIP.To4(), sport: uint16(udp.SrcPort), dport: uint16(udp.DstPort), dscp: ip.TOS >> 2},
			seq:  int(binary.BigEndian.Uint32(udp.Payload)),
			ecn:  ip.TOS & 3, ttl: ip.TTL,
			eth: p.Layer(layers.LayerTypeEthernet).(*layers.Ethernet), ip: ip,
			at: time.Now(),
		})
	}
	return out
}

// recvType waits for a frame of EtherType typ at host n.
func (r *rig) recvType(n int, typ layers.EthernetType, within time.Duration) []byte {
	r.t.Helper()
	deadline := time.Now().Add(within)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return nil
		}
		b, err := r.hosts[n].Recv(left)
		if errors.Is(err, netlab.ErrTimeout) {
			return nil
		}
		r.must(err)
		if len(b) >= 14 && layers.EthernetType(binary.BigEndian.Uint16(b[12:])) == typ {
			return b
		}
	}
}

// waitCounter polls a counter until it reaches at least want, since the
// switch processes frames after the socket has sent them.
func (r *rig) waitCounter(name string, port int, want int64) int64 {
	r.t.Helper()
	var got int64
	for i := 0; i < 100; i++ {
		if got = r.counter(name, port); got >= want {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
	return got
}

// camDigest waits for a CAM digest of port that holds id.
func (r *rig) camDigest(port int, id uint32, within time.Duration) bool {
	r.t.Helper()
	timeout := time.After(within)
	for {
		select {
		case d := <-r.s.Digests():
			for _, data := range d.Data {
				members := data.GetStruct().GetMembers()
				if len(members) != 1+p4.CAMDepth || bitsValue(members[0]) != uint64(port) {
					continue
				}
				for _, m := range members[1:] {
					if bitsValue(m) == uint64(id) {
						return true
					}
				}
			}
		case <-timeout:
			return false
		}
	}
}

func bitsValue(d *p4v1.P4Data) uint64 {
	var v uint64
	for _, b := range d.GetBitstring() {
		v = v<<8 | uint64(b)
	}
	return v
}
