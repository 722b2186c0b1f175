// Package controlplane is p4rcm's P4Runtime client: a session with one
// switch (arbitration as the primary controller, the pipeline pushed from
// a P4Info and a device configuration) and table entries written and read
// by the names in the P4Info.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Session is a primary controller's connection to one device.
type Session struct {
	conn     *grpc.ClientConn
	client   p4v1.P4RuntimeClient
	stream   p4v1.P4Runtime_StreamChannelClient
	cancel   context.CancelFunc
	deviceID uint64
	election *p4v1.Uint128
	info     *p4configv1.P4Info
}

// Dial connects to the P4Runtime server at addr and becomes the primary
// controller of device deviceID with election ID electionID (> 0).
func Dial(ctx context.Context, addr string, deviceID, electionID uint64) (*Session, error) {
	if electionID == 0 {
		return nil, errors.New("controlplane: election ID 0 is reserved for backups")
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("controlplane: %s: %w", addr, err)
	}
	s := &Session{conn: conn, client: p4v1.NewP4RuntimeClient(conn), deviceID: deviceID,
		election: &p4v1.Uint128{Low: electionID}}
	// The stream lives as long as the session, not as the caller's ctx.
	streamCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	if s.stream, err = s.client.StreamChannel(streamCtx); err != nil {
		s.Close()
		return nil, fmt.Errorf("controlplane: %s: stream: %w", addr, err)
	}
	req := &p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{
		Arbitration: &p4v1.MasterArbitrationUpdate{DeviceId: deviceID, ElectionId: s.election}}}
	if err := s.stream.Send(req); err != nil {
		s.Close()
		return nil, fmt.Errorf("controlplane: %s: arbitration: %w", addr, err)
	}
	got := make(chan error, 1)
	go func() {
		resp, err := s.stream.Recv()
		switch {
		case err != nil:
			got <- err
		case resp.GetArbitration() == nil:
			got <- fmt.Errorf("unexpected first message %v", resp)
		case resp.GetArbitration().GetStatus().GetCode() != 0:
			got <- fmt.Errorf("not primary: %s", resp.GetArbitration().GetStatus().GetMessage())
		default:
			got <- nil
		}
	}()
	select {
	case err = <-got:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("controlplane: %s: arbitration: %w", addr, err)
	}
	return s, nil
}

// Close ends the session.
func (s *Session) Close() error {
	s.cancel()
	return s.conn.Close()
}

// SetPipeline installs a program: its P4Info and the target's device
// configuration (for BMv2, the compiled JSON).
func (s *Session) SetPipeline(ctx context.Context, info *p4configv1.P4Info, deviceConfig []byte) error {
	_, err := s.client.SetForwardingPipelineConfig(ctx, &p4v1.SetForwardingPipelineConfigRequest{
		DeviceId:   s.deviceID,
		ElectionId: s.election,
		Action:     p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT,
		Config:     &p4v1.ForwardingPipelineConfig{P4Info: info, P4DeviceConfig: deviceConfig},
	})
	if err != nil {
		return fmt.Errorf("controlplane: set pipeline: %w", err)
	}
	s.info = info
	return nil
}

// Match is one match field of an entry: Value, and for LPM PrefixLen.
type Match struct {
	Field     string
	Value     []byte
	PrefixLen int32 // LPM only
}

// Param is one action parameter.
type Param struct {
	Name  string
	Value []byte
}

// InsertEntry adds an entry to table: its matches, action and parameters,
// all by their P4Info names.
func (s *Session) InsertEntry(ctx context.Context, table string, matches []Match, action string, params []Param) error {
	entry, err := s.tableEntry(table, matches, action, params)
	if err != nil {
		return err
	}
	_, err = s.client.Write(ctx, &p4v1.WriteRequest{
		DeviceId: s.deviceID, ElectionId: s.election,
		Updates: []*p4v1.Update{{Type: p4v1.Update_INSERT, Entity: &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: entry}}}},
	})
	if err != nil {
		return fmt.Errorf("controlplane: insert into %s: %w", table, err)
	}
	return nil
}

// Entries reads table's entries.
func (s *Session) Entries(ctx context.Context, table string) ([]*p4v1.TableEntry, error) {
	t, err := s.table(table)
	if err != nil {
		return nil, err
	}
	rc, err := s.client.Read(ctx, &p4v1.ReadRequest{DeviceId: s.deviceID,
		Entities: []*p4v1.Entity{{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: t.Preamble.Id}}}}})
	if err != nil {
		return nil, fmt.Errorf("controlplane: read %s: %w", table, err)
	}
	var out []*p4v1.TableEntry
	for {
		resp, err := rc.Recv()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("controlplane: read %s: %w", table, err)
		}
		for _, e := range resp.Entities {
			if te := e.GetTableEntry(); te != nil {
				out = append(out, te)
			}
		}
	}
}

func (s *Session) table(name string) (*p4configv1.Table, error) {
	if s.info == nil {
		return nil, errors.New("controlplane: no pipeline set")
	}
	t := find(s.info.Tables, func(t *p4configv1.Table) bool { return named(t.Preamble, name) })
	if t == nil {
		return nil, fmt.Errorf("controlplane: no table %q in the P4Info", name)
	}
	return t, nil
}

// find is the first of xs for which is holds, or nil.
func find[T any](xs []*T, is func(*T) bool) *T {
	for _, x := range xs {
		if is(x) {
			return x
		}
	}
	return nil
}

// named reports whether an entity goes by name, in full or by its alias.
func named(p *p4configv1.Preamble, name string) bool { return p.Name == name || p.Alias == name }

func (s *Session) tableEntry(table string, matches []Match, action string, params []Param) (*p4v1.TableEntry, error) {
	t, err := s.table(table)
	if err != nil {
		return nil, err
	}
	e := &p4v1.TableEntry{TableId: t.Preamble.Id}
	for _, m := range matches {
		mf := find(t.MatchFields, func(f *p4configv1.MatchField) bool { return f.Name == m.Field })
		if mf == nil {
			return nil, fmt.Errorf("controlplane: table %s has no match field %q", table, m.Field)
		}
		fm := &p4v1.FieldMatch{FieldId: mf.Id}
		switch mf.GetMatchType() {
		case p4configv1.MatchField_EXACT:
			fm.FieldMatchType = &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: m.Value}}
		case p4configv1.MatchField_LPM:
			fm.FieldMatchType = &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: m.Value, PrefixLen: m.PrefixLen}}
		default:
			return nil, fmt.Errorf("controlplane: table %s field %s: match type %v not supported", table, m.Field, mf.GetMatchType())
		}
		e.Match = append(e.Match, fm)
	}
	a := find(s.info.Actions, func(a *p4configv1.Action) bool { return named(a.Preamble, action) })
	if a == nil {
		return nil, fmt.Errorf("controlplane: no action %q in the P4Info", action)
	}
	act := &p4v1.Action{ActionId: a.Preamble.Id}
	for _, p := range params {
		ap := find(a.Params, func(x *p4configv1.Action_Param) bool { return x.Name == p.Name })
		if ap == nil {
			return nil, fmt.Errorf("controlplane: action %s has no parameter %q", action, p.Name)
		}
		act.Params = append(act.Params, &p4v1.Action_Param{ParamId: ap.Id, Value: p.Value})
	}
	e.Action = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: act}}
	return e, nil
}
