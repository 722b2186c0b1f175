package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/p4rcm/p4rcm/internal/p4switchbin"
	"github.com/p4rcm/p4rcm/p4"
	"github.com/p4rcm/p4rcm/switchproc"
)

// freePort is a loopback TCP address nothing listens on, and its port.
func freePort(t *testing.T) (string, int) {
	t.Helper()
	port, err := switchproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", port), port
}

// rcmPipeline is the committed rcm.p4 as a pipeline with cookie.
func rcmPipeline(t *testing.T, cookie uint64) Pipeline {
	t.Helper()
	info, err := p4.P4Info()
	if err != nil {
		t.Fatal(err)
	}
	return Pipeline{Info: info, DeviceConfig: p4.DeviceConfig(), Cookie: cookie}
}

// launch starts the switch P4RCM_TARGET chooses (the Go target by
// default, BMv2 where asked and installed) with ports, with no pipeline,
// and gives its P4Runtime address. The switch ends with the test.
func launch(ctx context.Context, t *testing.T, ports map[int]string) (addr string, sw *switchproc.Switch) {
	t.Helper()
	target, bin := p4switchbin.Choose(t)
	port, thrift, err := switchproc.FreeSwitchPorts()
	if err != nil {
		t.Fatal(err)
	}
	addr = fmt.Sprintf("127.0.0.1:%d", port)
	sw, err = switchproc.Start(ctx, switchproc.Config{Name: "s1", DeviceID: 1, Ports: ports, GRPCAddr: addr, ThriftPort: thrift,
		LogDir: t.TempDir(), Target: target, Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sw.Stop() })
	return addr, sw
}

// relaunch starts a switch again as sw was started, on its address.
func relaunch(ctx context.Context, t *testing.T, sw *switchproc.Switch) *switchproc.Switch {
	t.Helper()
	cfg := sw.Config()
	cfg.Control = "" // Start picks a new one; the old one went with sw
	again, err := switchproc.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { again.Stop() })
	return again
}

// dial opens a session that ends with the test.
func dial(ctx context.Context, t *testing.T, addr string, election uint64) *Session {
	t.Helper()
	s, err := Dial(ctx, addr, 1, ElectionID{Low: election})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// startSwitch starts a switch with ports, becomes its primary controller
// and installs a program: by default the committed rcm.p4.
func startSwitch(ctx context.Context, t *testing.T, ports map[int]string, info *p4configv1.P4Info, deviceConfig []byte) *Session {
	t.Helper()
	addr, _ := launch(ctx, t, ports)
	s := dial(ctx, t, addr, 1)
	p := rcmPipeline(t, 1)
	if info != nil {
		p = Pipeline{Info: info, DeviceConfig: deviceConfig, Cookie: 1}
	}
	if err := s.SetPipeline(ctx, p); err != nil {
		t.Fatal(err)
	}
	return s
}

func route(addr []byte, prefix int32, port byte) Entry {
	return Entry{Table: p4.TableIPv4LPM, Match: []Match{{Field: "hdr.ipv4.dst_addr", Value: addr, PrefixLen: prefix}},
		Action: p4.ActionSetNexthop, Params: []Param{{"port", []byte{port}}, {"src_mac", []byte{0xaa}}, {"dst_mac", []byte{0xbb}}}}
}

// Insert a route, modify it, read it back and delete it, with the
// switch's codes for a duplicate and a missing entry; set and reset a
// table's default action; names by unique suffix.
func TestSession(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := startSwitch(ctx, t, nil, nil, nil)

	r := route([]byte{10, 0, 0, 2}, 32, 2)
	if err := s.InsertEntry(ctx, r); err != nil {
		t.Fatal(err)
	}
	entries, err := s.ReadEntries(ctx, "ipv4_lpm") // by suffix
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || !bytes.Equal(entries[0].Match[0].Value, []byte{10, 0, 0, 2}) || entries[0].Match[0].PrefixLen != 32 ||
		entries[0].Action != p4.ActionSetNexthop || !bytes.Equal(entries[0].Params[2].Value, []byte{0, 0, 0, 0, 0, 0xbb}) {
		t.Errorf("read back %+v", entries)
	}
	if err := s.InsertEntry(ctx, r); status.Code(err) != codes.AlreadyExists {
		t.Errorf("inserting the route again: %v, want code AlreadyExists", err)
	}
	if err := s.ModifyEntry(ctx, route([]byte{10, 0, 0, 2}, 32, 3)); err != nil {
		t.Fatal(err)
	}
	if entries, err = s.ReadEntries(ctx, p4.TableIPv4LPM); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || !bytes.Equal(entries[0].Params[0].Value, []byte{0, 3}) {
		t.Errorf("after the modify, read back %+v", entries)
	}
	if err := s.DeleteEntry(ctx, r); err != nil {
		t.Fatal(err)
	}
	if entries, err = s.ReadEntries(ctx, p4.TableIPv4LPM); err != nil || len(entries) != 0 {
		t.Errorf("after the delete, read back %v, %v", entries, err)
	}
	if err := s.DeleteEntry(ctx, r); status.Code(err) != codes.NotFound {
		t.Errorf("deleting the route again: %v, want code NotFound", err)
	}

	def := route(nil, 0, 4)
	def.Match, def.Default = nil, true
	if err := s.ModifyEntry(ctx, def); err != nil {
		t.Fatal(err)
	}
	got, err := s.ReadDefault(ctx, p4.TableIPv4LPM)
	if err != nil {
		t.Fatal(err)
	}
	if got.Action != p4.ActionSetNexthop || !bytes.Equal(got.Params[0].Value, []byte{0, 4}) {
		t.Errorf("default entry read back as %+v", got)
	}
	if err := s.DeleteEntry(ctx, def); err != nil { // a reset
		t.Fatal(err)
	}
	if got, err = s.ReadDefault(ctx, p4.TableIPv4LPM); err != nil || got.Action != "RcmIngress.drop" {
		t.Errorf("after the reset, the default entry is %+v, %v; want RcmIngress.drop", got, err)
	}
}

// Names not in the P4Info, and values too wide for their fields, are
// refused before anything is sent, with a code a caller can test and a
// message naming what is wrong; shorter byte strings than a field's
// width are values like any other (P4Runtime's canonical form).
func TestRefusedBeforeSending(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := startSwitch(ctx, t, nil, nil, nil)

	wide := route([]byte{1, 10, 0, 0, 2}, 32, 2)
	noTable := route([]byte{10, 0, 0, 2}, 32, 2)
	noTable.Table = "ipv4_lpn"
	noField := route([]byte{10, 0, 0, 2}, 32, 2)
	noField.Match[0].Field = "hdr.ipv4.dst"
	noAction := route([]byte{10, 0, 0, 2}, 32, 2)
	noAction.Action = "set_nexthp"
	notTables := route([]byte{10, 0, 0, 2}, 32, 2)
	notTables.Action, notTables.Params = p4.ActionSetRED, nil
	past := route([]byte{10, 0, 1, 5}, 24, 2)
	wideParam := route([]byte{10, 0, 0, 2}, 32, 2)
	wideParam.Params[0].Value = []byte{2, 0} // port is 9 bits
	for _, c := range []struct {
		what  string
		e     Entry
		code  codes.Code
		words []string
	}{
		{"an unknown table", noTable, codes.NotFound, []string{`"ipv4_lpn"`, p4.TableIPv4LPM}},
		{"an unknown field", noField, codes.NotFound, []string{`"hdr.ipv4.dst"`, "hdr.ipv4.dst_addr"}},
		{"an unknown action", noAction, codes.NotFound, []string{`"set_nexthp"`, p4.ActionSetNexthop}},
		{"an action not the table's", notTables, codes.InvalidArgument, []string{p4.ActionSetRED, "not one of table"}},
		{"a value too wide", wide, codes.InvalidArgument, []string{"hdr.ipv4.dst_addr", "32 bits wide", "needs 33 bits"}},
		{"bits past the prefix", past, codes.InvalidArgument, []string{"past the prefix", "0x0a000100/24"}},
		{"a parameter too wide", wideParam, codes.InvalidArgument, []string{"port", "9 bits wide"}},
	} {
		err := s.InsertEntry(ctx, c.e)
		if status.Code(err) != c.code {
			t.Errorf("%s: %v, want code %s", c.what, err, c.code)
			continue
		}
		for _, w := range c.words {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", c.what, err, w)
			}
		}
	}
	if entries, err := s.ReadEntries(ctx, p4.TableIPv4LPM); err != nil || len(entries) != 0 {
		t.Errorf("after refused inserts the table holds %v, %v", entries, err)
	}
	if _, err := s.Table("Rcm"); status.Code(err) != codes.NotFound {
		t.Errorf("table \"Rcm\": %v, want NotFound", err)
	}

	// Three bytes for a 32-bit key: the number 0x0a0001, 0.10.0.1.
	short := route([]byte{10, 0, 1}, 32, 2)
	if err := s.InsertEntry(ctx, short); err != nil {
		t.Fatalf("a 3-byte value for a 32-bit key: %v", err)
	}
	entries, err := s.ReadEntries(ctx, p4.TableIPv4LPM)
	if err != nil || len(entries) != 1 || !bytes.Equal(entries[0].Match[0].Value, []byte{0, 10, 0, 1}) {
		t.Errorf("read back %+v, %v; want 0.10.0.1/32", entries, err)
	}
}

// Many updates in one call go in batches; a batch with failures says
// which updates failed and why, and its code is the first failure's.
func TestWriteBatches(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := startSwitch(ctx, t, nil, nil, nil)
	member := func(i int) Entry {
		return Entry{Table: p4.TableECMPMember, Match: []Match{{Field: "meta.ecmp_base", Value: []byte{byte(i >> 8), byte(i)}},
			{Field: "meta.ecmp_offset", Value: []byte{0}}}, Action: "drop"}
	}
	var updates []*p4v1.Update
	for i := range BatchSize + 24 {
		u, err := s.EntryUpdate(Insert, member(i))
		if err != nil {
			t.Fatal(err)
		}
		updates = append(updates, u)
	}
	if err := s.Write(ctx, updates...); err != nil {
		t.Fatal(err)
	}
	entries, err := s.ReadEntries(ctx, p4.TableECMPMember)
	if err != nil || len(entries) != len(updates) {
		t.Fatalf("%d entries after writing %d, %v", len(entries), len(updates), err)
	}
	fresh, err := s.EntryUpdate(Insert, member(3000))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Write(ctx, fresh, updates[7], updates[9])
	var we *WriteError
	if !errors.As(err, &we) || status.Code(err) != codes.AlreadyExists || len(we.Failures) != 2 ||
		we.Failures[0].Index != 1 || we.Failures[1].Index != 2 {
		t.Fatalf("a batch with two duplicates: %v (%+v), want failures 1 and 2, AlreadyExists", err, we)
	}
	if entries, _ := s.ReadEntries(ctx, p4.TableECMPMember); len(entries) != len(updates)+1 {
		t.Errorf("the batch's good update was not applied: %d entries", len(entries))
	}
}

// A second controller with a lower election ID opens as a backup, is
// refused writes with PERMISSION_DENIED, and becomes primary when the
// primary leaves; a third with a higher ID demotes it, and the session
// sees it on the stream; a wrong device ID is NOT_FOUND.
func TestArbitration(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addr, _ := launch(ctx, t, nil)
	a := dial(ctx, t, addr, 10)
	if !a.Primary() {
		t.Fatal("the first controller is not primary")
	}
	if err := a.SetPipeline(ctx, rcmPipeline(t, 7)); err != nil {
		t.Fatal(err)
	}
	b := dial(ctx, t, addr, 5)
	if b.Primary() {
		t.Fatal("a lower election ID opened as primary")
	}
	if err := b.AdoptPipeline(ctx, 7); err != nil {
		t.Fatal(err)
	}
	err := b.InsertEntry(ctx, route([]byte{10, 0, 0, 2}, 32, 2))
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("a backup's write: %v, want PermissionDenied", err)
	}
	a.Close()
	select {
	case p := <-b.Roles():
		if !p {
			t.Error("the backup was told it is a backup again when the primary left")
		}
	case <-ctx.Done():
		t.Fatal("the backup heard nothing when the primary left")
	}
	if err := b.WaitPrimary(ctx); err != nil || !b.Primary() {
		t.Fatalf("the backup did not become primary: %v", err)
	}
	if err := b.InsertEntry(ctx, route([]byte{10, 0, 0, 2}, 32, 2)); err != nil {
		t.Errorf("the new primary's write: %v", err)
	}
	c := dial(ctx, t, addr, 20)
	if !c.Primary() {
		t.Error("a higher election ID opened as backup")
	}
	select {
	case p := <-b.Roles():
		if p {
			t.Error("a demoted primary was told it is primary")
		}
	case <-ctx.Done():
		t.Fatal("the demoted primary heard nothing")
	}
	if b.Primary() || b.Err() != nil {
		t.Errorf("demoted: Primary %v, Err %v; want false, nil", b.Primary(), b.Err())
	}

	// p4switch refuses the arbitration. BMv2 1.15.5 takes any device
	// ID as a device of its own, with no pipeline.
	wrong, err := Dial(ctx, addr, 99, ElectionID{Low: 1})
	if err == nil {
		defer wrong.Close()
		_, err = wrong.GetPipeline(ctx)
	}
	want := codes.NotFound
	if os.Getenv(p4switchbin.TargetEnv) == string(switchproc.TargetBMv2) {
		want = codes.FailedPrecondition
	}
	if status.Code(err) != want {
		t.Errorf("device 99 of a switch that is device 1: %v, want %s", err, want)
	}
	if _, err := Dial(ctx, addr, 1, ElectionID{}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("election ID 0: %v, want InvalidArgument", err)
	}
	short, stop := context.WithTimeout(ctx, 300*time.Millisecond)
	defer stop()
	closed, _ := freePort(t)
	if _, err := Dial(short, closed, 1, ElectionID{Low: 1}); err == nil {
		t.Error("a session opened to a port nothing listens on")
	}
}

// A new session adopts the pipeline on the switch, by its cookie, and
// finds the entries a previous one wrote; a switch with no pipeline, or
// another cookie, cannot be adopted; EnsurePipeline installs only when it
// must.
func TestAdoptPipeline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addr, _ := launch(ctx, t, nil)
	first := dial(ctx, t, addr, 1)
	if err := first.AdoptPipeline(ctx, 0); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("adopting a switch with no pipeline: %v, want FailedPrecondition", err)
	}
	if err := first.InsertEntry(ctx, route([]byte{10, 0, 0, 2}, 32, 2)); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("a write with no pipeline: %v, want FailedPrecondition", err)
	}
	p := rcmPipeline(t, 0x1234)
	if installed, err := first.EnsurePipeline(ctx, p); err != nil || !installed {
		t.Fatalf("EnsurePipeline on an empty switch: %v, %v", installed, err)
	}
	if err := first.InsertEntry(ctx, route([]byte{10, 0, 0, 2}, 32, 2)); err != nil {
		t.Fatal(err)
	}
	first.Close()

	again := dial(ctx, t, addr, 2)
	if err := again.AdoptPipeline(ctx, 0x9999); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("adopting with another cookie: %v, want FailedPrecondition", err)
	}
	if installed, err := again.EnsurePipeline(ctx, p); err != nil || installed {
		t.Fatalf("EnsurePipeline of the pipeline the switch runs: installed %v, %v", installed, err)
	}
	entries, err := again.ReadEntries(ctx, p4.TableIPv4LPM)
	if err != nil || len(entries) != 1 {
		t.Errorf("after adopting, the table holds %v, %v; want the entry the first session wrote", entries, err)
	}
	got, err := again.GetPipeline(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Cookie != 0x1234 || !bytes.Equal(got.DeviceConfig, p.DeviceConfig) || len(got.Info.Tables) != len(p.Info.Tables) {
		t.Errorf("GetPipeline: cookie %#x, %d bytes of device config, %d tables", got.Cookie, len(got.DeviceConfig), len(got.Info.Tables))
	}
}

// Names resolve in full, by alias or by unique suffix; an ambiguous
// suffix is INVALID_ARGUMENT naming the candidates, an unknown name
// NOT_FOUND naming the closest.
func TestResolve(t *testing.T) {
	names := []string{"Ingress.drop", "Egress.drop", "Ingress.ipv4_lpm", "NoAction"}
	aliases := []string{"Ingress.drop", "Egress.drop", "ipv4_lpm", "NoAction"}
	for _, c := range []struct {
		name string
		want int
		code codes.Code
		says string
	}{
		{"Egress.drop", 1, codes.OK, ""},
		{"ipv4_lpm", 2, codes.OK, ""},
		{"NoAction", 3, codes.OK, ""},
		{"drop", -1, codes.InvalidArgument, "Ingress.drop, Egress.drop"},
		{"ipv4_lmp", -1, codes.NotFound, "the closest: Ingress.ipv4_lpm"},
		{"ress.drop", -1, codes.NotFound, ""}, // suffixes start at a dot
	} {
		got, err := resolve("action", c.name, names, aliases)
		if got != c.want || status.Code(err) != c.code || !strings.Contains(fmt.Sprint(err), c.says) {
			t.Errorf("resolve(%q) = %d, %v; want %d, code %s saying %q", c.name, got, err, c.want, c.code, c.says)
		}
	}
}

// A failed Write answers UNKNOWN with one p4.v1.Error per update; the
// error keeps each failure and carries the first one's code.
func TestWriteError(t *testing.T) {
	st, err := status.New(codes.Unknown, "").WithDetails(&p4v1.Error{CanonicalCode: int32(codes.OK)},
		&p4v1.Error{CanonicalCode: int32(codes.AlreadyExists), Message: "Clone session id already exists"})
	if err != nil {
		t.Fatal(err)
	}
	batch := []*p4v1.Update{{Type: Insert}, {Type: Modify}}
	got := writeError(st.Err(), batch, 1000)
	var we *WriteError
	if !errors.As(got, &we) || len(we.Failures) != 1 || we.Failures[0].Index != 1001 || we.Failures[0].Update != batch[1] {
		t.Fatalf("writeError = %v", got)
	}
	if status.Code(got) != codes.AlreadyExists || status.Convert(got).Message() != "Clone session id already exists" {
		t.Errorf("writeError's status = %v", status.Convert(got))
	}
	plain := status.Error(codes.PermissionDenied, "Not primary")
	if got := writeError(plain, batch, 0); status.Code(got) != codes.PermissionDenied {
		t.Errorf("writeError(%v) = %v", plain, got)
	}
}

// A reader reads beside a primary without taking part in arbitration,
// and its writes are refused before they are sent; a controller in a
// role of its own is that role's primary beside the default role's,
// and writes there (on BMv2, whose PI keeps no roles, Dial refuses the
// role and the default role keeps its primary); two writers with one
// election ID wait for each other with WaitWhileHeld.
func TestReadersAndRoles(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addr, sw := launch(ctx, t, nil)
	primary := dial(ctx, t, addr, 2)
	if err := primary.SetPipeline(ctx, rcmPipeline(t, 7)); err != nil {
		t.Fatal(err)
	}
	if err := primary.InsertEntry(ctx, route([]byte{10, 0, 1, 0}, 24, 2)); err != nil {
		t.Fatal(err)
	}
	r, err := DialReader(ctx, addr, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.AdoptPipeline(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if got, err := r.ReadEntries(ctx, p4.TableIPv4LPM); err != nil || len(got) != 1 {
		t.Errorf("the reader read %v, %v; want the primary's one route", got, err)
	}
	if err := r.InsertEntry(ctx, route([]byte{10, 0, 2, 0}, 24, 2)); status.Code(err) != codes.PermissionDenied {
		t.Errorf("a reader's write: %v, want PERMISSION_DENIED", err)
	}
	if !primary.Primary() {
		t.Error("a reader took the primary's role")
	}

	// An election ID is unique within its role, so the monitor may
	// have the default role's primary's. BMv2 1.15.5's PI keeps no
	// roles: it answers the arbitration without naming the role, which
	// Dial refuses; there the monitor has an ID below the primary's, so
	// that the default role it lands in keeps its primary.
	if sw.Config().Target == switchproc.TargetBMv2 {
		_, err := Dial(ctx, addr, 1, ElectionID{Low: 1}, WithRole("monitor"))
		if !errors.Is(err, ErrRolesUnsupported) {
			t.Errorf("a role on BMv2: %v, want ErrRolesUnsupported", err)
		}
	} else {
		mon, err := Dial(ctx, addr, 1, ElectionID{Low: 2}, WithRole("monitor"))
		if err != nil {
			t.Fatal(err)
		}
		defer mon.Close()
		if !mon.Primary() || !primary.Primary() {
			t.Errorf("primary of role monitor %v, of the default role %v: want both", mon.Primary(), primary.Primary())
		}
		if err := mon.AdoptPipeline(ctx, 7); err != nil {
			t.Fatal(err)
		}
		if err := mon.EnableDigest(ctx, p4.DigestCAM, time.Millisecond, 1, time.Second); err != nil {
			t.Errorf("the monitor role's primary could not write: %v", err)
		}
	}
	if !primary.Primary() {
		t.Error("the default role's primary lost its role to the monitor")
	}

	// A second writer with the primary's ID waits for it to leave.
	go func() {
		time.Sleep(300 * time.Millisecond)
		primary.Close()
	}()
	start := time.Now()
	again, err := Dial(ctx, addr, 1, ElectionID{Low: 2}, WaitWhileHeld())
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if !again.Primary() || time.Since(start) < 250*time.Millisecond {
		t.Errorf("after %v: primary %v; want primary once the holder left", time.Since(start), again.Primary())
	}
	if _, err := Dial(ctx, addr, 1, ElectionID{Low: 2}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a held election ID without WaitWhileHeld: %v, want INVALID_ARGUMENT", err)
	}
}
