package v1model

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4rcm/p4rcm/controlplane"
	"github.com/p4rcm/p4rcm/netlab"
	"github.com/p4rcm/p4rcm/switchproc"
	"github.com/p4rcm/p4rcm/v1model/bmjson"
)

// TestSharedDocument replays every golden file through two switches
// compiled from one decoded program and one Trees, both at once, and
// then holds the document to the program decoded afresh: New, the
// entries and the packets only read a document, so the switches of one
// process may share it (p4rt decodes a program once per process, the
// switches of a group compile from that), and a switch compiled with
// trees another compile parsed forwards as one compiled alone. Under
// -race the two replays also show that sharing them is no data race.
func TestSharedDocument(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, ".runtime.json") {
			continue
		}
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			g, err := LoadGolden(f)
			if err != nil {
				t.Fatal(err)
			}
			program := filepath.Join(filepath.Dir(f), g.Program)
			doc, err := bmjson.Load(program)
			if err != nil {
				t.Fatal(err)
			}
			trees := &Trees{}
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(func() {
					diffs, err := replay(f, doc, trees, false)
					if err != nil {
						t.Error(err)
					}
					for _, d := range diffs {
						t.Error(d)
					}
				})
			}
			wg.Wait()
			fresh, err := bmjson.Load(program)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(doc, fresh) {
				t.Errorf("%s: compiling and running the program changed its decoded document", program)
			}
			// And a third, compiled with every tree the first two parsed.
			diffs, err := replay(f, doc, trees, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range diffs {
				t.Error(d)
			}
		})
	}
}

// TestTreesSpareTheSecondCompile: a switch compiled with the Trees of an
// earlier compile of the same document parses none of its expressions
// again, which shows in what it allocates.
func TestTreesSpareTheSecondCompile(t *testing.T) {
	doc, err := bmjson.Load("../p4/build/rcm.json")
	if err != nil {
		t.Fatal(err)
	}
	compile := func(trees *Trees) float64 {
		return testing.AllocsPerRun(3, func() {
			// Interpreted: the generator's own allocations (gen.go) are
			// the same either way and not what is measured.
			if _, err := New(doc, Config{Trees: trees, Interpret: true}); err != nil {
				t.Fatal(err)
			}
		})
	}
	alone := compile(nil)
	trees := &Trees{}
	if _, err := New(doc, Config{Trees: trees}); err != nil {
		t.Fatal(err)
	}
	if shared := compile(trees); shared > 0.8*alone {
		t.Errorf("a compile with the trees of an earlier one made %.0f allocations, one alone %.0f: want a fifth fewer at least", shared, alone)
	}
}

var record = flag.Bool("record", false, "record the golden files on BMv2's simple_switch_grpc (root, BMv2 on the PATH)")

// TestGoldenReplay replays every golden file, recorded on BMv2, through
// the Go target: the same frames on the same ports in the same order,
// the same counters and registers.
func TestGoldenReplay(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.json")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".runtime.json") {
			continue
		}
		n++
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			g, err := LoadGolden(f)
			if err != nil {
				t.Fatal(err)
			}
			if g.RecordedWith == "" {
				t.Fatalf("%s was never recorded: run go test ./v1model -run TestRecordGolden -record where BMv2 is", f)
			}
			// Both ways a control runs: as the code generated for it
			// where that is built in (gen_controls*.go), and interpreted.
			for _, interpret := range []bool{false, true} {
				diffs, err := replay(f, nil, nil, interpret)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range diffs {
					t.Errorf("interpret=%v: %s", interpret, d)
				}
			}
		})
	}
	if n == 0 {
		t.Fatal("no golden files in testdata/golden")
	}
}

// TestRecordGolden records the golden files on BMv2: each case's frames
// go, one at a time, to simple_switch_grpc on veths; what every port
// sends, and the counters and registers after, are written back into the
// file.
func TestRecordGolden(t *testing.T) {
	if !*record {
		t.Skip("recording runs with -record, where BMv2 is installed")
	}
	for _, b := range []string{switchproc.SwitchBinary, switchproc.CLIBinary} {
		if _, err := switchproc.Lookup(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := netlab.Available(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("testdata/golden/*.json")
	for _, f := range files {
		if strings.HasSuffix(f, ".runtime.json") {
			continue
		}
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) { recordCase(t, f) })
	}
}

func recordCase(t *testing.T, path string) {
	g, err := LoadGolden(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(path)
	program := filepath.Join(dir, g.Program)
	gosw, err := Load(program, Config{})
	if err != nil {
		t.Fatal(err)
	}
	rt := &Runtime{}
	if g.Runtime != "" {
		if rt, err = LoadRuntime(filepath.Join(dir, g.Runtime)); err != nil {
			t.Fatal(err)
		}
	}
	cmds, err := gosw.CLICommands(rt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	lab, err := netlab.New("gold")
	if err != nil {
		t.Fatal(err)
	}
	defer lab.Close()
	ports := map[int]string{}
	socks := map[int]*netlab.Socket{}
	for _, n := range g.Ports {
		h, err := lab.Host(fmt.Sprintf("h%d", n))
		if err != nil {
			t.Fatal(err)
		}
		link, err := lab.Link(h, "eth0", nil)
		if err != nil {
			t.Fatal(err)
		}
		ports[n] = link.SwitchIf
		if socks[n], err = h.Socket("eth0"); err != nil {
			t.Fatal(err)
		}
	}
	free, err := switchproc.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	grpcPort, thrift := free[0], free[1]
	abs, _ := filepath.Abs(program)
	sw, err := switchproc.Start(ctx, switchproc.Config{Name: "gold", DeviceID: 1, Ports: ports, GRPCAddr: fmt.Sprintf("127.0.0.1:%d", grpcPort),
		ThriftPort: thrift, JSON: abs, LogDir: t.TempDir(), PriorityQueues: g.PriorityQueues})
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Stop()
	// Digests come over P4Runtime: push the same program with its P4Info,
	// ask for every digest at once (lists of one, no duplicate filter),
	// and collect them.
	stopDigests := recordDigests(t, ctx, fmt.Sprintf("127.0.0.1:%d", grpcPort), program)
	for p, pps := range g.QueueRates {
		cmds = append(cmds, fmt.Sprintf("set_queue_rate %v %s", pps, p))
	}
	for p, depth := range g.QueueDepths {
		cmds = append(cmds, fmt.Sprintf("set_queue_depth %d %s", depth, p))
	}
	if len(cmds) > 0 {
		if err := sw.CLI(cmds...); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range socks {
		if _, err := s.Drain(); err != nil {
			t.Fatal(err)
		}
	}
	g.Sent = map[string][]string{}
	collect := func(quietFor time.Duration) {
		quiet := time.Now()
		for time.Since(quiet) < quietFor {
			for _, n := range g.Ports {
				got, err := socks[n].Recv(time.Millisecond)
				if errors.Is(err, netlab.ErrTimeout) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				k := strconv.Itoa(n)
				g.Sent[k] = append(g.Sent[k], hex.EncodeToString(got))
				quiet = time.Now()
			}
		}
	}
	// simple_switch starts a rate-limited queue's clock when the rate is
	// set: the first frame would wait out a gap from then. Let it pass.
	time.Sleep(g.quiet(1))
	sinceWait := 0
	for i, gp := range g.Packets {
		if i > 0 && !gp.Burst {
			collect(g.quiet(sinceWait))
			sinceWait = 0
		}
		sinceWait++
		time.Sleep(time.Duration(gp.GapUs) * time.Microsecond)
		frame, err := hex.DecodeString(gp.Frame)
		if err != nil {
			t.Fatalf("packets[%d]: %v", i, err)
		}
		s := socks[gp.Port]
		if s == nil {
			t.Fatalf("packets[%d]: port %d is not in ports", i, gp.Port)
		}
		if err := s.Send(frame); err != nil {
			t.Fatal(err)
		}
	}
	collect(g.quiet(sinceWait))
	g.Digests = stopDigests()
	g.DigestsRecorded = true
	g.Digests = stopDigests()
	g.DigestsRecorded = true
	g.Counters, g.Registers = map[string]map[string][2]uint64{}, map[string]map[string]uint64{}
	var reads []string
	for _, name := range gosw.Counters() {
		for i := 0; i < gosw.CounterSize(name); i++ {
			reads = append(reads, fmt.Sprintf("counter_read %s %d", name, i))
		}
	}
	for _, name := range gosw.Registers() {
		reads = append(reads, "register_read "+name)
	}
	// Direct counters by entry handle: BMv2 numbers a table's entries from
	// 0 in the order they were added, as the runtime JSON adds them.
	direct := map[string]int{}
	counted := gosw.CountedTables()
	for _, re := range rt.Entries {
		if name, ok := counted[re.Table]; ok && !re.Default {
			reads = append(reads, fmt.Sprintf("counter_read %s %d", name, direct[re.Table]))
			direct[re.Table]++
		}
	}
	out, err := sw.CLIOutput(reads...)
	if err != nil {
		t.Fatal(err)
	}
	if err := parseReads(out, g); err != nil {
		t.Fatal(err)
	}
	g.DirectCounters = map[string][][2]uint64{}
	for table, name := range gosw.CountedTables() {
		cells := g.Counters[name]
		delete(g.Counters, name)
		for i := range direct[table] {
			g.DirectCounters[table] = append(g.DirectCounters[table], cells[strconv.Itoa(i)])
		}
	}
	version, _ := exec.Command(mustLookup(t, switchproc.SwitchBinary), "--version").Output()
	g.RecordedWith = "BMv2 simple_switch_grpc " + strings.TrimSpace(string(version))
	data, err := json.MarshalIndent(g, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d frames in, %d ports sent", path, len(g.Packets), len(g.Sent))
}

// recordDigests opens a P4Runtime session to the switch, pushes the
// program (its P4Info beside the JSON), enables every digest and gathers
// the lists until the returned function is called.
func recordDigests(t *testing.T, ctx context.Context, addr, program string) func() []GoldenDigest {
	t.Helper()
	pipeline, err := controlplane.ReadPipeline(strings.TrimSuffix(program, ".json")+".p4info.txtpb", program, 0)
	if err != nil {
		t.Fatal(err)
	}
	info := pipeline.Info
	s, err := controlplane.Dial(ctx, addr, 1, controlplane.ElectionID{Low: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetPipeline(ctx, pipeline); err != nil {
		t.Fatal(err)
	}
	names := map[uint32]string{}
	for _, d := range info.Digests {
		names[d.Preamble.Id] = d.Preamble.Name
		if err := s.EnableDigest(ctx, d.Preamble.Name, 0, 1, 0); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var got []GoldenDigest
	done := make(chan struct{})
	go func() {
		defer close(done)
		for list := range s.Digests() {
			for _, d := range list.Data {
				var values []uint64
				members := []*p4v1.P4Data{d}
				if st := d.GetStruct(); st != nil {
					members = st.Members
				}
				for _, m := range members {
					if len(m.GetBitstring()) > 8 {
						t.Errorf("digest %s: a member of %d bytes: the recorder takes digests of fields up to 64 bits", names[list.DigestId], len(m.GetBitstring()))
					}
					var v uint64
					for _, b := range m.GetBitstring() {
						v = v<<8 | uint64(b)
					}
					values = append(values, v)
				}
				mu.Lock()
				got = append(got, GoldenDigest{List: names[list.DigestId], Values: values})
				mu.Unlock()
			}
		}
	}()
	return func() []GoldenDigest {
		s.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return got
	}
}

func mustLookup(t *testing.T, bin string) string {
	p, err := switchproc.Lookup(bin)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var (
	counterLine  = regexp.MustCompile(`(\S+)\[(\d+)\]=\s*\((\d+) bytes, (\d+) packets\)`)
	registerLine = regexp.MustCompile(`(?:RuntimeCmd: )?(\S+)=\s*(.*)$`)
)

// parseReads reads simple_switch_CLI's counter_read and register_read
// output into the golden's non-zero cells.
func parseReads(out string, g *Golden) error {
	for _, line := range strings.Split(out, "\n") {
		if m := counterLine.FindStringSubmatch(line); m != nil {
			by, _ := strconv.ParseUint(m[3], 10, 64)
			pk, _ := strconv.ParseUint(m[4], 10, 64)
			if pk != 0 || by != 0 {
				if g.Counters[m[1]] == nil {
					g.Counters[m[1]] = map[string][2]uint64{}
				}
				g.Counters[m[1]][m[2]] = [2]uint64{pk, by}
			}
			continue
		}
		if m := registerLine.FindStringSubmatch(line); m != nil && !strings.Contains(m[1], "[") && isNumbers(m[2]) {
			for i, v := range strings.Split(m[2], ",") {
				n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
				if err != nil {
					return fmt.Errorf("register %s: %q: %v", m[1], v, err)
				}
				if n != 0 {
					if g.Registers[m[1]] == nil {
						g.Registers[m[1]] = map[string]uint64{}
					}
					g.Registers[m[1]][strconv.Itoa(i)] = n
				}
			}
		}
	}
	return nil
}

func isNumbers(s string) bool {
	for _, f := range strings.Split(s, ",") {
		if _, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64); err != nil {
			return false
		}
	}
	return s != ""
}
