package p4rt_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/p4rcm/p4rcm/internal/p4switchbin"
	"github.com/p4rcm/p4rcm/internal/proccpu"
	"github.com/p4rcm/p4rcm/p4rt"
	"github.com/p4rcm/p4rcm/switchproc"
)

// startTarget runs a switch process with no program and no interfaces,
// p4switch (the Go target, built from this module) or BMv2's
// simple_switch_grpc (skipped when not installed), and returns a
// P4Runtime client of it.
func startTarget(tb testing.TB, target switchproc.Target) p4v1.P4RuntimeClient {
	c, _ := startTargetProcess(tb, target)
	return c
}

// startTargetProcess is startTarget that also returns the process, for
// benchmarks that charge it with its CPU time.
func startTargetProcess(tb testing.TB, target switchproc.Target) (p4v1.P4RuntimeClient, int) {
	c, sw := startTargetSwitch(tb, target)
	return c, sw.PID()
}

// startTargetSwitch is startTarget that also returns the switch: its
// process and address.
func startTargetSwitch(tb testing.TB, target switchproc.Target) (p4v1.P4RuntimeClient, *switchproc.Switch) {
	tb.Helper()
	cfg := switchproc.Config{Name: "p4rt-" + string(target), DeviceID: device, Target: target}
	switch target {
	case switchproc.TargetGo:
		bin, err := p4switchbin.Path()
		if err != nil {
			tb.Fatal(err)
		}
		cfg.Binary = bin
	case switchproc.TargetBMv2:
		if _, err := switchproc.Lookup(switchproc.SwitchBinary); err != nil {
			tb.Skipf("skipping BMv2: %v", err)
		}
	}
	free, err := switchproc.FreePorts(2)
	if err != nil {
		tb.Fatal(err)
	}
	grpcPort := free[0]
	cfg.ThriftPort = free[1]
	cfg.GRPCAddr = fmt.Sprintf("127.0.0.1:%d", grpcPort)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sw, err := switchproc.Start(ctx, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = sw.Stop() })
	return dial(tb, cfg.GRPCAddr), sw
}

// dial is a P4Runtime client of addr, closed when tb ends.
func dial(tb testing.TB, addr string) p4v1.P4RuntimeClient {
	tb.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return p4v1.NewP4RuntimeClient(conn)
}

// step is one request of a conformance sequence: a Write of each update
// on its own, or a Read.
type step struct {
	name    string
	updates []*p4v1.Update
	read    []*p4v1.Entity
}

func writes(name string, us ...*p4v1.Update) step { return step{name: name, updates: us} }
func reads(name string, ms ...proto.Message) step {
	s := step{name: name}
	for _, m := range ms {
		s.read = append(s.read, entity(m))
	}
	return s
}

// outcome is what a target answered to a step: a code per update, or a
// Read's code and entities (as text, sorted, since the spec leaves
// their order to the target, replicas of a group included); and the
// messages that came with the codes.
func outcome(tb testing.TB, c p4v1.P4RuntimeClient, ct *controller, s step) (answer, messages string) {
	tb.Helper()
	var b, m strings.Builder
	for _, u := range s.updates {
		st := writeStatus(c, ct, u)[0]
		fmt.Fprintf(&b, "%v ", st.Code())
		fmt.Fprintf(&m, "[%s] ", st.Message())
	}
	if s.read == nil {
		return b.String(), m.String()
	}
	rc, err := c.Read(context.Background(), &p4v1.ReadRequest{DeviceId: device, Entities: s.read})
	var ents []string
	for err == nil {
		var r *p4v1.ReadResponse
		if r, err = rc.Recv(); err == nil {
			for _, e := range r.Entities {
				if g := e.GetPacketReplicationEngineEntry().GetMulticastGroupEntry(); g != nil {
					slices.SortFunc(g.Replicas, func(a, b *p4v1.Replica) int { return int(a.EgressPort) - int(b.EgressPort) })
				}
				ents = append(ents, prototext.MarshalOptions{}.Format(e))
			}
		}
	}
	if err == io.EOF {
		err = nil
	}
	slices.Sort(ents)
	fmt.Fprintf(&b, "%v\n%s", status.Code(err), strings.Join(ents, "\n"))
	fmt.Fprintf(&m, "[%s]", status.Convert(err).Message())
	return b.String(), m.String()
}

// conform runs steps against the Go target and BMv2, both holding p,
// and reports each step where their answers differ, unless it is one of
// the known differences, which it logs.
func conform(t *testing.T, p program, steps []step, known map[string]string) {
	type answer struct{ codes, messages string }
	answers := map[switchproc.Target][]answer{}
	for _, target := range []switchproc.Target{switchproc.TargetBMv2, switchproc.TargetGo} {
		c := startTarget(t, target)
		ct := primary(t, c, p)
		for _, s := range steps {
			a, m := outcome(t, c, ct, s)
			answers[target] = append(answers[target], answer{a, m})
		}
	}
	for i, s := range steps {
		g, b := answers[switchproc.TargetGo][i], answers[switchproc.TargetBMv2][i]
		if g.codes == b.codes {
			continue
		}
		report := t.Errorf
		if why, ok := known[s.name]; ok {
			report = func(f string, args ...any) { t.Logf("known difference ("+why+"): "+f, args...) }
		}
		report("%s:\n  Go target: %s %s\n  BMv2:      %s %s", s.name, g.codes, g.messages, b.codes, b.messages)
	}
}

// The Go target and simple_switch_grpc answer the same requests the same
// way: the same code for every valid and invalid update and the same
// entities read back. Registers are left out: BMv2 answers UNIMPLEMENTED
// to their reads and writes, the Go target serves them (docs/p4runtime.md).
// It needs simple_switch_grpc on the PATH and skips without it.
func TestConformanceWithBMv2(t *testing.T) {
	if _, err := switchproc.Lookup(switchproc.SwitchBinary); err != nil {
		t.Skipf("skipping: %v", err)
	}
	t.Run("tables", func(t *testing.T) {
		p := loadProgram(t, "tables")
		ids, good, bad := tablesCases(t, p)
		// Every table but the const one, whose priorities differ (below).
		all := reads("read all", &p4v1.TableEntry{TableId: ids.exactT}, &p4v1.TableEntry{TableId: ids.lpmT},
			&p4v1.TableEntry{TableId: ids.ternT}, &p4v1.TableEntry{TableId: ids.rangeT}, &p4v1.TableEntry{IsDefaultAction: true})
		steps := []step{writes("good", good...), all, reads("const entries", &p4v1.TableEntry{TableId: ids.constT})}
		for _, b := range bad {
			// BMv2 takes an empty value as zero, against the spec, and the
			// entry it inserts would differ in every later read.
			if b.name != "empty value" {
				steps = append(steps, writes(b.name, b.u))
			}
		}
		key := []*p4v1.FieldMatch{exact(1, 17), exact(2, 2)}
		steps = append(steps, all,
			reads("unknown table", &p4v1.TableEntry{TableId: 99}),
			writes("modify", update(p4v1.Update_MODIFY, &p4v1.TableEntry{TableId: ids.exactT, Match: key, Action: action(ids.setExact, []byte{6})})),
			reads("read by key", &p4v1.TableEntry{TableId: ids.exactT, Match: key}),
			writes("default", update(p4v1.Update_MODIFY, &p4v1.TableEntry{TableId: ids.lpmT, IsDefaultAction: true, Action: action(ids.setLPM, []byte{3})})),
			reads("read the default", &p4v1.TableEntry{TableId: ids.lpmT, IsDefaultAction: true}),
			writes("reset the default", update(p4v1.Update_MODIFY, &p4v1.TableEntry{TableId: ids.lpmT, IsDefaultAction: true})),
			writes("delete", update(p4v1.Update_DELETE, &p4v1.TableEntry{TableId: ids.exactT, Match: key})),
			all,
			// The spec's read filters (issue 30): BMv2's answers were not
			// seen where this was written (no BMv2 there); a difference
			// the test reports is to be named below once seen.
			reads("read by action ID", &p4v1.TableEntry{TableId: ids.exactT, Action: action(ids.setExact)}),
			reads("read by priority", &p4v1.TableEntry{TableId: ids.ternT, Priority: 10}),
			reads("read by priority, a table without", &p4v1.TableEntry{TableId: ids.exactT, Priority: 10}),
			reads("read by metadata", &p4v1.TableEntry{TableId: ids.exactT, Metadata: []byte("m")}))
		conform(t, p, steps, map[string]string{
			"const entries":             "the spec numbers a const table's N entries N down to 1; BMv2 2^31-2 down",
			"value too wide":            "the spec says OUT_OF_RANGE; BMv2 INVALID_ARGUMENT",
			"parameter too wide":        "the spec says OUT_OF_RANGE; BMv2 INVALID_ARGUMENT",
			"insert into a const table": "the spec says PERMISSION_DENIED; BMv2 checks the match first",
		})
	})
	t.Run("runtime", func(t *testing.T) {
		p := loadProgram(t, "runtime")
		n := func(name string) uint32 { return id(t, p.info, name) }
		fwd := func(port byte) *p4v1.Action {
			return &p4v1.Action{ActionId: n("IngressR.forward"), Params: []*p4v1.Action_Param{{ParamId: 1, Value: []byte{port}}}}
		}
		members, spread := n("IngressR.members"), n("IngressR.spread")
		m1 := &p4v1.ActionProfileMember{ActionProfileId: members, MemberId: 1, Action: fwd(5)}
		s1 := &p4v1.ActionProfileMember{ActionProfileId: spread, MemberId: 1, Action: fwd(7)}
		s2 := &p4v1.ActionProfileMember{ActionProfileId: spread, MemberId: 2, Action: fwd(8)}
		g := &p4v1.ActionProfileGroup{ActionProfileId: spread, GroupId: 1, MaxSize: 4,
			Members: []*p4v1.ActionProfileGroup_Member{{MemberId: 1, Weight: 1}, {MemberId: 2, Weight: 1}}}
		byMember := &p4v1.TableEntry{TableId: n("IngressR.prof_t"), Match: []*p4v1.FieldMatch{exact(1, 1)},
			Action: &p4v1.TableAction{Type: &p4v1.TableAction_ActionProfileMemberId{ActionProfileMemberId: 1}}}
		missing := proto.Clone(byMember).(*p4v1.TableEntry)
		missing.Match, missing.Action = []*p4v1.FieldMatch{exact(1, 2)}, &p4v1.TableAction{Type: &p4v1.TableAction_ActionProfileMemberId{ActionProfileMemberId: 9}}
		byGroup := &p4v1.TableEntry{TableId: n("IngressR.sel_t"), Match: []*p4v1.FieldMatch{lpm(1, 8, 10, 0, 0, 0)},
			Action: &p4v1.TableAction{Type: &p4v1.TableAction_ActionProfileGroupId{ActionProfileGroupId: 1}}}
		oneShot := proto.Clone(byGroup).(*p4v1.TableEntry)
		oneShot.Match = []*p4v1.FieldMatch{lpm(1, 8, 11, 0, 0, 0)}
		oneShot.Action = &p4v1.TableAction{Type: &p4v1.TableAction_ActionProfileActionSet{ActionProfileActionSet: &p4v1.ActionProfileActionSet{
			ActionProfileActions: []*p4v1.ActionProfileAction{{Action: fwd(11), Weight: 1}, {Action: fwd(12), Weight: 1}}}}}
		frames := n("IngressR.port_frames")
		big := &p4v1.TableEntry{TableId: n("IngressR.big_t"), Match: []*p4v1.FieldMatch{exact(1, 7)},
			Action: action(n("IngressR.forward_counted"), []byte{3})}
		metered := &p4v1.TableEntry{TableId: n("IngressR.metered_t"), Priority: 1,
			Match: []*p4v1.FieldMatch{ternary(1, []byte{6}, []byte{0xff})}, Action: action(n("IngressR.colour"))}
		meterCfg := &p4v1.MeterConfig{Cir: 1000, Cburst: 100, Pir: 2000, Pburst: 200}
		session := &p4v1.CloneSessionEntry{SessionId: 5, Replicas: []*p4v1.Replica{{EgressPort: 3, Instance: 1}}}
		group := &p4v1.MulticastGroupEntry{MulticastGroupId: 9, Replicas: []*p4v1.Replica{{EgressPort: 4, Instance: 1}, {EgressPort: 6, Instance: 2}}}
		learn := &p4v1.DigestEntry{DigestId: n("learn_t"), Config: &p4v1.DigestEntry_Config{MaxTimeoutNs: 1e6, MaxListSize: 10, AckTimeoutNs: 1e9}}
		vs := &p4v1.ValueSetEntry{ValueSetId: n("ParseR.data_types"),
			Members: []*p4v1.ValueSetMember{{Match: []*p4v1.FieldMatch{exact(1, dataType>>8, dataType&0xff)}}}}

		steps := []step{
			reads("empty tables", &p4v1.TableEntry{}),
			writes("members", ins(m1), ins(m1), ins(s1), ins(s2)),
			writes("group", ins(g), ins(g)),
			writes("entries by member and group", ins(byMember), ins(missing), ins(byGroup)),
			writes("delete in use", del(m1), del(s1), del(g)),
			reads("members and groups", &p4v1.ActionProfileMember{}, &p4v1.ActionProfileGroup{}),
			reads("selector table", &p4v1.TableEntry{TableId: byGroup.TableId}),
			writes("counter cells", mod(&p4v1.CounterEntry{CounterId: frames, Index: &p4v1.Index{Index: 1}, Data: &p4v1.CounterData{PacketCount: 100, ByteCount: 6000}}),
				mod(&p4v1.CounterEntry{CounterId: frames, Index: &p4v1.Index{Index: 32}}),
				ins(&p4v1.CounterEntry{CounterId: frames, Index: &p4v1.Index{Index: 1}})),
			reads("counter cell", &p4v1.CounterEntry{CounterId: frames, Index: &p4v1.Index{Index: 1}}),
			writes("direct counter", ins(big), mod(&p4v1.DirectCounterEntry{TableEntry: &p4v1.TableEntry{TableId: big.TableId, Match: big.Match},
				Data: &p4v1.CounterData{PacketCount: 3, ByteCount: 180}})),
			reads("direct counter", &p4v1.DirectCounterEntry{TableEntry: &p4v1.TableEntry{TableId: big.TableId, Match: big.Match}}),
			writes("meters", mod(&p4v1.MeterEntry{MeterId: n("IngressR.port_meter"), Index: &p4v1.Index{Index: 5}, Config: meterCfg}),
				ins(metered), mod(&p4v1.DirectMeterEntry{TableEntry: &p4v1.TableEntry{TableId: metered.TableId, Priority: 1, Match: metered.Match}, Config: meterCfg})),
			reads("meter cell", &p4v1.MeterEntry{MeterId: n("IngressR.port_meter"), Index: &p4v1.Index{Index: 5}}),
			reads("direct meter", &p4v1.DirectMeterEntry{TableEntry: &p4v1.TableEntry{TableId: metered.TableId, Priority: 1, Match: metered.Match}}),
			writes("replication", ins(session), ins(session), ins(group), ins(group), del(&p4v1.MulticastGroupEntry{MulticastGroupId: 8})),
			reads("clone session", &p4v1.CloneSessionEntry{SessionId: 5}),
			reads("multicast groups", &p4v1.MulticastGroupEntry{}),
			writes("delete replication", del(session), del(group)),
			reads("missing clone session", &p4v1.CloneSessionEntry{SessionId: 5}),
			writes("digest", ins(learn), ins(learn)),
			reads("digest", &p4v1.DigestEntry{DigestId: learn.DigestId}),
			writes("value set", mod(vs), ins(vs)),
			reads("read the value set", &p4v1.ValueSetEntry{ValueSetId: vs.ValueSetId}),
		}
		conform(t, p, steps, map[string]string{
			"entries by member and group": "the spec says NOT_FOUND for a missing member; BMv2 INVALID_ARGUMENT",
			"delete in use":               "the spec says FAILED_PRECONDITION; BMv2 UNKNOWN",
			"counter cells":               "the spec says OUT_OF_RANGE past the end; BMv2 UNKNOWN",
			"value set":                   "BMv2 does not implement value sets",
			"read the value set":          "BMv2 does not implement value sets",
		})
		// One-shot on a fresh pipeline: BMv2 refuses to mix one-shot and
		// group programming on one selector, which the spec allows.
		oneShot2 := proto.Clone(oneShot).(*p4v1.TableEntry)
		oneShot2.Action.GetActionProfileActionSet().ActionProfileActions[1].Action = fwd(13)
		conform(t, p, []step{
			writes("one-shot", ins(oneShot)),
			reads("one-shot entry", &p4v1.TableEntry{TableId: oneShot.TableId}),
			reads("no members or groups to see", &p4v1.ActionProfileMember{ActionProfileId: spread}, &p4v1.ActionProfileGroup{ActionProfileId: spread}),
			writes("one-shot modified", mod(oneShot2)),
			reads("one-shot entry modified", &p4v1.TableEntry{TableId: oneShot.TableId}),
			writes("one-shot deleted", del(oneShot)),
			reads("selector table empty", &p4v1.TableEntry{TableId: oneShot.TableId}),
		}, map[string]string{"no members or groups to see": "BMv2 refuses to read a one-shot selector's members and groups; the spec only hides them"})
	})
}

// bigEntries are n INSERTs into runtime.p4's big_t (16,384 entries), keys
// from first on.
func bigEntries(tb testing.TB, p program, first, n int) []*p4v1.Update {
	bigT, fwd := id(tb, p.info, "IngressR.big_t"), id(tb, p.info, "IngressR.forward_counted")
	us := make([]*p4v1.Update, n)
	for i := range us {
		k := first + i
		us[i] = update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: bigT,
			Match: []*p4v1.FieldMatch{exact(1, byte(k>>24), byte(k>>16), byte(k>>8), byte(k))}, Action: action(fwd, []byte{3})})
	}
	return us
}

// onTargets runs a benchmark on a fresh process of each target holding
// runtime.p4: the Go target, then BMv2 where it is installed, so both
// figures come from the same run on the same machine. bench gets the
// process's ID, to charge it with its CPU.
func onTargets(b *testing.B, bench func(b *testing.B, c p4v1.P4RuntimeClient, ct *controller, p program, pid int)) {
	for _, target := range []switchproc.Target{switchproc.TargetGo, switchproc.TargetBMv2} {
		b.Run(string(target), func(b *testing.B) {
			c, pid := startTargetProcess(b, target)
			p := loadProgram(b, "runtime")
			ct := primary(b, c, p)
			bench(b, c, ct, p, pid)
		})
	}
}

// benchWrite inserts b.N entries into big_t in requests of batch
// updates and reports entries per second, and the server's CPU per
// entry where it is a process of its own. big_t holds 16,384 entries, so
// the inserts come in rounds of up to writeRound, and the table is
// emptied between rounds with the timer and the server's CPU count
// stopped: a run of many rounds measures the server in its steady state,
// where one round (-benchtime 10000x) is its first tens of milliseconds.
// Two more runs send the same
// requests to servers that drop them, the ceilings no server can beat:
// "null" in the benchmark's own process (the cost of gRPC and protobuf
// alone), "null-process" a process of its own as every switch is (that
// and the wake-ups of a second process on every request).
func benchWrite(b *testing.B, batch int) {
	run := func(b *testing.B, c p4v1.P4RuntimeClient, ct *controller, p program, pid int) {
		round := min(b.N, writeRound)
		ins := bigEntries(b, p, 0, round)
		dels := make([]*p4v1.Update, round)
		for i, u := range ins {
			dels[i] = &p4v1.Update{Type: p4v1.Update_DELETE, Entity: u.Entity}
		}
		send := func(us []*p4v1.Update) {
			for i := 0; i < len(us); i += batch {
				req := &p4v1.WriteRequest{DeviceId: device, ElectionId: ct.election, Updates: us[i:min(i+batch, len(us))]}
				if _, err := c.Write(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		}
		var cpu time.Duration
		b.ResetTimer()
		for done := 0; done < b.N; {
			n := min(round, b.N-done)
			cpu0 := proccpu.Process(pid)
			send(ins[:n])
			cpu += proccpu.Process(pid) - cpu0
			if done += n; done < b.N {
				b.StopTimer()
				send(dels[:n])
				b.StartTimer()
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "entries/s")
		if pid != 0 {
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "server-cpu-us/entry")
		}
	}
	onTargets(b, run)
	// The Go target's own server (p4rt.Server, the real v1model pipeline
	// holding runtime.p4) in the benchmark's process, as "null" is: the
	// like-for-like row for "null", so that the ratio between them is
	// the server's own work and not the wake-ups of a second process,
	// which "go" shares with "null-process".
	b.Run("go-inprocess", func(b *testing.B) {
		_, c, _ := serveWith(b, p4rt.Config{DeviceID: device})
		p := loadProgram(b, "runtime")
		ct := primary(b, c, p)
		run(b, c, ct, p, 0)
	})
	election := &controller{election: &p4v1.Uint128{Low: 1}}
	b.Run("null", func(b *testing.B) {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		g := grpc.NewServer()
		p4v1.RegisterP4RuntimeServer(g, dropWrites{})
		go func() { _ = g.Serve(lis) }()
		defer g.Stop()
		run(b, dial(b, lis.Addr().String()), election, loadProgram(b, "runtime"), 0)
	})
	b.Run("null-process", func(b *testing.B) {
		addr, pid := startNullServer(b)
		run(b, dial(b, addr), election, loadProgram(b, "runtime"), pid)
	})
}

// nullServerEnv makes the test binary the null server process of the
// write benchmarks, on the address it names.
const nullServerEnv = "P4RT_TEST_NULL_SERVER"

// startNullServer runs the test binary as a null server process and
// returns its address and process ID.
func startNullServer(tb testing.TB) (string, int) {
	tb.Helper()
	port, err := switchproc.FreePort()
	if err != nil {
		tb.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), nullServerEnv+"="+addr)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	c := dial(tb, addr)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := c.Capabilities(context.Background(), &p4v1.CapabilitiesRequest{}); status.Code(err) == codes.Unimplemented {
			return addr, cmd.Process.Pid
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the null server on %s did not answer", addr)
		}
	}
}

// nullServer serves dropWrites on addr until the process is killed.
func nullServer(addr string) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	g := grpc.NewServer()
	p4v1.RegisterP4RuntimeServer(g, dropWrites{})
	_ = g.Serve(lis)
}

// dropWrites is a P4Runtime server whose Write does nothing.
type dropWrites struct {
	p4v1.UnimplementedP4RuntimeServer
}

func (dropWrites) Write(context.Context, *p4v1.WriteRequest) (*p4v1.WriteResponse, error) {
	return &p4v1.WriteResponse{}, nil
}

// BenchmarkWriteBatchedProcesses is the batched write as a user meets
// it: p4switch, the Go target, a process of its own, against a null
// server in a process of its own (startNullServer), both sent the same
// requests of 1,000 INSERTs into big_t by the same client code. They
// take turns in rounds of writeRound entries, the first of each round
// alternating, so that a machine shared with other work slows both
// alike; each side's rate is the median of its rounds, the share the
// median of the rounds' paired ratios. The server CPU per entry of each
// side is its process's CPU time over all its timed rounds (/proc's
// clock ticks are too coarse for one round). Between rounds p4switch's
// table is emptied, untimed and uncharged.
func BenchmarkWriteBatchedProcesses(b *testing.B) {
	const batch = 1000
	p := loadProgram(b, "runtime")
	goClient, goPID := startTargetProcess(b, switchproc.TargetGo)
	ct := primary(b, goClient, p)
	nullAddr, nullPID := startNullServer(b)
	nullClient := dial(b, nullAddr)
	election := &controller{election: &p4v1.Uint128{Low: 1}}

	round := min(b.N, writeRound)
	ins := bigEntries(b, p, 0, round)
	dels := make([]*p4v1.Update, round)
	for i, u := range ins {
		dels[i] = &p4v1.Update{Type: p4v1.Update_DELETE, Entity: u.Entity}
	}
	send := func(c p4v1.P4RuntimeClient, ct *controller, us []*p4v1.Update) {
		for i := 0; i < len(us); i += batch {
			req := &p4v1.WriteRequest{DeviceId: device, ElectionId: ct.election, Updates: us[i:min(i+batch, len(us))]}
			if _, err := c.Write(context.Background(), req); err != nil {
				b.Fatal(err)
			}
		}
	}
	type side struct {
		c     p4v1.P4RuntimeClient
		ct    *controller
		pid   int
		empty bool // delete what a round inserted
		rates []float64
		cpu   time.Duration
	}
	sw := &side{c: goClient, ct: ct, pid: goPID, empty: true}
	null := &side{c: nullClient, ct: election, pid: nullPID}
	turn := func(s *side, n int) {
		cpu0, start := proccpu.Process(s.pid), time.Now()
		send(s.c, s.ct, ins[:n])
		elapsed := time.Since(start)
		s.cpu += proccpu.Process(s.pid) - cpu0
		s.rates = append(s.rates, float64(n)/elapsed.Seconds())
		if s.empty {
			send(s.c, s.ct, dels[:n])
		}
	}
	// A round each to warm both servers and connections up, unmeasured.
	turn(sw, round)
	turn(null, round)
	*sw, *null = side{c: goClient, ct: ct, pid: goPID, empty: true}, side{c: nullClient, ct: election, pid: nullPID}

	var ratios []float64
	b.ResetTimer()
	for done, r := 0, 0; done < b.N; r++ {
		n := min(round, b.N-done)
		if r%2 == 0 {
			turn(sw, n)
			turn(null, n)
		} else {
			turn(null, n)
			turn(sw, n)
		}
		ratios = append(ratios, sw.rates[r]/null.rates[r])
		done += n
	}
	b.StopTimer()
	goRate, nullRate := medianOf(sw.rates), medianOf(null.rates)
	b.ReportMetric(1e9/goRate, "ns/op")
	b.ReportMetric(goRate, "go-entries/s")
	b.ReportMetric(nullRate, "null-entries/s")
	b.ReportMetric(100*medianOf(ratios), "%-of-null")
	b.ReportMetric(float64(sw.cpu.Microseconds())/float64(b.N), "go-server-cpu-us/entry")
	b.ReportMetric(float64(null.cpu.Microseconds())/float64(b.N), "null-server-cpu-us/entry")
}

// medianOf is the median of vs, which it sorts.
func medianOf(vs []float64) float64 {
	slices.Sort(vs)
	if n := len(vs); n%2 == 1 {
		return vs[n/2]
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
}

func BenchmarkWriteOnePerRequest(b *testing.B) { benchWrite(b, 1) }
func BenchmarkWriteBatched1000(b *testing.B)   { benchWrite(b, 1000) }

// writeRound is how many entries benchWrite inserts before it empties
// big_t (16,384 entries) again.
const writeRound = 10000

// BenchmarkRead10000 reads back all of a table holding 10,000 entries,
// once per iteration, and reports entries per second.
func BenchmarkRead10000(b *testing.B) {
	const n = 10000
	onTargets(b, func(b *testing.B, c p4v1.P4RuntimeClient, ct *controller, p program, _ int) {
		us := bigEntries(b, p, 0, n)
		for i := 0; i < n; i += 1000 {
			if _, err := c.Write(context.Background(), &p4v1.WriteRequest{DeviceId: device, ElectionId: ct.election, Updates: us[i : i+1000]}); err != nil {
				b.Fatal(err)
			}
		}
		all := entity(&p4v1.TableEntry{TableId: id(b, p.info, "IngressR.big_t")})
		b.ResetTimer()
		for range b.N {
			if got := len(readAll(b, c, all)); got != n {
				b.Fatalf("read %d entries, want %d", got, n)
			}
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
	})
}

// The Go target as a process answers as the in-process server does:
// runtime.p4 set, entries written and read back over its gRPC port.
func TestTargetProcess(t *testing.T) {
	c := startTarget(t, switchproc.TargetGo)
	ct := connect(t, c, 1)
	if code, _ := ct.arbitration(); code != codes.OK {
		t.Fatalf("arbitration: %v", code)
	}
	p := loadProgram(t, "runtime")
	setPipeline(t, c, ct, p, 1)
	for i, code := range write(t, c, ct, bigEntries(t, p, 0, 3)...) {
		if code != codes.OK {
			t.Fatalf("update %d: %v", i, code)
		}
	}
	if got := readAll(t, c, entity(&p4v1.TableEntry{TableId: id(t, p.info, "IngressR.big_t")})); len(got) != 3 {
		t.Errorf("read back %d entries, want 3", len(got))
	}
}
