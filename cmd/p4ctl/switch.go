package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/p4rcm/p4rcm/controlplane"
	"github.com/p4rcm/p4rcm/internal/stopsig"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/grpc/codes"
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
	tls      tlsFlags
	tlsCfg   *tls.Config // from tls, once reach has checked it
}

// tlsFlags are p4runtime-shell's TLS flags: --ssl, --cacert, --cert,
// --private-key.
type tlsFlags struct {
	ssl               bool
	cacert, cert, key string
}

func (t *tlsFlags) add(fs *pflag.FlagSet) {
	fs.BoolVar(&t.ssl, "ssl", false, "P4Runtime over TLS (the switch's --grpc-server-ssl)")
	fs.StringVar(&t.cacert, "cacert", "", "with --ssl, the PEM file of the CA that signed the switch's certificate (default: the system's)")
	fs.StringVar(&t.cert, "cert", "", "with --ssl, the PEM file of this controller's certificate, for a switch that asks for one (mutual TLS)")
	fs.StringVar(&t.key, "private-key", "", "with --ssl, the PEM file of --cert's key")
}

// config checks the flags and reads the files: nil for plain text.
func (t *tlsFlags) config() (*tls.Config, error) {
	if !t.ssl {
		for flag, v := range map[string]string{"cacert": t.cacert, "cert": t.cert, "private-key": t.key} {
			if v != "" {
				return nil, usageErrorf("--%s makes no sense without --ssl: give --ssl to speak TLS to the switch", flag)
			}
		}
		return nil, nil
	}
	if (t.cert == "") != (t.key == "") {
		return nil, usageErrorf("--cert and --private-key go together: the controller's certificate and its key")
	}
	cfg, err := controlplane.TLS{CACert: t.cacert, Cert: t.cert, Key: t.key}.Config()
	if err != nil {
		return nil, usageErrorf("--ssl: %v", err)
	}
	return cfg, nil
}

// addSwitchFlags defines the connection flags of a command that writes.
func addSwitchFlags(cmd *cobra.Command) *switchFlags {
	f := addReadFlags(cmd)
	fs := cmd.Flags()
	fs.Lookup("election-id").Hidden = false
	fs.Lookup("election-id").Deprecated = ""
	return f
}

// addReadFlags defines the connection flags of a command that only
// reads. Reads need no arbitration, so such a command takes no election
// ID and runs beside any controller, primary or not; --election-id is
// still accepted, for scripts written before, and ignored.
func addReadFlags(cmd *cobra.Command) *switchFlags {
	f := &switchFlags{}
	fs := cmd.Flags()
	fs.StringVar(&f.addr, "addr", "127.0.0.1:9559", "the switch's P4Runtime server, HOST:PORT")
	fs.Uint64Var(&f.deviceID, "device-id", 0, "the switch's P4Runtime device ID (simple_switch_grpc's and p4switch's --device-id, 0 unless given)")
	fs.StringVar(&f.election, "election-id", "0,1", "this controller's election ID, HIGH,LOW or LOW; the highest is primary, and only the primary writes")
	_ = fs.MarkDeprecated("election-id", "this command only reads, and reads need no election ID; it is ignored")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Second, "how long to wait for the switch")
	f.tls.add(fs)
	return f
}

// options are the session options the flags give: TLS.
func (f *switchFlags) options() []controlplane.Option {
	if f.tlsCfg == nil {
		return nil
	}
	return []controlplane.Option{controlplane.WithTLS(f.tlsCfg)}
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
		return controlplane.ElectionID{}, usageErrorf("--election-id 0: 0 is no controller's election ID, and switches refuse it; give 1 or more")
	}
	return controlplane.ElectionID{High: h, Low: l}, nil
}

// noAnswer is the error for a switch that takes connections but did not
// answer as a P4Runtime server in time.
func (f *switchFlags) noAnswer() error {
	hint := " (or a switch that serves TLS: give --ssl)"
	if f.tlsCfg != nil {
		hint = ""
	}
	return fmt.Errorf("%s takes connections, but no P4Runtime server answered there within %v: is it the switch's P4Runtime port (and --device-id its device)?%s", f.addr, f.timeout, hint)
}

// reach checks the flags and that something listens at --addr, so that
// a malformed address (exit 2), a host that does not resolve and a port
// where nothing listens are told at once, for what they are.
func (f *switchFlags) reach(ctx context.Context) error {
	if err := controlplane.CheckAddr(f.addr); err != nil {
		return usageErrorf("--addr %v", err)
	}
	if f.timeout <= 0 {
		return usageErrorf("--timeout %v: want a time to wait, more than 0, such as 10s", f.timeout)
	}
	cfg, err := f.tls.config()
	if err != nil {
		return err
	}
	f.tlsCfg = cfg
	dctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	err = controlplane.Reach(dctx, f.addr)
	if err == nil && cfg != nil {
		err = controlplane.CheckTLS(dctx, f.addr, cfg)
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return fmt.Errorf("%s did not answer within %v: a host that is down, or a firewall that drops?", f.addr, f.timeout)
	}
	return err
}

// gone is the error for a switch that stopped answering (a stream that
// ended, a read the transport could not deliver), with why.
func (f *switchFlags) gone(why error) error {
	if why == nil {
		return fmt.Errorf("the switch at %s went away", f.addr)
	}
	// The status itself, not gRPC's wording of the errors wrapped round
	// it, nor its transport's ("error reading from server: EOF").
	var st interface{ GRPCStatus() *status.Status }
	msg := why.Error()
	if errors.As(why, &st) {
		msg = st.GRPCStatus().Message()
		if st.GRPCStatus().Code() == codes.Unavailable {
			msg = "its connection closed"
		}
	}
	return fmt.Errorf("the switch at %s went away (%s)", f.addr, msg)
}

// stoppedAnswering is the error for a switch that keeps its connection
// but answers nothing within --timeout: a switch process stopped
// (SIGSTOP), or hung.
func (f *switchFlags) stoppedAnswering() error {
	return fmt.Errorf("the switch at %s stopped answering: nothing came back within %v (--timeout); is it stopped or hung?", f.addr, f.timeout)
}

// dialReader opens a reader: no stream, no arbitration.
func (f *switchFlags) dialReader(ctx context.Context) (*controlplane.Session, error) {
	if err := f.reach(ctx); err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	s, err := controlplane.DialReader(dctx, f.addr, f.deviceID, f.options()...)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, f.noAnswer()
	}
	return s, err
}

// read opens a reader on the pipeline the switch runs, for the commands
// that only read.
func (f *switchFlags) read(ctx context.Context) (*controlplane.Session, error) {
	s, err := f.dialReader(ctx)
	if err != nil {
		return nil, err
	}
	if err := f.adopt(ctx, s); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// adopt adopts the switch's pipeline on s, telling a switch that runs
// none what to do.
func (f *switchFlags) adopt(ctx context.Context, s *controlplane.Session) error {
	err := s.AdoptPipeline(ctx, 0)
	if status.Code(err) == codes.FailedPrecondition {
		if _, running, cerr := s.RunningCookie(ctx); cerr == nil && !running {
			return status.Errorf(codes.FailedPrecondition, "device %d at %s runs no pipeline yet: 'p4ctl pipeline set' installs rcm.p4, 'p4ctl fabric apply' a fabric's", f.deviceID, f.addr)
		}
	}
	return err
}

// dial opens a session that takes part in arbitration, without a
// pipeline. Another live controller holding the same election ID is, as
// a rule, another p4ctl command that writes and is done within a
// moment: dial waits for it, up to --timeout.
func (f *switchFlags) dial(ctx context.Context) (*controlplane.Session, error) {
	id, err := f.electionID()
	if err != nil {
		return nil, err
	}
	if err := f.reach(ctx); err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	s, err := controlplane.Dial(dctx, f.addr, f.deviceID, id, append(f.options(), controlplane.WaitWhileHeld())...)
	switch {
	case err == nil:
		return s, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case status.Code(err) == codes.InvalidArgument:
		return nil, fmt.Errorf("election ID %s was another controller's all of %v on device %d at %s (a p4ctl that writes, or a controller that stays): give another --election-id; the highest is primary, and only the primary writes",
			f.election, f.timeout, f.deviceID, f.addr)
	case errors.Is(err, context.DeadlineExceeded):
		return nil, f.noAnswer()
	}
	return nil, err
}

// openPrimary opens a primary session on the pipeline the switch runs,
// for the commands that write: a backup is told so before it sends
// anything.
func (f *switchFlags) openPrimary(ctx context.Context) (*controlplane.Session, error) {
	return f.connect(ctx, true)
}

// dialPrimary is openPrimary without a pipeline, for setting one.
func (f *switchFlags) dialPrimary(ctx context.Context) (*controlplane.Session, error) {
	return f.connect(ctx, false)
}

// connect dials as primary; adopts the switch's pipeline when adopt.
func (f *switchFlags) connect(ctx context.Context, adopt bool) (*controlplane.Session, error) {
	s, err := f.dial(ctx)
	if err != nil {
		return nil, err
	}
	err = f.mustBePrimary(s)
	if err == nil && adopt {
		err = f.adopt(ctx, s)
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
	holder := "another controller"
	if id, ok := s.PrimaryElection(); ok {
		holder += " (election ID " + id.String() + ")"
	}
	return fmt.Errorf("PERMISSION_DENIED: %s is primary on device %d at %s, above election ID %s, and only the primary writes: wait for it to leave, or give a higher --election-id to take over",
		holder, f.deviceID, f.addr, f.election)
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
// timeout, CI), SIGHUP (a closed terminal or SSH session) or SIGPIPE
// (the reader of its output gone, as `| head` goes), for the commands
// that run until stopped or make what must be removed: each then cleans
// up and returns, where the signal's default action would kill the
// process and leave its namespaces, links and switch processes behind.
func interrupted(ctx context.Context) (context.Context, context.CancelFunc) {
	return stopsig.Context(ctx)
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
