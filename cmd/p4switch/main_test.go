package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/vishvananda/netlink"

	"github.com/p4rcm/p4rcm/controlplane"
	"github.com/p4rcm/p4rcm/internal/labtest"
	"github.com/p4rcm/p4rcm/netlab"
	"github.com/p4rcm/p4rcm/switchproc"
)

const rcmJSON = "../../p4/build/rcm.json"

func udp(t *testing.T, src, dst byte) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, src}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 1, 1}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: net.IPv4(10, 0, 0, src), DstIP: net.IPv4(10, 0, 0, dst)}
	u := &layers.UDP{SrcPort: 5000, DstPort: 4791}
	_ = u.SetNetworkLayerForChecksum(ip)
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, u, gopacket.Payload(make([]byte, 100))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const entries = `{"table_entries": [
 {"table": "RcmIngress.ipv4_lpm", "match": {"hdr.ipv4.dst_addr": ["10.0.0.1", 32]},
  "action_name": "RcmIngress.set_nexthop", "action_params": {"port": 1, "src_mac": "02:00:00:00:01:01", "dst_mac": "02:00:00:00:00:01"}},
 {"table": "RcmIngress.ipv4_lpm", "match": {"hdr.ipv4.dst_addr": ["10.0.0.2", 32]},
  "action_name": "RcmIngress.set_nexthop", "action_params": {"port": 2, "src_mac": "02:00:00:00:01:02", "dst_mac": "02:00:00:00:00:02"}}
]}`

// TestForwardsOnVeths runs rcm.p4 between two namespaces, started with
// the command line package bmv2 gives simple_switch_grpc: a frame from h1
// to 10.0.0.2 leaves on h2's link with the next hop's MACs and TTL 63, and
// a clean SIGINT-style stop reports the ports' counts and writes pcaps.
func TestForwardsOnVeths(t *testing.T) {
	socks, ports := twoHosts(t)
	dir := t.TempDir()
	rt := filepath.Join(dir, "s1-runtime.json")
	if err := os.WriteFile(rt, []byte(entries), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr bytes.Buffer
	done := make(chan int)
	// simple_switch_grpc's command line, as package bmv2 writes it.
	args := switchproc.Config{Name: "s1", DeviceID: 1, Ports: ports, GRPCAddr: "127.0.0.1:0", ThriftPort: 9090,
		JSON: rcmJSON, LogDir: dir, PcapDir: dir, PriorityQueues: 2}.Args()
	args = append([]string{"--entries", rt}, args...)
	go func() { done <- run(ctx, args, &stdout, &stderr) }()
	in := udp(t, 1, 2)
	got := firstThrough(t, socks, in)
	cancel()
	code := <-done
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if got == nil {
		t.Fatalf("nothing forwarded to h2; output: %s %s", stdout.String(), stderr.String())
	}
	pkt := gopacket.NewPacket(got, layers.LayerTypeEthernet, gopacket.Default)
	ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	eth, _ := pkt.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	if ip == nil || ip.TTL != 63 || eth.DstMAC.String() != "02:00:00:00:00:02" {
		t.Errorf("forwarded frame %x", got)
	}
	if !strings.Contains(stdout.String(), "port 2 (") || !strings.Contains(stdout.String(), "frames out") && !strings.Contains(stdout.String(), " out,") {
		t.Errorf("no port summary: %s", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "s1.txt")); err != nil {
		t.Errorf("no log where BMv2 writes it: %v", err)
	}
	for _, f := range []string{"_in.pcap", "_out.pcap"} {
		m, _ := filepath.Glob(filepath.Join(dir, "*"+f))
		if len(m) != 2 {
			t.Errorf("pcap files *%s: %v", f, m)
		}
	}
}

// TestPortIO: the switch forwards with its ports on each IO that
// --port-io names, and says which each port took.
func TestPortIO(t *testing.T) {
	socks, ports := twoHosts(t)
	rt := filepath.Join(t.TempDir(), "s1-runtime.json")
	if err := os.WriteFile(rt, []byte(entries), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, io := range []string{"ring", "ring-v3", "mmsg"} {
		t.Run(io, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			var stdout, stderr bytes.Buffer
			done := make(chan int)
			go func() {
				done <- run(ctx, []string{"-i", "1@" + ports[1], "-i", "2@" + ports[2], rcmJSON, "--entries", rt,
					"--port-io", io, "--log-console", "--", "--grpc-server-addr", "127.0.0.1:0"}, &stdout, &stderr)
			}()
			in := udp(t, 1, 2)
			got := firstThrough(t, socks, in)
			cancel()
			if code := <-done; code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if got == nil {
				t.Errorf("nothing forwarded: %s", stderr.String())
			}
			for p := 1; p <= 2; p++ {
				if want := fmt.Sprintf("port=%d iface=%s io=%s", p, ports[p], io); !strings.Contains(stderr.String(), want) {
					t.Errorf("no %q in the log: %s", want, stderr.String())
				}
			}
		})
	}
}

// twoHosts makes two namespaces, each linked to the root namespace, and
// returns their sockets and the root ends as ports 1 and 2.
// firstThrough sends in from the first host until a frame of its length
// reaches the second, for up to 20 s, and returns that frame (nil if none
// came): the switch may still be loading rcm.json and opening its ports.
func firstThrough(t *testing.T, socks []*netlab.Socket, in []byte) []byte {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		if err := socks[0].Send(in); err != nil {
			t.Fatal(err)
		}
		if got, _ := socks[1].RecvMatching(100*time.Millisecond, func(f []byte) bool { return len(f) == len(in) }); got != nil {
			return got
		}
	}
	return nil
}

func twoHosts(t *testing.T) ([]*netlab.Socket, map[int]string) {
	t.Helper()
	return twoHostsMTU(t, 0)
}

// twoHostsMTU is twoHosts with both ends of each link at mtu (0: the
// default), so that jumbo frames cross them.
func twoHostsMTU(t *testing.T, mtu int) ([]*netlab.Socket, map[int]string) {
	t.Helper()
	labtest.Require(t)
	lab, err := netlab.New("p4sw")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lab.Close() })
	var socks []*netlab.Socket
	ports := map[int]string{}
	for i, name := range []string{"h1", "h2"} {
		h, err := lab.Host(name)
		if err != nil {
			t.Fatal(err)
		}
		link, err := lab.Link(h, "eth0", nil)
		if err != nil {
			t.Fatal(err)
		}
		if mtu > 0 {
			setMTU := func(name string) error {
				l, err := netlink.LinkByName(name)
				if err == nil {
					err = netlink.LinkSetMTU(l, mtu)
				}
				return err
			}
			if err := setMTU(link.SwitchIf); err != nil {
				t.Fatal(err)
			}
			if err := h.Do(func() error { return setMTU("eth0") }); err != nil {
				t.Fatal(err)
			}
		}
		s, err := h.Socket("eth0")
		if err != nil {
			t.Fatal(err)
		}
		socks = append(socks, s)
		ports[i+1] = link.SwitchIf
	}
	return socks, ports
}

// TestControlSocket changes port 2's queue while the switch runs, with
// simple_switch_CLI's commands on the control socket: one packet deep at
// ten packets per second, a burst of ten loses most of itself there.
func TestControlSocket(t *testing.T) {
	socks, ports := twoHosts(t)
	dir := t.TempDir()
	rt := filepath.Join(dir, "s1-runtime.json")
	if err := os.WriteFile(rt, []byte(entries), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "p4switch.sock")
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr bytes.Buffer
	done := make(chan int)
	go func() {
		// Busy-polling too, so that the mode forwards under a test.
		// P4Runtime on a port of its own: 9559 may be another's.
		done <- run(ctx, []string{"-i", "1@" + ports[1], "-i", "2@" + ports[2], rcmJSON, "--entries", rt, "--control", sock, "--busy-poll",
			"--", "--grpc-server-addr", "127.0.0.1:0"}, &stdout, &stderr)
	}()
	// The switch compiles rcm.json first: seconds under the race
	// detector on a busy machine.
	var conn net.Conn
	for deadline := time.Now().Add(20 * time.Second); conn == nil && time.Now().Before(deadline); {
		conn, _ = net.Dial("unix", sock)
		time.Sleep(10 * time.Millisecond)
	}
	if conn == nil {
		cancel()
		t.Fatalf("no control socket: %s", stderr.String())
	}
	replies := bufio.NewScanner(conn)
	for cmd, want := range map[string]string{"set_queue_depth 1 2": "ok", "set_queue_rate 10 2": "ok", "table_add x": "error: unknown command",
		"set_port_rate 1e6 2": "ok", "set_port_rate fast": "error: \"fast\" is not a rate", "set_recirculation_rate 1000": "ok",
		"set_recirculation_rate -1": "error: recirculation rate", "set_port_delay 1ms 2": "ok", "set_port_delay soon": "error: \"soon\" is not a duration"} {
		fmt.Fprintln(conn, cmd)
		if !replies.Scan() || !strings.HasPrefix(replies.Text(), want) {
			t.Errorf("%s: %q, want %s", cmd, replies.Text(), want)
		}
	}
	conn.Close()
	for range 10 {
		if err := socks[0].Send(udp(t, 1, 2)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !regexp.MustCompile(`port 2 \([^)]*\): \d+ frames in, [0-4] out, [1-9]\d* dropped`).MatchString(stdout.String()) {
		t.Errorf("a burst of 10 into a queue one deep at 10 packets/s: %s", stdout.String())
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("the control socket is left behind: %v", err)
	}
}

// TestBadStarts: each wrong start is exit 2 with a message naming the
// problem, and nothing runs.
func TestBadStarts(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{\n \"header_types\": [\n  {\"name\": 1}\n ]\n}\n"), 0o644)
	// ipv6.p4 with its comparisons turned into additions: arithmetic on
	// 128-bit addresses, which the target refuses, naming where.
	v6, err := os.ReadFile("../../p4/testdata/build/ipv6.json")
	if err != nil {
		t.Fatal(err)
	}
	wide := filepath.Join(dir, "wide.json")
	os.WriteFile(wide, bytes.ReplaceAll(v6, []byte(`"op" : "=="`), []byte(`"op" : "+"`)), 0o644)
	topology := filepath.Join(dir, "topology.json")
	os.WriteFile(topology, []byte("{\"hosts\": {}, \"switches\": {}, \"links\": []}\n"), 0o644)
	badEntries := filepath.Join(dir, "e.json")
	os.WriteFile(badEntries, []byte("{\"table_entries\": [\n {\"table\": \"RcmIngress.ipv4_lpm\", \"match\": {\"hdr.ipv4.dst\": [\"10.0.0.1\", 32]},\n  \"action_name\": \"RcmIngress.drop\"}]}"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-i", "1@lo"}, "no program"},
		{[]string{"-i", "1", rcmJSON}, "want PORT@IFACE"},
		{[]string{"-i", "1@no-such-if9", rcmJSON}, "no-such-if9"},
		{[]string{"-i", "1@lo", bad}, "line 3, column"},
		{[]string{"-i", "1@lo", wide}, "hdr.ipv6.src == hdr.ipv6.dst || hdr.ipv6.src == 128w1: or: left: + on a field over 64 bits"},
		{[]string{"-i", "1@lo", filepath.Join(dir, "missing.json")}, "no such file"},
		{[]string{"-i", "1@lo", rcmJSON, "--entries", badEntries}, "e.json:2: match.hdr.ipv4.dst"},
		{[]string{"-i", "1@lo", rcmJSON, "--entries", topology}, "topology.json:1: \"hosts\": this is a topology.json"},
		{[]string{"-i", "1@lo", rcmJSON, "--queue-rate", "2:fast"}, `"fast" is not a number`},
		{[]string{"-i", "1@lo", "--log-level", "loud", rcmJSON}, "--log-level"},
		{[]string{"-i", "1@lo", rcmJSON, "--port-io", "xdp"}, `--port-io: port IO "xdp": want auto, ring, ring-v3, mmsg`},
		{[]string{"-i", "1@lo", rcmJSON, "--", "--priority-queues", "9"}, "want 1 to 8"},
		{[]string{"-i", "1@lo", "--no-p4", "--entries", badEntries}, "entries need a program"},
		{[]string{"-i", "1@lo", rcmJSON, "--", "--cpu-port", "1"}, "--cpu-port 1 is also attached to lo"},
		{[]string{"--no-p4", "--", "--grpc-server-cert", "s.crt", "--grpc-server-key", "s.key"}, "need --grpc-server-ssl; without it P4Runtime would be served in plain text"},
		{[]string{"--no-p4", "--", "--grpc-server-ssl"}, "--grpc-server-ssl needs --grpc-server-cert and --grpc-server-key"},
		{[]string{"--no-p4", "--", "--grpc-server-ssl", "--grpc-server-cert", "s.crt", "--grpc-server-key", "s.key", "--grpc-server-with-client-auth"}, "needs --grpc-server-cacert"},
		{[]string{"--no-p4", "--", "--grpc-server-ssl", "--grpc-server-cert", "s.crt", "--grpc-server-key", "s.key", "--grpc-server-policy", "p.json"}, "it needs --grpc-server-ssl and --grpc-server-with-client-auth"},
		{[]string{"--no-p4", "--", "--grpc-server-ssl", "--grpc-server-cert", filepath.Join(dir, "missing.crt"), "--grpc-server-key", "s.key"}, "missing.crt"},
		{[]string{"--no-p4", "--", "--grpc-keepalive-time", "100ms"}, "want 1s or more"},
		{[]string{"--no-p4", "--", "--grpc-max-streams", "0"}, "--grpc-max-streams 0"},
		{[]string{"--no-p4", "--", "--grpc-max-streams-per-identity", "0"}, "--grpc-max-streams-per-identity 0: want 1 or more"},
		{[]string{"--no-p4", "--", "--grpc-handshake-timeout", "0s"}, "--grpc-handshake-timeout 0s: want more than 0"},
		{[]string{"--no-p4", "--", "--grpc-max-request-bytes", "1000"}, "--grpc-max-request-bytes 1000: want at least --grpc-max-recv-message-size"},
		{[]string{"--no-p4", "--", "--grpc-keepalive-busy-timeout", "1s"}, "--grpc-keepalive-busy-timeout 1s: want at least --grpc-keepalive-timeout (2s)"},
		{[]string{"--no-p4", "--exit-with-fd", "999"}, "--exit-with-fd 999: bad file descriptor"},
	} {
		var stdout, stderr bytes.Buffer
		// A start that is not refused would run until stopped.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		code := run(ctx, c.args, &stdout, &stderr)
		cancel()
		if code != exitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", c.args, code, stderr.String(), c.want)
		}
		t.Logf("%v: %s", c.args, strings.TrimSpace(stderr.String()))
	}
}

// A program given on the command line, its P4Info beside it, is
// P4Runtime's pipeline from the start, with the files' cookie and the
// --entries in its tables, for a controller to read; --p4info names
// another P4Info, and a missing one is a wrong start.
func TestProgramIsP4RuntimePipeline(t *testing.T) {
	dir := t.TempDir()
	rt := filepath.Join(dir, "s1-runtime.json")
	if err := os.WriteFile(rt, []byte(entries), 0o644); err != nil {
		t.Fatal(err)
	}
	start := func(t *testing.T, args ...string) (string, func() string) {
		t.Helper()
		port, err := switchproc.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		ctx, cancel := context.WithCancel(context.Background())
		var stdout, stderr syncBuf
		done := make(chan int)
		go func() { done <- run(ctx, append(args, "--", "--grpc-server-addr", addr), &stdout, &stderr) }()
		// Loading rcm.json and its entries takes a while under -race
		// on a busy machine.
		for deadline := time.Now().Add(90 * time.Second); !strings.Contains(stdout.String(), "p4switch: running"); {
			if time.Now().After(deadline) {
				t.Fatalf("not started in 90 s: %s %s", stdout.String(), stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		return addr, func() string {
			cancel()
			if code := <-done; code != exitOK {
				t.Errorf("exit %d: %s", code, stderr.String())
			}
			return stdout.String()
		}
	}
	addr, stop := start(t, rcmJSON, "--entries", rt)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := controlplane.DialReader(ctx, addr, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, err := controlplane.ReadPipeline("../../p4/build/rcm.p4info.txtpb", rcmJSON, 0)
	if err != nil {
		t.Fatal(err)
	}
	if cookie, running, err := r.RunningCookie(ctx); err != nil || !running || cookie != want.Cookie {
		t.Errorf("pipeline cookie %#x, running %v, %v; want %#x", cookie, running, err, want.Cookie)
	}
	if err := r.AdoptPipeline(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if got, err := r.ReadEntries(ctx, "ipv4_lpm"); err != nil || len(got) != 2 {
		t.Errorf("ipv4_lpm holds %d entries (%v), want the 2 of --entries", len(got), err)
	}
	r.Close()
	if out := stop(); !strings.Contains(out, fmt.Sprintf("P4Runtime pipeline cookie %#x", want.Cookie)) {
		t.Errorf("start line: %s", out)
	}

	// --p4info elsewhere.
	other := filepath.Join(dir, "other.p4info.txtpb")
	info, _ := os.ReadFile("../../p4/build/rcm.p4info.txtpb")
	os.WriteFile(other, info, 0o644)
	_, stop = start(t, rcmJSON, "--p4info", other)
	if out := stop(); !strings.Contains(out, "with "+other) {
		t.Errorf("start line: %s", out)
	}

	var so, se bytes.Buffer
	if code := run(context.Background(), []string{rcmJSON, "--p4info", filepath.Join(dir, "missing.txtpb")}, &so, &se); code != exitUsage || !strings.Contains(se.String(), "missing.txtpb") {
		t.Errorf("a missing --p4info: exit %d, %q", code, se.String())
	}
}

// syncBuf is a bytes.Buffer for one writer and one reader.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The control socket answers every line it is sent, and refuses what it
// cannot take with the reason: port_stats with an argument (told its
// usage, not that it is unknown), a line past 64 KiB (an error, the rest
// of the line skipped, the connection still served), and values past
// the largest a setting takes (1e308 bits per second). The same values
// on the command line are a wrong start.
func TestControlSocketRefusals(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "p4switch.sock")
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr bytes.Buffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"--no-p4", "--control", sock, "--", "--grpc-server-addr", "127.0.0.1:0"}, &stdout, &stderr)
	}()
	defer func() {
		cancel()
		<-done
	}()
	var conn net.Conn
	for deadline := time.Now().Add(20 * time.Second); conn == nil && time.Now().Before(deadline); {
		conn, _ = net.Dial("unix", sock)
		time.Sleep(10 * time.Millisecond)
	}
	if conn == nil {
		t.Fatalf("no control socket: %s", stderr.String())
	}
	defer conn.Close()
	replies := bufio.NewScanner(conn)
	for _, c := range []struct{ cmd, want string }{
		{"port_stats 1", "error: usage: port_stats (no arguments"},
		{strings.Repeat("x", 70001), "error: a line of more than 65536 bytes"},
		{"set_port_rate 1e308", "error: port rate 1e+308: want 0 to 1e+13"},
		{"set_port_rate 1e308 1", "error: port rate 1e+308"},
		{"set_port_rate NaN", "error: port rate NaN"},
		{"set_queue_rate 1e308", "error: queue rate 1e+308"},
		{"set_recirculation_rate 1e308", "error: recirculation rate 1e+308"},
		{"set_port_delay 1000000h", "error: port delay 3.6e+09"},
		{"set_queue_depth 99999999999", "error: queue depth 9.9999999999e+10"},
		{"set_port_rate 1e9", "ok"},
		{"port_stats", "ok"},
	} {
		fmt.Fprintln(conn, c.cmd)
		if !replies.Scan() || !strings.HasPrefix(replies.Text(), c.want) {
			t.Errorf("%.40s: %q, want %q", c.cmd, replies.Text(), c.want)
		}
	}
	for _, args := range [][]string{{"--port-rate", "1e308"}, {"--queue-rate", "2:1e308"}, {"--recirculation-rate", "1e308"},
		{"--port-delay", "1000000h"}, {"--queue-depth", "99999999999"}} {
		var out, errOut bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		code := run(ctx, append([]string{"--no-p4"}, args...), &out, &errOut)
		cancel()
		if code != exitUsage || !strings.Contains(errOut.String(), args[0]) {
			t.Errorf("%v: exit %d, %q; want exit 2 naming %s", args, code, errOut.String(), args[0])
		}
	}
}
