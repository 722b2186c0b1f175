package p4switch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc/status"

	"github.com/p4rcm/p4rcm/controlplane"
	"github.com/p4rcm/p4rcm/p4rt"
	"github.com/p4rcm/p4rcm/tutorialjson"
)

// p4infoBeside is the P4Info p4c wrote beside a program's JSON (with
// --p4runtime-files NAME.p4info.txtpb or .txt), "" if there is none.
func p4infoBeside(jsonPath string) string {
	base := strings.TrimSuffix(jsonPath, filepath.Ext(jsonPath))
	for _, ext := range []string{".p4info.txtpb", ".p4info.txt", ".p4info"} {
		if _, err := os.Stat(base + ext); err == nil {
			return base + ext
		}
	}
	return ""
}

// profilesOrMeters says what of a runtime file P4Runtime's tutorials
// format does not carry (p4switch's own additions), "" if nothing.
func profilesOrMeters(rt *tutorialjson.Runtime) string {
	switch {
	case len(rt.Members) > 0 || len(rt.Groups) > 0:
		return "action_profile_members and groups"
	case len(rt.Meters) > 0:
		return "meter_configs"
	case len(rt.ValueSets) > 0:
		return "value_set_members"
	}
	for _, e := range rt.Entries {
		if e.Member != nil || e.Group != nil || e.Meter != nil {
			return "member_id, group_id or meter on an entry"
		}
	}
	return ""
}

// preload makes the program the switch was started with (and its
// entries) the P4Runtime server's pipeline, as if a controller had set
// it: controllers then read its tables and counters, and write them,
// as on a switch they programmed. It goes through the server itself, on
// a Unix socket only this process knows, before the P4Runtime port is
// open, so that what reads return is what the switch holds. The cookie
// is the files' (controlplane.Cookie), the one 'p4ctl pipeline set
// --p4info --json' gives them.
func preload(ctx context.Context, srv *p4rt.Server, deviceID uint64, p4info, jsonPath string, rt *tutorialjson.Runtime) (uint64, error) {
	p, err := controlplane.ReadPipeline(p4info, jsonPath, 0)
	if err != nil {
		return 0, fmt.Errorf("--p4info %s: %w", p4info, err)
	}
	dir, err := os.MkdirTemp("", "p4switch-preload")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "p4rt.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		return 0, err
	}
	gs := srv.NewLocalGRPCServer()
	go func() { _ = gs.Serve(lis) }()
	defer gs.Stop()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	s, err := controlplane.Dial(ctx, "unix:"+sock, deviceID, controlplane.ElectionID{Low: 1})
	if err != nil {
		return 0, err
	}
	defer s.Close()
	if !s.Primary() {
		return 0, errors.New("the P4Runtime server did not make its first controller primary")
	}
	// The server's own words: what is wrong with the JSON (its line and
	// column), the P4Info that does not fit it, or the entries.
	if err := s.SetPipeline(ctx, p); err != nil {
		return 0, fmt.Errorf("%s with %s: %s", jsonPath, p4info, message(err))
	}
	if rt != nil {
		if _, err := s.ApplyRuntime(ctx, rt); err != nil {
			return 0, fmt.Errorf("--entries: %s", message(err))
		}
	}
	return p.Cookie, nil
}

// message is an error's gRPC status message, without gRPC's wording of
// the code, or the error's text.
func message(err error) string {
	var st interface{ GRPCStatus() *status.Status }
	if errors.As(err, &st) {
		if m := st.GRPCStatus().Message(); m != "" {
			// A wrapping error (file and line) keeps its prefix.
			if i := strings.Index(err.Error(), "rpc error:"); i > 0 {
				return err.Error()[:i] + m
			}
			return m
		}
	}
	return err.Error()
}
