package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/p4rcm/p4rcm/controlplane"
	"github.com/p4rcm/p4rcm/internal/groupfile"
	"github.com/p4rcm/p4rcm/internal/p4switchbin"
	"github.com/p4rcm/p4rcm/switchproc"
)

// Routes to h2 (10.0.0.2): s1 sends it to port 2, on the link in memory;
// s2 to port 1, h2's veth.
const (
	s1Entries = `{"table_entries": [
 {"table": "RcmIngress.ipv4_lpm", "match": {"hdr.ipv4.dst_addr": ["10.0.0.2", 32]},
  "action_name": "RcmIngress.set_nexthop", "action_params": {"port": 2, "src_mac": "02:00:00:00:01:02", "dst_mac": "02:00:00:00:02:02"}}]}`
	s2Entries = `{"table_entries": [
 {"table": "RcmIngress.ipv4_lpm", "match": {"hdr.ipv4.dst_addr": ["10.0.0.2", 32]},
  "action_name": "RcmIngress.set_nexthop", "action_params": {"port": 1, "src_mac": "02:00:00:00:02:01", "dst_mac": "02:00:00:00:00:02"}}]}`
)

// TestGroupLinkInMemory runs two switches in one process, h1 - s1 = s2 -
// h2, the middle link in memory with a rate and a delay on s1's side:
// frames from h1 reach h2 through both pipelines (TTL 62), all of them
// and in the order sent, no sooner than the link's delay and its rate
// allow; each switch answers on its own control socket, its port on the
// link named as such.
func TestGroupLinkInMemory(t *testing.T) {
	socks, ports := twoHosts(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const (
		rate  = 1e6 // b/s on the link in memory, from s1
		delay = 50 * time.Millisecond
	)
	group := groupfile.File{Switches: []groupfile.Switch{
		{Name: "s1", Args: []string{"-i", "1@" + ports[1], "-i", "2@mem:core", rcmJSON, "--entries", write("s1.json", s1Entries),
			"--port-rate", fmt.Sprintf("2:%g", rate), "--port-delay", fmt.Sprintf("2:%v", delay), "--control", filepath.Join(dir, "s1.sock"),
			"--", "--grpc-server-addr", "127.0.0.1:0"}},
		{Name: "s2", Args: []string{"-i", "2@mem:core", "-i", "1@" + ports[2], rcmJSON, "--entries", write("s2.json", s2Entries),
			"--control", filepath.Join(dir, "s2.sock"), "--", "--grpc-server-addr", "127.0.0.1:0"}},
	}}
	b, _ := json.Marshal(group)
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuf
	done := make(chan int)
	go func() { done <- run(ctx, []string{"--group", write("group.json", string(b))}, &stdout, &stderr) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			if code := <-done; code != exitOK {
				t.Errorf("exit %d: %s", code, stderr.String())
			}
		}
	}
	defer stop()
	// seq is frame i of the test: a UDP frame to h2 with i at its end.
	seq := func(i uint32) []byte {
		f := udp(t, 1, 2)
		binary.BigEndian.PutUint32(f[len(f)-4:], i)
		return f
	}
	in := udp(t, 1, 2)
	isOurs := func(f []byte) bool { return len(f) == len(in) }
	var got []byte
	for deadline := time.Now().Add(60 * time.Second); got == nil && time.Now().Before(deadline); {
		// Both switches compile rcm.json first.
		if err := socks[0].Send(seq(1 << 31)); err != nil {
			t.Fatal(err)
		}
		got, _ = socks[1].RecvMatching(200*time.Millisecond, isOurs)
	}
	if got == nil {
		t.Fatalf("nothing crossed the group: %s %s", stdout.String(), stderr.String())
	}
	time.Sleep(2 * delay)
	socks[1].Drain()
	const n = 20
	start := time.Now()
	for i := range uint32(n) {
		if err := socks[0].Send(seq(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range uint32(n) {
		f, err := socks[1].RecvMatching(5*time.Second, isOurs)
		if err != nil {
			t.Fatalf("frame %d of %d: %v", i, n, err)
		}
		if s := binary.BigEndian.Uint32(f[len(f)-4:]); s != i {
			t.Fatalf("frame %d arrived as the %dth: out of order", s, i)
		}
		if i == 0 {
			pkt := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.Default)
			if ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4); ip == nil || ip.TTL != 62 {
				t.Errorf("frame at h2 %x: want TTL 62, two switches' work", f)
			}
		}
	}
	// The link's delay, then n frames at its rate, one after another: a
	// lower bound, which a slow machine only exceeds.
	least := delay + time.Duration(float64(n-1)*float64(len(in)+24)*8/rate*float64(time.Second))
	if took := time.Since(start); took < least {
		t.Errorf("%d frames across in %v: sooner than the link's delay and rate allow (%v)", n, took, least)
	}
	for _, sw := range []string{"s1", "s2"} {
		conn, err := net.Dial("unix", filepath.Join(dir, sw+".sock"))
		if err != nil {
			t.Fatalf("%s's control socket: %v", sw, err)
		}
		fmt.Fprintln(conn, "port_stats")
		sc := bufio.NewScanner(conn)
		var lines []string
		for sc.Scan() && sc.Text() != "ok" {
			lines = append(lines, sc.Text())
		}
		conn.Close()
		if text := strings.Join(lines, "\n"); !strings.Contains(text, "port 2 (mem:core): ") || !strings.Contains(text, "lost arriving at a full link queue") {
			t.Errorf("%s's port_stats: %s", sw, text)
		}
	}
	stop()
	out := stdout.String()
	for _, w := range []string{"s1: p4switch: running", "s2: p4switch: running", "s2: p4switch: port 2 (mem:core): "} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q: %s", w, out)
		}
	}
}

// TestStartGroup starts two switches in one process with package bmv2,
// as the emulation does: each serves its own P4Runtime (its device id,
// the program from the command line) and takes traffic-manager commands
// on its own control socket; they share a PID, and Stop ends the
// process.
func TestStartGroup(t *testing.T) {
	target, bin := p4switchbin.Choose(t)
	if target != switchproc.TargetGo {
		t.Skip("only the Go target runs groups")
	}
	var cs []switchproc.Config
	for i, name := range []string{"s1", "s2"} {
		port, err := switchproc.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, switchproc.Config{Name: name, DeviceID: uint64(i + 7), GRPCAddr: fmt.Sprintf("127.0.0.1:%d", port), ThriftPort: 9090,
			JSON: rcmJSON, Target: switchproc.TargetGo, Binary: bin, LogDir: t.TempDir(), PriorityQueues: 2})
	}
	// The emulation gives the group one thread per core but one.
	cs[0].GoMaxProcs = 1
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	g, err := switchproc.StartGroup(ctx, "pair", cs)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Stop()
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", g.PID()))
	if err != nil {
		t.Fatal(err)
	}
	var procs []string
	for _, kv := range strings.Split(string(env), "\x00") {
		if v, ok := strings.CutPrefix(kv, "GOMAXPROCS="); ok {
			procs = append(procs, v)
		}
	}
	if len(procs) != 1 || procs[0] != "1" {
		t.Errorf("the group's GOMAXPROCS: %q, want one 1", procs)
	}
	want, err := controlplane.ReadPipeline("../../p4/build/rcm.p4info.txtpb", rcmJSON, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range g.Switches() {
		c := s.Config()
		if s.PID() != g.PID() {
			t.Errorf("%s: PID %d, the group's %d", c.Name, s.PID(), g.PID())
		}
		r, err := controlplane.DialReader(ctx, c.GRPCAddr, c.DeviceID)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if cookie, running, err := r.RunningCookie(ctx); err != nil || !running || cookie != want.Cookie {
			t.Errorf("%s: pipeline cookie %#x, running %v, %v; want %#x", c.Name, cookie, running, err, want.Cookie)
		}
		r.Close()
		// Another device id is not this switch.
		if r, err := controlplane.DialReader(ctx, c.GRPCAddr, c.DeviceID+100); err == nil {
			if _, _, err := r.RunningCookie(ctx); err == nil {
				t.Errorf("%s answers for device %d", c.Name, c.DeviceID+100)
			}
			r.Close()
		}
		if err := s.SetPortRate(1, 1e6); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
		if err := s.SetQueueDepth(1, 64); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
		if err := s.SetPortDelay(1, -time.Second); err == nil || !strings.Contains(err.Error(), c.Name) {
			t.Errorf("%s: a negative delay: %v", c.Name, err)
		}
	}
	if err := g.Switches()[1].Stop(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(g.PID(), 0); err == nil {
		t.Error("the group's process outlived Stop")
	}
	if err := g.Stop(); err != nil {
		t.Errorf("a second Stop: %v", err)
	}
	// BMv2 runs a process per switch.
	bad := cs[0]
	bad.Target, bad.GoMaxProcs = switchproc.TargetBMv2, 0
	if _, err := switchproc.StartGroup(ctx, "bad", []switchproc.Config{bad}); err == nil || !strings.Contains(err.Error(), "only the Go target") {
		t.Errorf("a BMv2 group: %v", err)
	}
}
