package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/p4rcm/p4rcm/controlplane"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/grpc/status"
)

// switchFlags say which switch a command talks to and as whom: the
// P4Runtime flags of p4runtime-shell (--grpc-addr, --device-id,
// --election-id), --addr here.
type switchFlags struct {
	addr     string
	deviceID uint64
	election string
	timeout  time.Duration
}

// addSwitchFlags defines the connection flags on a command.
func addSwitchFlags(cmd *cobra.Command) *switchFlags {
	f := &switchFlags{}
	fs := cmd.Flags()
	fs.StringVar(&f.addr, "addr", "127.0.0.1:9559", "the switch's P4Runtime server, HOST:PORT")
	fs.Uint64Var(&f.deviceID, "device-id", 1, "the switch's P4Runtime device ID")
	fs.StringVar(&f.election, "election-id", "0,1", "this controller's election ID, HIGH,LOW or LOW; the highest is primary")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Second, "how long to wait for the switch")
	return f
}

// electionID reads --election-id.
func (f *switchFlags) electionID() (controlplane.ElectionID, error) {
	hi, lo, two := strings.Cut(f.election, ",")
	if !two {
		hi, lo = "0", f.election
	}
	h, err1 := strconv.ParseUint(strings.TrimSpace(hi), 10, 64)
	l, err2 := strconv.ParseUint(strings.TrimSpace(lo), 10, 64)
	if err1 != nil || err2 != nil {
		return controlplane.ElectionID{}, usageErrorf("--election-id %q: want HIGH,LOW or LOW, whole numbers", f.election)
	}
	if h == 0 && l == 0 {
		return controlplane.ElectionID{}, usageErrorf("--election-id 0: P4Runtime reserves 0; give 1 or more")
	}
	return controlplane.ElectionID{High: h, Low: l}, nil
}

// dial opens a session, without a pipeline.
func (f *switchFlags) dial(ctx context.Context) (*controlplane.Session, error) {
	id, err := f.electionID()
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	s, err := controlplane.Dial(dctx, f.addr, f.deviceID, id)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("no P4Runtime server answered at %s within %v", f.addr, f.timeout)
	}
	return s, err
}

// open opens a session on the pipeline the switch runs.
func (f *switchFlags) open(ctx context.Context) (*controlplane.Session, error) {
	return f.connect(ctx, false, true)
}

// openPrimary is open for commands that write: a backup is told so
// before it sends anything.
func (f *switchFlags) openPrimary(ctx context.Context) (*controlplane.Session, error) {
	return f.connect(ctx, true, true)
}

// dialPrimary is openPrimary without a pipeline, for setting one.
func (f *switchFlags) dialPrimary(ctx context.Context) (*controlplane.Session, error) {
	return f.connect(ctx, true, false)
}

// connect dials; refuses a backup when primary; adopts the switch's
// pipeline when adopt.
func (f *switchFlags) connect(ctx context.Context, primary, adopt bool) (*controlplane.Session, error) {
	s, err := f.dial(ctx)
	if err != nil {
		return nil, err
	}
	if primary {
		err = f.mustBePrimary(s)
	}
	if err == nil && adopt {
		err = s.AdoptPipeline(ctx, 0)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// mustBePrimary refuses a backup session before it sends a write.
func (f *switchFlags) mustBePrimary(s *controlplane.Session) error {
	if s.Primary() {
		return nil
	}
	return fmt.Errorf("PERMISSION_DENIED: election ID %s is not the highest on device %d at %s: another controller is primary, and only the primary writes", f.election, f.deviceID, f.addr)
}

// statusText is an error as the switch commands print it: a status's
// code by P4Runtime's name, then the message with gRPC's own wording of
// the code ("rpc error: code = ... desc = ") taken out.
func statusText(err error) string {
	var we *controlplane.WriteError
	if errors.As(err, &we) {
		return err.Error()
	}
	st, ok := status.FromError(err) // also finds a status wrapped in err
	if !ok {
		return err.Error()
	}
	msg := st.Message()
	for {
		i := strings.Index(msg, "rpc error: code = ")
		if i < 0 {
			break
		}
		_, rest, found := strings.Cut(msg[i:], " desc = ")
		if !found {
			break
		}
		msg = msg[:i] + rest
	}
	return controlplane.CodeName(st.Code()) + ": " + msg
}

// interrupted is a context that ends on Ctrl-C (SIGINT), SIGTERM (kill,
// timeout, CI) or SIGHUP (a closed terminal or SSH session), for the
// commands that run until stopped or make what must be removed: each
// then cleans up and returns, where the signal's default action would
// kill the process and leave its namespaces, links and switch processes
// behind.
func interrupted(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
}

// changedAny reports whether any of the named flags was given.
func changedAny(fs *pflag.FlagSet, names ...string) bool {
	for _, n := range names {
		if fs.Changed(n) {
			return true
		}
	}
	return false
}
