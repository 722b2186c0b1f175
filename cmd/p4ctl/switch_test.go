package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/controlplane"
	"github.com/p4rcm/p4rcm/fabric"
	"github.com/p4rcm/p4rcm/internal/labtest"
	"github.com/p4rcm/p4rcm/internal/p4switchbin"
	"github.com/p4rcm/p4rcm/netlab"
	"github.com/p4rcm/p4rcm/sim/scenario"
	"github.com/p4rcm/p4rcm/switchproc"
	"github.com/p4rcm/p4rcm/tutorialjson"
)

// The switch commands' tests run the real p4ctl binary against a real
// switch over P4Runtime on loopback: the Go target by default, BMv2's
// simple_switch_grpc with P4RCM_TARGET=bmv2.

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// p4ctlBin builds cmd/p4ctl once per test process.
func p4ctlBin(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "p4ctlbin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "p4ctl")
		if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build p4ctl: %v: %s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// result is one run of the binary.
type result struct {
	code        int
	out, errOut string
}

// ctl runs p4ctl with args against the switch at addr, unless args
// name an --addr of their own.
func ctl(t *testing.T, addr string, args ...string) result {
	t.Helper()
	if !slices.Contains(args, "--addr") {
		args = append(args, "--addr", addr)
	}
	cmd := exec.Command(p4ctlBin(t), args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errOut.String()}
}

// ok runs p4ctl and fails the test unless it exits 0.
func ok(t *testing.T, addr string, args ...string) string {
	t.Helper()
	r := ctl(t, addr, args...)
	if r.code != 0 {
		t.Fatalf("p4ctl %s: exit %d: %s", strings.Join(args, " "), r.code, r.errOut)
	}
	return r.out
}

// fails runs p4ctl and fails the test unless it exits with code and
// says each of want on stderr.
func fails(t *testing.T, addr string, code int, want []string, args ...string) {
	t.Helper()
	r := ctl(t, addr, args...)
	if r.code != code {
		t.Errorf("p4ctl %s: exit %d, want %d; stderr %q", strings.Join(args, " "), r.code, code, r.errOut)
	}
	for _, w := range want {
		if !strings.Contains(r.errOut, w) {
			t.Errorf("p4ctl %s: stderr %q lacks %q", strings.Join(args, " "), r.errOut, w)
		}
	}
}

// startTarget starts a switch with no ports and returns its P4Runtime
// address.
func startTarget(t *testing.T) (string, *switchproc.Switch) {
	t.Helper()
	target, bin := p4switchbin.Choose(t)
	addr, thrift := freeSwitchAddr(t)
	sw, err := switchproc.Start(context.Background(), switchproc.Config{Name: "s1", DeviceID: 0, GRPCAddr: addr, ThriftPort: thrift,
		LogDir: t.TempDir(), Target: target, Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sw.Stop() })
	return addr, sw
}

func freePortNumber(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func freeAddr(t *testing.T) string { return fmt.Sprintf("127.0.0.1:%d", freePortNumber(t)) }

// freeSwitchAddr is a P4Runtime address and a Thrift port for one switch,
// on distinct ports.
func freeSwitchAddr(t *testing.T) (string, int) {
	t.Helper()
	grpc, thrift, err := switchproc.FreeSwitchPorts()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", grpc), thrift
}

const route = `set_nexthop(port=2, src_mac=02:00:00:00:01:02, dst_mac=02:00:00:00:00:02)`

// Table entries through the binary: add, a duplicate refused with its
// status code, dump, modify, delete; names by suffix; bad names and
// widths refused before anything is sent, the switch left as it was.
func TestTableCommands(t *testing.T) {
	addr, _ := startTarget(t)
	// The cookie is the committed files', whichever binary sets it.
	files, err := controlplane.ReadPipeline("../../p4/build/rcm.p4info.txtpb", "../../p4/build/rcm.json", 0)
	if err != nil {
		t.Fatal(err)
	}
	if out := ok(t, addr, "pipeline", "set"); !strings.Contains(out, fmt.Sprintf("pipeline set on device 0 at %s: 7 tables, 22 actions, cookie %#x", addr, files.Cookie)) {
		t.Errorf("pipeline set said %q, want the files' cookie %#x", out, files.Cookie)
	}
	if out := ok(t, addr, "pipeline", "get"); !strings.Contains(out, "7 tables") {
		t.Errorf("pipeline get said %q", out)
	}
	ok(t, addr, "table", "add", "ipv4_lpm", "dst_addr=10.0.1.0/24", "--action", route)
	ok(t, addr, "table", "add", "ipv4_lpm", "dst_addr=10.0.2.1", "--action", "drop")
	fails(t, addr, 1, []string{"ALREADY_EXISTS"}, "table", "add", "ipv4_lpm", "dst_addr=10.0.1.0/24", "--action", route)
	want := []string{
		"RcmIngress.ipv4_lpm hdr.ipv4.dst_addr=10.0.1.0/24 RcmIngress.set_nexthop(port=2, src_mac=02:00:00:00:01:02, dst_mac=02:00:00:00:00:02)",
		"RcmIngress.ipv4_lpm hdr.ipv4.dst_addr=10.0.2.1/32 RcmIngress.drop()",
		"RcmIngress.ipv4_lpm (default) RcmIngress.drop()",
	}
	if got := ok(t, addr, "table", "dump", "ipv4_lpm"); got != strings.Join(want, "\n")+"\n" {
		t.Errorf("dump:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}

	// Refused before sending, the table as it was.
	fails(t, addr, 2, []string{"NOT_FOUND", "ipv4_lpm"}, "table", "add", "ipv4_lmp", "dst_addr=10.0.3.0/24", "--action", "drop")
	fails(t, addr, 2, []string{"NOT_FOUND", "closest: hdr.ipv4.dst_addr"}, "table", "add", "ipv4_lpm", "dst_adr=10.0.3.0/24", "--action", "drop")
	fails(t, addr, 2, []string{"INVALID_ARGUMENT", "port", "the field has 9"}, "table", "add", "ipv4_lpm", "dst_addr=10.0.3.0/24",
		"--action", "set_nexthop(port=600, src_mac=1, dst_mac=2)")
	fails(t, addr, 2, []string{"INVALID_ARGUMENT", "want FIELD=VALUE"}, "table", "add", "ipv4_lpm", "10.0.3.0/24", "--action", "drop")
	fails(t, addr, 2, []string{"INVALID_ARGUMENT", "prefix length \"2x\""}, "table", "add", "ipv4_lpm", "dst_addr=10.0.3.0/2x", "--action", "drop")
	fails(t, addr, 2, []string{"--action is required"}, "table", "add", "ipv4_lpm", "dst_addr=10.0.3.0/24")
	fails(t, addr, 2, []string{"no match given", "hdr.ipv4.dst_addr (lpm)", "dst_addr=0.0.0.0/0", "--default"}, "table", "add", "ipv4_lpm", "--action", "drop")
	fails(t, addr, 2, []string{"no match given"}, "table", "delete", "ipv4_lpm")
	fails(t, addr, 2, []string{"unknown flag"}, "table", "add", "ipv4_lpm", "--bogus")
	if got := ok(t, addr, "table", "dump", "ipv4_lpm"); got != strings.Join(want, "\n")+"\n" {
		t.Errorf("after refused writes, dump:\n%s\nwant it unchanged", got)
	}

	ok(t, addr, "table", "modify", "ipv4_lpm", "dst_addr=10.0.1.0/24", "--action", "set_nexthop(port=3, src_mac=0x020000000103, dst_mac=02:00:00:00:00:03)")
	ok(t, addr, "table", "delete", "RcmIngress.ipv4_lpm", "hdr.ipv4.dst_addr=10.0.2.1/32")
	ok(t, addr, "table", "modify", "ipv4_lpm", "--default", "--action", "set_nexthop(port=1, src_mac=0, dst_mac=0)")
	want = []string{
		"RcmIngress.ipv4_lpm hdr.ipv4.dst_addr=10.0.1.0/24 RcmIngress.set_nexthop(port=3, src_mac=02:00:00:00:01:03, dst_mac=02:00:00:00:00:03)",
		"RcmIngress.ipv4_lpm (default) RcmIngress.set_nexthop(port=1, src_mac=00:00:00:00:00:00, dst_mac=00:00:00:00:00:00)",
	}
	if got := ok(t, addr, "table", "dump", "ipv4_lpm"); got != strings.Join(want, "\n")+"\n" {
		t.Errorf("after modify and delete, dump:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	fails(t, addr, 1, []string{"NOT_FOUND"}, "table", "delete", "ipv4_lpm", "dst_addr=10.9.9.0/24")
	if out := ok(t, addr, "table", "list"); !strings.Contains(out, "RcmIngress.ipv4_lpm") || !strings.Contains(out, "hdr.ipv4.dst_addr:lpm/32") {
		t.Errorf("table list:\n%s", out)
	}
}

// ecn, pfc and rcm set write the program's per-port tables with the
// figures in their units converted; pfc keeps what rcm set on the same
// entry and the other way round.
func TestPortCommands(t *testing.T) {
	addr, _ := startTarget(t)
	ok(t, addr, "pipeline", "set")
	ok(t, addr, "ecn", "set", "2", "--kmin", "5KB", "--kmax", "200KB", "--pmax", "0.01")
	ok(t, addr, "pfc", "set", "1", "--xoff", "24KB", "--xon", "21KB", "--rate", "100G", "--mac", "02:00:00:00:01:01")
	ok(t, addr, "rcm", "set", "2")
	ok(t, addr, "rcm", "set", "1", "--cn", "--cn-interval", "3us", "--cn-hold", "30us")
	ok(t, addr, "rcm", "set", "3", "--rate", "3M", "--rate-limit")
	got := ok(t, addr, "table", "dump", "red_config", "ingress_port_config", "rcm_config")
	for _, w := range []string{
		// pmax 2^32 / (kmax - kmin) = 0.01 * 4294967296 / 195000
		"RcmEgress.red_config standard_metadata.egress_port=2 RcmEgress.set_red(kmin_bytes=5000, kmax_bytes=200000, pmax_slope=220, wred_k_bytes=0, buf_max_bytes=0)",
		// a quantum at 100 Gb/s is 5.12 ns; the CN settings of rcm set kept
		"RcmIngress.ingress_port_config standard_metadata.ingress_port=1 RcmIngress.set_port(mac=02:00:00:00:01:01, xoff_bytes=24000, xon_bytes=21000, pause_quanta=65535, quantum_ns=5, pfc_priority=3, cn_enabled=1, cn_interval_ns=3000, cn_ingress_bytes=0, cn_hold_ns=30000)",
		// the simulator's defaults at 100 Gb/s: Q_eq 25 KB, F_b quantum 25 KB * 5 / 63 -> 2^11
		"RcmIngress.rcm_config standard_metadata.egress_spec=2 RcmIngress.set_rcm(sample_every=10, qeq_bytes=25000, wq_shift=1, fb_shift=11, cam_min_hits=2, window_bytes=8000, window_ns=0, high_priority=0, low_priority=0)",
		// at 3 Mb/s W is one 1000-byte frame, and the limit's window its time on the link
		"RcmIngress.rcm_config standard_metadata.egress_spec=3 RcmIngress.set_rcm(sample_every=1, qeq_bytes=0, wq_shift=1, fb_shift=0, cam_min_hits=2, window_bytes=1000, window_ns=2666667, high_priority=0, low_priority=0)",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("dump lacks\n%s\nin\n%s", w, got)
		}
	}
	// pfc set again keeps the CN settings; --off turns PFC off only.
	ok(t, addr, "pfc", "set", "1", "--off")
	if got := ok(t, addr, "table", "dump", "ingress_port_config"); !strings.Contains(got, "xoff_bytes=0, xon_bytes=0") || !strings.Contains(got, "cn_enabled=1, cn_interval_ns=3000") {
		t.Errorf("after pfc set --off:\n%s", got)
	}
	if out := ok(t, addr, "pfc", "set", "3", "--xoff", "auto", "--preset", "trident2"); !strings.Contains(out, "XOFF 24.47 KB, XON 21.47 KB") {
		t.Errorf("pfc set --xoff auto said %q, want trident2's t_PFC 24.47 KB and XON 21.47 KB", out)
	}
	fails(t, addr, 2, []string{"kmax"}, "ecn", "set", "2", "--kmin", "50KB", "--kmax", "5KB")
	fails(t, addr, 2, []string{"--kmin and --kmax are required"}, "ecn", "set", "2")
	fails(t, addr, 2, []string{"--xon is required"}, "pfc", "set", "1", "--xoff", "24KB")
	fails(t, addr, 2, []string{"port \"600\""}, "ecn", "set", "600", "--kmin", "1KB", "--kmax", "2KB")
	fails(t, addr, 2, []string{"cam-min-hits"}, "rcm", "set", "2", "--cam-min-hits", "9")
	fails(t, addr, 2, []string{"--mtu 10 B: want a frame size of 64 B"}, "rcm", "set", "2", "--mtu", "10")
	fails(t, addr, 2, []string{`--rate: "0": must be greater than zero`}, "rcm", "set", "2", "--rate", "0")
	fails(t, addr, 2, []string{"--off turns PFC off on the port: --xoff would set nothing"}, "pfc", "set", "1", "--off", "--xoff", "10KB")
	fails(t, addr, 2, []string{`"10": missing length unit, such as 10m`}, "pfc", "set", "1", "--xoff", "auto", "--cable", "10")
	fails(t, addr, 2, []string{"is a step", "--pmax"}, "ecn", "set", "2", "--kmin", "5KB", "--kmax", "5KB", "--pmax", "0.5")
	if out := ok(t, addr, "ecn", "set", "3", "--kmin", "5KB", "--kmax", "5KB"); !strings.Contains(out, "marks every ECN-capable packet past 5 KB (a step") {
		t.Errorf("ecn set with Kmin = Kmax said %q", out)
	}

	ok(t, addr, "clone", "set", "2", "1")
	if out := ok(t, addr, "stats"); !strings.HasPrefix(strings.TrimSpace(out), "PORT") || !strings.Contains(out, "ECN_MARKS") {
		t.Errorf("stats:\n%s", out)
	}
	// Nothing counted yet: empty lists, not null.
	if out := ok(t, addr, "stats", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("stats --json on a switch that counted nothing: %q, want []", out)
	}
	if out := ok(t, addr, "counter", "read", "ecn_marks", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("counter read --json on a counter that counted nothing: %q, want []", out)
	}
	if out := ok(t, addr, "counter", "read", "ecn_marks", "--index", "2"); !strings.Contains(out, "INDEX") {
		t.Errorf("counter read:\n%s", out)
	}
	if out := ok(t, addr, "counter", "read", "ecn_marks", "--index", "2", "--json"); !strings.Contains(out, `"index": 2`) {
		t.Errorf("counter read --json:\n%s", out)
	}
	fails(t, addr, 2, []string{"--index -1: want a cell, 0 or more"}, "counter", "read", "ecn_marks", "--index", "-1")
	fails(t, addr, 2, []string{"--index 9999: counter ecn_marks has cells 0 to"}, "counter", "read", "ecn_marks", "--index", "9999")
	fails(t, addr, 2, []string{"NOT_FOUND", "ecn_mark"}, "counter", "read", "ecn_mark")
	if out := fabricApply(t, 2, "--scheme", "bogus", "--dry-run"); !strings.Contains(out, `--scheme bogus: scheme: unknown scheme "bogus"`) {
		t.Errorf("fabric apply --scheme bogus: %s", out)
	}
}

// A runtime file in the tutorials' format: dump --json writes one, apply
// installs it on an empty switch, a second apply changes nothing, the
// switch then dumps the same file; --dry-run writes nothing; a malformed
// file is refused naming its line.
func TestApplyRoundTrip(t *testing.T) {
	addr, _ := startTarget(t)
	ok(t, addr, "pipeline", "set")
	ok(t, addr, "table", "add", "ipv4_lpm", "dst_addr=10.0.1.0/24", "--action", route)
	ok(t, addr, "table", "add", "ecmp_member", "ecmp_base=4", "ecmp_offset=1", "--action", route)
	ok(t, addr, "ecn", "set", "2", "--kmin", "5KB", "--kmax", "200KB")
	dumped := ok(t, addr, "table", "dump", "--json")
	file := filepath.Join(t.TempDir(), "s1-runtime.json")
	if err := os.WriteFile(file, []byte(dumped), 0o644); err != nil {
		t.Fatal(err)
	}

	other, _ := startTarget(t)
	ok(t, other, "pipeline", "set")
	dry := ok(t, other, "apply", "--dry-run", file)
	if !strings.Contains(dry, "INSERT RcmIngress.ipv4_lpm hdr.ipv4.dst_addr=10.0.1.0/24") || !strings.Contains(dry, "dry run, nothing written") {
		t.Errorf("apply --dry-run:\n%s", dry)
	}
	if got := ok(t, other, "table", "dump", "ipv4_lpm"); strings.Count(got, "\n") != 1 {
		t.Errorf("after --dry-run the switch holds:\n%s", got)
	}
	if out := ok(t, other, "apply", file); !strings.Contains(out, "3 inserted") {
		t.Errorf("first apply: %q, want 3 inserted", out)
	}
	if out := ok(t, other, "apply", file); !strings.Contains(out, "nothing to change") {
		t.Errorf("second apply: %q, want nothing to change", out)
	}
	if again := ok(t, other, "table", "dump", "--json"); again != dumped {
		t.Errorf("the applied switch dumps\n%s\nwant the file applied\n%s", again, dumped)
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte("{\"table_entries\": [\n {\"table\": \"RcmIngress.ipv4_lpm\",\n  \"match\": {\"hdr.ipv4.dst_addr\": [\"10.0.9.0\", 24]},\n  \"action_name\": \"RcmIngress.set_nexthop\", \"action_params\": {\"port\": 999}}\n]}\n"), 0o644)
	fails(t, other, 1, []string{"bad.json:2", "action_params", "port"}, "apply", bad)
	os.WriteFile(bad, []byte("{\"table_entries\": [\n {\"table\": \n"), 0o644)
	fails(t, other, 1, []string{"bad.json"}, "apply", bad)
	if again := ok(t, other, "table", "dump", "--json"); again != dumped {
		t.Errorf("refused files changed the switch:\n%s", again)
	}
}

// Two controllers: only the primary writes; a backup reads, and is told
// why it may not write; once the primary leaves, the same command
// becomes primary and writes.
func TestTwoControllers(t *testing.T) {
	addr, _ := startTarget(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	primary, err := controlplane.Dial(ctx, addr, 0, controlplane.ElectionID{Low: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close()
	ok(t, addr, "pipeline", "set", "--election-id", "0,11") // higher: primary for its run
	fails(t, addr, 1, []string{"PERMISSION_DENIED", "only the primary writes"},
		"table", "add", "ipv4_lpm", "dst_addr=10.0.1.0/24", "--action", "drop", "--election-id", "0,5")
	if got := ok(t, addr, "table", "dump", "ipv4_lpm", "--election-id", "5"); strings.Contains(got, "10.0.1.0") {
		t.Errorf("a backup's refused write reached the switch:\n%s", got)
	}
	primary.Close()
	ok(t, addr, "table", "add", "ipv4_lpm", "dst_addr=10.0.1.0/24", "--action", "drop", "--election-id", "0,5")
}

// startCtl starts p4ctl with args against addr, and waits until its
// stderr says want.
func startCtl(t *testing.T, addr, want string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(p4ctlBin(t), append(args, "--addr", addr)...)
	var out syncBuffer
	errOut := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = &out, errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(errOut.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("p4ctl %s: no %q in 15 s: %q", strings.Join(args, " "), want, errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cmd, errOut
}

// stopCtl interrupts a p4ctl startCtl started and fails the test unless
// it exits 0.
func stopCtl(t *testing.T, cmd *exec.Cmd, errOut *syncBuffer) {
	t.Helper()
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("p4ctl %s: %v: %s", strings.Join(cmd.Args[1:], " "), err, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Errorf("p4ctl %s still runs 10 s after Ctrl-C", strings.Join(cmd.Args[1:], " "))
	}
}

// watchReady is what watch says once it watches. BMv2 1.15.5's PI keeps
// no roles, so there watch does not take the default role's primary from
// the controllers that write: it says so and watches CNs only.
func watchReady(sw *switchproc.Switch) string {
	if sw.Config().Target == switchproc.TargetBMv2 {
		return "CNs only"
	}
	return "digests, packet-ins and CNs"
}

// watch runs beside every other command: the reads take no part in
// arbitration, the writes are the default role's primary while watch is
// its own role's, commands that write at once wait for each other, and
// a second watch runs beside the first.
func TestWatchBesideOthers(t *testing.T) {
	addr, sw := startTarget(t)
	ok(t, addr, "pipeline", "set")
	watch, watchErr := startCtl(t, addr, watchReady(sw), "watch")
	ok(t, addr, "table", "dump")
	ok(t, addr, "table", "list")
	ok(t, addr, "stats")
	ok(t, addr, "counter", "read", "ecn_marks")
	ok(t, addr, "pipeline", "get")
	ok(t, addr, "table", "add", "ipv4_lpm", "dst_addr=10.0.1.0/24", "--action", route)
	ok(t, addr, "ecn", "set", "2", "--kmin", "5KB", "--kmax", "200KB")
	// Four commands that write at once, with the same election ID.
	var wg sync.WaitGroup
	results := make([]result, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = ctl(t, addr, "table", "add", "ipv4_lpm", fmt.Sprintf("dst_addr=10.0.%d.0/24", 10+i), "--action", "drop")
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Errorf("table add %d beside three others: exit %d: %s", i, r.code, r.errOut)
		}
	}
	if got := ok(t, addr, "table", "dump", "ipv4_lpm"); strings.Count(got, "\n") != 6 {
		t.Errorf("after the writes beside watch, ipv4_lpm holds:\n%s", got)
	}
	secondReady := "election ID 2"
	if sw.Config().Target == switchproc.TargetBMv2 {
		secondReady = watchReady(sw)
	}
	second, secondErr := startCtl(t, addr, secondReady, "watch")
	ok(t, addr, "table", "delete", "ipv4_lpm", "dst_addr=10.0.1.0/24")
	stopCtl(t, second, secondErr)
	stopCtl(t, watch, watchErr)
	if strings.Contains(watchErr.String(), "rror") {
		t.Errorf("watch said %q", watchErr.String())
	}
}

// A switch that stops under watch ends it with exit 1, saying so.
func TestWatchSwitchStops(t *testing.T) {
	addr, sw := startTarget(t)
	ok(t, addr, "pipeline", "set")
	watch, errOut := startCtl(t, addr, watchReady(sw), "watch", "--interval", "100ms")
	sw.Stop()
	done := make(chan error, 1)
	go func() { done <- watch.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("watch: %v, want exit 1", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("watch still runs 10 s after the switch stopped: %s", errOut)
	}
	got := errOut.String()
	if strings.Contains(got, "panic") || !strings.Contains(got, "p4ctl watch: the switch at "+addr+" went away") {
		t.Errorf("watch said %q, want one line saying the switch went away", got)
	}
	t.Logf("%s", got)
}

// A switch that stops answering but keeps its connection open (its
// process stopped) ends watch within --timeout: exit 1, one line saying
// the switch stopped answering, in p4ctl's words, not gRPC's. A
// negative --count is wrong usage.
func TestWatchFrozenSwitch(t *testing.T) {
	addr, sw := startTarget(t)
	ok(t, addr, "pipeline", "set")
	watch, errOut := startCtl(t, addr, watchReady(sw), "watch", "--interval", "100ms", "--timeout", "2s")
	if err := sw.Process().Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer sw.Process().Signal(syscall.SIGCONT)
	frozen := time.Now()
	done := make(chan error, 1)
	go func() { done <- watch.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("watch: %v, want exit 1", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("watch still runs 20 s after the switch froze: %s", errOut)
	}
	t.Logf("watch ended %v after the switch froze: %s", time.Since(frozen).Round(time.Millisecond), errOut)
	got := errOut.String()
	want := "p4ctl watch: the switch at " + addr + " stopped answering: nothing came back within 2s"
	if !strings.Contains(got, want) || strings.Contains(got, "rpc error") || strings.Count(strings.TrimSpace(got[strings.Index(got, "p4ctl watch:"):]), "\n") > 0 {
		t.Errorf("watch said %q, want one line %q", got, want)
	}
	sw.Process().Signal(syscall.SIGCONT)
	fails(t, addr, 2, []string{"--count -1: want how many events"}, "watch", "--count", "-1")
}

// The switch cannot be reached, or is another device: exit 1, saying so;
// a malformed address or timeout: exit 2. Each is told at once, for what
// it is, not after the timeout as "no answer".
func TestSwitchUnreachable(t *testing.T) {
	addr := freeAddr(t) // nothing listens
	quick := func(code int, want []string, args ...string) {
		t.Helper()
		start := time.Now()
		fails(t, addr, code, want, args...)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("p4ctl %s took %v, want an answer at once", strings.Join(args, " "), d)
		}
	}
	quick(1, []string{addr + ": nothing listens there (connection refused)"}, "table", "list")
	quick(1, []string{"nothing listens there"}, "table", "add", "ipv4_lpm", "dst_addr=10.0.1.0/24", "--action", "drop")
	quick(2, []string{"--addr \"127.0.0.1\": want HOST:PORT"}, "stats", "--addr", "127.0.0.1")
	quick(2, []string{"port \"99999\" is not a port number"}, "stats", "--addr", "127.0.0.1:99999")
	quick(1, []string{"host \"no-such-host.invalid\" does not resolve"}, "stats", "--addr", "no-such-host.invalid:9559")
	quick(2, []string{"--timeout -1s: want a duration of 0 or more"}, "stats", "--timeout", "-1s")
	quick(2, []string{"--timeout 0: want a duration above 0"}, "pipeline", "set", "--timeout", "0")
	quick(2, []string{"--watch -1s"}, "stats", "--watch", "-1s")
	quick(2, []string{"--interval 0"}, "watch", "--interval", "0")
	// Something listens, but it is no P4Runtime server.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	fails(t, l.Addr().String(), 1, []string{"takes connections, but no P4Runtime server answered there within 1s"}, "stats", "--timeout", "1s")
	live, sw := startTarget(t)
	wrongDevice := []string{"NOT_FOUND", "device 7"}
	if sw.Config().Target == switchproc.TargetBMv2 {
		// BMv2 takes any device ID as one of its own, with no pipeline
		// (docs/p4runtime.md).
		wrongDevice = []string{"FAILED_PRECONDITION"}
	}
	fails(t, live, 1, wrongDevice, "table", "list", "--device-id", "7")
	fails(t, live, 1, []string{"FAILED_PRECONDITION"}, "table", "list") // no pipeline yet
	fails(t, live, 2, []string{"--election-id"}, "table", "add", "ipv4_lpm", "dst_addr=10.0.1.0/24", "--action", "drop", "--election-id", "x")
}

// startFabric starts a switch for each name and writes the --switches
// file that names them.
func startFabric(t *testing.T, names []string) (string, map[string]*switchproc.Switch) {
	t.Helper()
	sws := map[string]*switchproc.Switch{}
	var parts []string
	for _, n := range names {
		addr, sw := startTarget(t)
		sws[n] = sw
		parts = append(parts, fmt.Sprintf("%q: {\"addr\": %q, \"device_id\": 0}", n, addr))
	}
	file := filepath.Join(t.TempDir(), "switches.json")
	if err := os.WriteFile(file, []byte("{"+strings.Join(parts, ",\n")+"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return file, sws
}

// fabricApply runs p4ctl fabric apply and returns its output.
func fabricApply(t *testing.T, want int, args ...string) string {
	t.Helper()
	cmd := exec.Command(p4ctlBin(t), append([]string{"fabric", "apply"}, args...)...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != want {
		t.Fatalf("p4ctl fabric apply %s: exit %d, want %d:\n%s", strings.Join(args, " "), code, want, out)
	}
	return string(out)
}

// fabric apply on a tutorials triangle of three switches: everything
// inserted, then a second apply changes nothing; a switch restarted in
// between gets the pipeline and all its entries again, nothing else
// changes; --dry-run reports and writes nothing.
func TestFabricApply(t *testing.T) {
	topology := "../../fabric/testdata/triangle.json"
	switches, sws := startFabric(t, []string{"s1", "s2", "s3"})
	args := []string{"--topology", topology, "--switches", switches, "--scheme", "rcm"}

	dry := fabricApply(t, 0, append(args, "--dry-run")...)
	if !strings.Contains(dry, "s1: SET PIPELINE") || !strings.Contains(dry, "dry run, nothing written") {
		t.Errorf("dry run on empty switches:\n%s", dry)
	}
	first := fabricApply(t, 0, args...)
	if !strings.Contains(first, "applied: 3 switches") || strings.Contains(first, "nothing to change") {
		t.Errorf("first apply:\n%s", first)
	}
	if out := fabricApply(t, 0, args...); !strings.Contains(out, "nothing to change") {
		t.Errorf("second apply changed something:\n%s", out)
	}
	addr := sws["s1"].Config().GRPCAddr
	// The fabric's cookie is the same from any binary (this test's and
	// p4ctl's), or a rebuilt p4ctl would take its own fabric for
	// another's.
	tt, err := tutorialjson.LoadTopology(topology)
	if err != nil {
		t.Fatal(err)
	}
	fab, err := fabric.FromTutorial(tt)
	if err != nil {
		t.Fatal(err)
	}
	pipe, err := fab.Pipeline()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := controlplane.DialReader(ctx, addr, 0)
	if err != nil {
		t.Fatal(err)
	}
	if cookie, _, err := r.RunningCookie(ctx); err != nil || cookie != pipe.Cookie {
		t.Errorf("s1 runs cookie %#x (%v); this test makes the fabric's %#x", cookie, err, pipe.Cookie)
	}
	r.Close()
	route := ok(t, addr, "table", "dump", "ipv4_lpm")
	if !strings.Contains(route, "hdr.ipv4.dst_addr=10.0.2.2/32 RcmIngress.set_nexthop(port=2") {
		t.Errorf("s1 holds no route to h2 through port 2:\n%s", route)
	}
	if dry := fabricApply(t, 0, append(args, "--dry-run")...); !strings.Contains(dry, "nothing to change") {
		t.Errorf("dry run after apply:\n%s", dry)
	}

	// s2 restarts: empty, no pipeline.
	sws["s2"].Stop()
	cfg := sws["s2"].Config()
	cfg.Control = ""
	again, err := switchproc.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { again.Stop() })
	out := fabricApply(t, 0, args...)
	var s1, s2 string
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "s1 "):
			s1 = line
		case strings.HasPrefix(line, "s2 "):
			s2 = line
		}
	}
	if f := strings.Fields(s2); len(f) < 6 || f[2] != "set" || f[3] == "0" || f[5] != "0" {
		t.Errorf("restarted s2: %q, want the pipeline set and every entry inserted", s2)
	}
	if f := strings.Fields(s1); len(f) < 6 || f[2] != "kept" || f[3] != "0" || f[4] != "0" {
		t.Errorf("s1 after s2's restart: %q, want nothing changed", s1)
	}
	if out := fabricApply(t, 0, args...); !strings.Contains(out, "nothing to change") {
		t.Errorf("apply after convergence changed something:\n%s", out)
	}
	if dump := ok(t, addr, "table", "dump", "ipv4_lpm"); dump != route {
		t.Errorf("s1's routes changed:\n%s\nwas\n%s", dump, route)
	}
}

// fabric apply programs only switches that run no program or its own
// fabric's: one running rcm.p4 set by hand, or another fabric's, is
// refused and left as it was, until --replace.
func TestFabricApplyRefusesOthersSwitches(t *testing.T) {
	switches, sws := startFabric(t, []string{"s1", "s2", "s3"})
	triangle := []string{"--topology", "../../fabric/testdata/triangle.json", "--switches", switches}
	s1 := sws["s1"].Config().GRPCAddr
	ok(t, s1, "pipeline", "set") // by hand
	ok(t, s1, "table", "add", "ipv4_lpm", "dst_addr=10.9.0.0/16", "--action", "drop")
	out := fabricApply(t, 1, triangle...)
	if !strings.Contains(out, "runs another pipeline") || !strings.Contains(out, "--replace") || !strings.Contains(out, "1 of 3 switches failed") {
		t.Errorf("fabric apply on a switch set by hand:\n%s", out)
	}
	if dump := ok(t, s1, "table", "dump", "ipv4_lpm"); !strings.Contains(dump, "10.9.0.0/16") || strings.Count(dump, "\n") != 2 {
		t.Errorf("the refused switch changed:\n%s", dump)
	}
	// Another fabric (the triangle's first two switches as a line of
	// two) finds the triangle's switches not its own.
	line := filepath.Join(t.TempDir(), "line.json")
	os.WriteFile(line, []byte(`{"hosts": {"h1": {"ip": "10.0.1.1/24", "mac": "08:00:00:00:01:11"}, "h2": {"ip": "10.0.2.2/24", "mac": "08:00:00:00:02:22"}},
 "switches": {"s2": {}, "s3": {}}, "links": [["h1", "s2-p1"], ["h2", "s3-p1"], ["s2-p2", "s3-p2"]]}`), 0o644)
	out = fabricApply(t, 1, "--topology", line, "--switches", switches)
	if strings.Count(out, "runs another pipeline") != 2 {
		t.Errorf("another fabric's apply on the triangle's switches:\n%s", out)
	}
	if out := fabricApply(t, 1, append(triangle, "--dry-run")...); !strings.Contains(out, "runs another pipeline") {
		t.Errorf("dry run:\n%s", out)
	}
	out = fabricApply(t, 0, append(triangle, "--replace")...)
	if !strings.Contains(out, "applied: 3 switches") {
		t.Errorf("--replace:\n%s", out)
	}
	if dump := ok(t, s1, "table", "dump", "ipv4_lpm"); strings.Contains(dump, "10.9.0.0/16") {
		t.Errorf("--replace kept the entries set by hand:\n%s", dump)
	}
}

// fabric apply on a k=4 fat tree of 20 switches, then again.
func TestFabricApplyFatTree(t *testing.T) {
	sc, err := scenario.LoadPreset("default")
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.SetFrom("test", "topology.k", "4"); err != nil {
		t.Fatal(err)
	}
	cfg, err := sc.BuildNetwork()
	if err != nil {
		t.Fatal(err)
	}
	f, err := fabric.FromTopology(cfg.Topology)
	if err != nil {
		t.Fatal(err)
	}
	switches, _ := startFabric(t, f.SwitchNames())
	args := []string{"--preset", "default", "--k", "4", "--scheme", "rcm", "--switches", switches}
	first := fabricApply(t, 0, args...)
	if !strings.Contains(first, "applied: 20 switches") || strings.Contains(first, "nothing to change") {
		t.Errorf("first apply:\n%s", first)
	}
	if out := fabricApply(t, 0, args...); !strings.Contains(out, "nothing to change") {
		t.Errorf("second apply:\n%s", out)
	}
}

// A switch that cannot be reached fails alone: the others are
// programmed, exit 1.
func TestFabricApplyUnreachable(t *testing.T) {
	switches, _ := startFabric(t, []string{"s1", "s2"})
	data, _ := os.ReadFile(switches)
	patched := strings.Replace(string(data), "}\n", ",\n\"s3\": {\"addr\": \""+freeAddr(t)+"\", \"device_id\": 1}}\n", 1)
	os.WriteFile(switches, []byte(patched), 0o644)
	out := fabricApply(t, 1, "--topology", "../../fabric/testdata/triangle.json", "--switches", switches, "--timeout", "1s")
	if !strings.Contains(out, "nothing listens there (connection refused)") || !strings.Contains(out, "1 of 3 switches failed") ||
		!strings.Contains(out, "applied: 2 of 3 switches (1 failed)") {
		t.Errorf("output:\n%s", out)
	}
	if strings.Count(out, " set ") != 2 || !regexp.MustCompile(`(?m)^s3 +\S+ +- `).MatchString(out) {
		t.Errorf("want s1 and s2 programmed, s3's pipeline unknown (-):\n%s", out)
	}
}

// A switch that stops answering (frozen) while fabric apply runs: its
// row says it failed and that its pipeline is not known, and the
// summary counts it out; a dry run says so the same way, in words.
func TestFabricApplyFrozenSwitch(t *testing.T) {
	switches, sws := startFabric(t, []string{"s1", "s2", "s3"})
	args := []string{"--topology", "../../fabric/testdata/triangle.json", "--switches", switches, "--timeout", "1s"}
	fabricApply(t, 0, args...)
	pid := sws["s2"].PID()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	out := fabricApply(t, 1, args...)
	if !regexp.MustCompile(`(?m)^s2 +\S+ +- .*no P4Runtime server answered there within 1s`).MatchString(out) ||
		!strings.Contains(out, "applied: 2 of 3 switches (1 failed)") {
		t.Errorf("apply with s2 frozen:\n%s", out)
	}
	out = fabricApply(t, 1, append(args, "--dry-run")...)
	if strings.Contains(out, "rpc error") || !strings.Contains(out, "dry run, nothing written: 2 of 3 switches (1 failed)") {
		t.Errorf("dry run with s2 frozen:\n%s", out)
	}
}

// udpFrame is a UDP frame from 10.0.0.1 to dst, sport picking the flow.
func udpFrame(dstMAC net.HardwareAddr, dst net.IP, sport uint16) []byte {
	f := make([]byte, 200)
	copy(f, dstMAC)
	copy(f[6:], net.HardwareAddr{2, 0, 0, 0, 0, 1})
	f[12], f[13] = 0x08, 0x00
	ip := f[14:34]
	ip[0], ip[1], ip[8], ip[9] = 0x45, 26<<2|2, 64, 17 // DSCP 26, ECT(0)
	ip[2], ip[3] = 0, byte(len(f)-14)
	copy(ip[12:], net.IPv4(10, 0, 0, 1).To4())
	copy(ip[16:], dst.To4())
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(ip[i])<<8 | uint32(ip[i+1])
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	ip[10], ip[11] = byte(^sum>>8), byte(^sum)
	udp := f[34:42]
	udp[0], udp[1], udp[2], udp[3] = byte(sport>>8), byte(sport), 0x12, 0xb7 // to 4791
	udp[4], udp[5] = 0, byte(len(f)-34)
	return f
}

// watch prints rcm.p4's CAM digest, decoded, when a burst into a slow
// port puts it in RCC: the switch on veths to two hosts, configured with
// p4ctl only, real frames (as root; skipped otherwise).
func TestWatchDigests(t *testing.T) {
	labtest.Require(t)
	lab, err := netlab.New("p4w")
	if err != nil {
		t.Fatal(err)
	}
	defer lab.Close()
	ports := map[int]string{}
	var tx *netlab.Socket
	for n := 1; n <= 2; n++ {
		h, err := lab.Host(fmt.Sprintf("h%d", n))
		if err != nil {
			t.Fatal(err)
		}
		link, err := lab.Link(h, "eth0", net.HardwareAddr{2, 0, 0, 0, 0, byte(n)})
		if err != nil {
			t.Fatal(err)
		}
		ports[n] = link.SwitchIf
		if n == 1 {
			if tx, err = h.Socket("eth0"); err != nil {
				t.Fatal(err)
			}
		}
	}
	target, bin := p4switchbin.Choose(t)
	if target == switchproc.TargetBMv2 {
		t.Skip("skipping: BMv2 1.15.5's PI keeps no roles, so watch takes no digests beside the controllers that write (it watches CNs only: TestWatchBesideOthers)")
	}
	addr, thrift := freeSwitchAddr(t)
	sw, err := switchproc.Start(context.Background(), switchproc.Config{Name: "s1", DeviceID: 0, Ports: ports, GRPCAddr: addr,
		ThriftPort: thrift, LogDir: t.TempDir(), Target: target, Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Stop()
	ok(t, addr, "pipeline", "set")
	ok(t, addr, "table", "add", "ipv4_lpm", "dst_addr=10.0.0.2", "--action", "set_nexthop(port=2, src_mac=02:00:00:00:01:02, dst_mac=02:00:00:00:00:02)")
	// Every packet a sample; in RCC above 2 KB queued.
	ok(t, addr, "rcm", "set", "2", "--sample-every", "1", "--qeq", "2KB", "--fb-quantum", "256B", "--cam-min-hits", "1", "--window", "2KB")
	if err := sw.SetQueueRate(2, 100); err != nil {
		t.Fatal(err)
	}

	watch := exec.Command(p4ctlBin(t), "watch", "--count", "1", "--addr", addr)
	var out, errOut strings.Builder
	watch.Stdout, watch.Stderr = &out, &errOut
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- watch.Wait() }()
	time.Sleep(500 * time.Millisecond) // watch has enabled the digest
	// Reads and writes beside watch leave it the digests.
	ok(t, addr, "table", "dump", "ipv4_lpm")
	ok(t, addr, "ecn", "set", "1", "--kmin", "5KB", "--kmax", "200KB")
	for i := range 20 {
		if err := tx.Send(udpFrame(net.HardwareAddr{2, 0, 0, 0, 1, 1}, net.IPv4(10, 0, 0, 2), uint16(5000+i%2))); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("watch: %v: %s", err, errOut.String())
		}
	case <-time.After(15 * time.Second):
		watch.Process.Kill()
		<-done
		t.Fatalf("watch printed no event in 15 s; stdout %q, stderr %q", out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "cam port 2:") || strings.Count(out.String(), " ") < 9 {
		t.Errorf("watch printed %q, want a CAM digest of port 2 with its 8 entries", out.String())
	}
}

// fabric apply --keep reprograms a switch that restarts, within a round,
// and stops cleanly on Ctrl-C.
func TestFabricApplyKeep(t *testing.T) {
	switches, sws := startFabric(t, []string{"s1", "s2", "s3"})
	cmd := exec.Command(p4ctlBin(t), "fabric", "apply", "--topology", "../../fabric/testdata/triangle.json",
		"--switches", switches, "--keep", "200ms")
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	done := make(chan struct{}) // closed when the process has ended
	go func() { waitErr = cmd.Wait(); close(done) }()
	defer func() {
		select {
		case <-done:
		default:
			cmd.Process.Kill()
			<-done
		}
	}()
	waitFor := func(what string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(out.String(), what) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q in 20 s:\n%s", what, out.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("applied: 3 switches")
	sws["s2"].Stop()
	cfg := sws["s2"].Config()
	cfg.Control = ""
	again, err := switchproc.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { again.Stop() })
	waitFor("s2: pipeline set, 12 inserted")
	if route := ok(t, cfg.GRPCAddr, "table", "dump", "ipv4_lpm"); !strings.Contains(route, "10.0.1.1/32") {
		t.Errorf("restarted s2 holds no route to h1:\n%s", route)
	}
	cmd.Process.Signal(os.Interrupt)
	select {
	case <-done:
		if waitErr != nil {
			t.Errorf("after Ctrl-C: %v\n%s", waitErr, out.String())
		}
	case <-time.After(10 * time.Second):
		t.Errorf("--keep did not stop on Ctrl-C:\n%s", out.String())
	}
}

// syncBuffer is a strings.Builder safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Errors read as the user's words: no Go package names ("controlplane:",
// "bmv2", ...) and none of gRPC's own wording ("rpc error: code =").
func TestMessagesWithoutPackageNames(t *testing.T) {
	addr, _ := startTarget(t)
	prefixes := regexp.MustCompile(`(^|: )(controlplane|netlab|agent|afpacket|p4rt|fabric|roce|emulate): |bmv2[ :]|rpc error|code = `)
	var errs []string
	check := func(r result, args ...string) {
		t.Helper()
		if r.code == 0 {
			t.Errorf("p4ctl %s: exit 0, want a failure", strings.Join(args, " "))
		}
		errs = append(errs, r.errOut)
		if prefixes.MatchString(r.errOut) {
			t.Errorf("p4ctl %s: %q names a package or gRPC's wording", strings.Join(args, " "), r.errOut)
		}
	}
	noPipeline := ctl(t, addr, "stats")
	if !strings.Contains(noPipeline.errOut, "runs no pipeline yet: 'p4ctl pipeline set'") {
		t.Errorf("stats on a switch without a pipeline: %q", noPipeline.errOut)
	}
	for _, args := range [][]string{
		{"table", "list"}, // no pipeline yet
		{"pipeline", "get"},
		{"stats"},
		{"table", "add", "ipv4_lpm", "dst_addr=10.0.1.0/24", "--action", "drop"},
		{"table", "list", "--device-id", "7"},
	} {
		check(ctl(t, addr, args...), args...)
	}
	ok(t, addr, "pipeline", "set")
	for _, args := range [][]string{
		{"counter", "read", "no_such_counter"},
		{"table", "delete", "ipv4_lpm", "dst_addr=10.9.9.0/24"},
		{"table", "dump", "no_such_table"},
	} {
		check(ctl(t, addr, args...), args...)
	}
	if topo := "../../fabric/testdata/triangle.json"; true {
		out := fabricApply(t, 1, "--topology", topo, "--switches", writeSwitches(t, map[string]string{"s1": addr, "s2": freeAddr(t), "s3": addr}))
		if prefixes.MatchString(out) {
			t.Errorf("fabric apply: %s", out)
		}
	}
	t.Logf("%s", strings.Join(errs, ""))
}

// writeSwitches writes a --switches file: each switch at its address,
// device 0.
func writeSwitches(t *testing.T, addrs map[string]string) string {
	t.Helper()
	var parts []string
	for n, a := range addrs {
		parts = append(parts, fmt.Sprintf("%q: {\"addr\": %q, \"device_id\": 0}", n, a))
	}
	file := filepath.Join(t.TempDir(), "switches.json")
	if err := os.WriteFile(file, []byte("{"+strings.Join(parts, ",\n")+"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}
