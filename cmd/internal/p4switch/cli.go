package p4switch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/p4rcm/p4rcm/p4rt"
)

// Exit statuses of Run, the command's.
const (
	ExitOK      = 0 // stopped by SIGINT or SIGTERM
	ExitRuntime = 1 // failed while running
	ExitUsage   = 2 // started wrongly
)

// usageError is a switch started wrongly; it exits 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usage(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// options are simple_switch_grpc's flags that p4switch takes, and its own.
type options struct {
	ifaces     []string
	deviceID   uint64
	thriftPort int
	logConsole bool
	logFile    string
	logLevel   string
	pcap       string
	noP4       bool
	entries    string
	p4info     string
	queueRate  []string
	portRate   []string
	portDelay  []string
	recircRate float64
	queueDepth []string
	seed       uint64
	busyPoll   bool
	portIO     string
	control    string
	json       string
	// mem gives the ports on links in memory (-i PORT@mem:NAME) their
	// ends: the process's, shared by the switches of a group.
	mem *memLinks

	// After "--", as simple_switch_grpc, with p4switch's own gRPC
	// options.
	grpcAddr             string
	cpuPort              int
	priorityQueues       int
	sec                  grpcSecurity
	maxStreams           int
	maxStreamsPerID      int
	maxConns             int
	maxConnsPerID        int
	maxHandshakes        int
	maxHandshakesPerAddr int
	handshakeTimeout     time.Duration
	idleTimeout          time.Duration
	maxRecv              int
	maxRequestBytes      int64
	keepalive            time.Duration
	keepaliveWait        time.Duration
	busyWait             time.Duration
}

// Run is the p4switch command: it parses args (p4switch's command line,
// without the program's name), runs the switch until ctx ends and
// returns the exit status. cmd/p4switch is this function; so is 'p4ctl
// p4switch', with which p4ctl runs the Go target it is built with where
// no p4switch is installed.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o options
	var group string
	starterFD := -1
	cmd := command(&o, func(cmd *cobra.Command) error {
		raiseGCFloor()
		ctx := ctx
		if starterFD >= 0 {
			var err error
			if ctx, err = untilStarterEnds(ctx, starterFD); err != nil {
				return err
			}
		}
		if group != "" {
			flags := cmd.Flags().NFlag()
			if cmd.Flags().Changed("exit-with-fd") {
				flags--
			}
			if flags > 1 || len(cmd.Flags().Args()) > 0 {
				return usage("--group %s takes no other flags nor a program: each switch's are in the file", group)
			}
			return runGroup(ctx, group, stdout, stderr)
		}
		if err := pairMemLinks(memUses("this switch", o)); err != nil {
			return err
		}
		o.mem = &memLinks{}
		log, closeLog, err := o.logger(stderr)
		if err != nil {
			return err
		}
		defer closeLog()
		return serve(ctx, o, log, stdout)
	})
	cmd.Flags().StringVar(&group, "group", "", "run the switches `FILE` describes in this one process, each with its own command line, P4Runtime server and control socket; ports given as PORT@mem:NAME on two of them are joined in memory (docs/emulation.md)")
	cmd.Flags().IntVar(&starterFD, "exit-with-fd", -1, "stop, as on SIGTERM, once the pipe `FD` reads end of file: the read end of a pipe whose write end only the process that started this one holds, which the kernel closes when that process ends, however it ends (switchproc.Start gives it, so that a switch does not outlive a killed test or emulation)")
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(stderr, "p4switch: %v\n", err)
		var ue *usageError
		if errors.As(err, &ue) {
			return ExitUsage
		}
		return ExitRuntime
	}
	return ExitOK
}

// untilStarterEnds is ctx, ended once fd reads end of file (--exit-with-fd).
func untilStarterEnds(ctx context.Context, fd int) (context.Context, error) {
	// Non-blocking, so that the runtime's poller waits on it rather
	// than a thread.
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, usage("--exit-with-fd %d: %v", fd, err)
	}
	f := os.NewFile(uintptr(fd), "starter")
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		defer cancel()
		defer f.Close()
		_, _ = io.Copy(io.Discard, f)
	}()
	return ctx, nil
}

// command is p4switch's command line: it parses args into o, checks the
// program and the options after "--", and calls run.
func command(o *options, run func(cmd *cobra.Command) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "p4switch [options] <program.json> [-- --grpc-server-addr ADDR --cpu-port N --priority-queues N]",
		Short: "Run a v1model program compiled by p4c-bm2-ss on network interfaces",
		Long: `p4switch loads the BMv2 JSON that p4c-bm2-ss writes for a v1model program
and runs it on the given interfaces as BMv2's simple_switch_grpc would: the
same flags, the same standard_metadata, the same traffic manager (strict
priority queues, rates in packets per second, depths in packets).

Entries come from a P4Runtime controller (--grpc-server-addr, after "--"),
which pushes its pipeline first, as with simple_switch_grpc, or, for the
program given on the command line, from a runtime JSON in the format of
the p4lang tutorials (--entries). A program given on the command line,
with its P4Info beside it (or --p4info), is P4Runtime's pipeline from
the start, its entries in it: controllers read and write it as one they
set.

After "--", simple_switch_grpc's TLS options serve P4Runtime over TLS
(--grpc-server-ssl --grpc-server-cert F --grpc-server-key F) or mutual
TLS (--grpc-server-with-client-auth --grpc-server-cacert F), and
p4switch's own --grpc-server-policy F names the client identities that
may be primary; --grpc-max-streams, --grpc-max-connections, their
-per-identity forms, --grpc-max-handshakes, --grpc-handshake-timeout,
--grpc-idle-timeout, --grpc-max-recv-message-size,
--grpc-max-request-bytes, --grpc-keepalive-time, --grpc-keepalive-timeout
and --grpc-keepalive-busy-timeout bound what clients may hold
(docs/p4runtime.md).

With --group FILE, one process runs several switches, each as its own
p4switch would (its P4Runtime server, device id, control socket, ports,
logs): FILE is JSON, {"switches": [{"name": "s1", "args": [...]}, ...]},
each args a p4switch command line. Two of its ports given as
PORT@mem:NAME, the same NAME, are a link in memory: what one sends the
other receives, at the rate and delay its sender's egress gives it, with
no interface, packet socket or process wake-up in between.`,
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f := cmd.Flags().Lookup("group"); f != nil && f.Changed {
				return run(cmd)
			}
			dash := cmd.ArgsLenAtDash()
			pos, target := args, []string(nil)
			if dash >= 0 {
				pos, target = args[:dash], args[dash:]
			}
			if err := o.targetFlags(target); err != nil {
				return err
			}
			switch {
			case len(pos) == 1 && !o.noP4:
				o.json = pos[0]
			case len(pos) == 0 && o.noP4:
			case len(pos) == 0:
				return usage("no program: give the BMv2 JSON p4c-bm2-ss wrote (or --no-p4)")
			case o.noP4:
				return usage("--no-p4 and a program %q: give one or the other", pos[0])
			default:
				return usage("one program, %d given: %s", len(pos), strings.Join(pos, " "))
			}
			return run(cmd)
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&o.ifaces, "interface", "i", nil, "attach `PORT@IFACE` (repeatable)")
	f.Uint64Var(&o.deviceID, "device-id", 0, "device id (the P4Runtime device_id)")
	f.IntVar(&o.thriftPort, "thrift-port", 9090, "accepted for simple_switch_grpc's command lines; p4switch serves no Thrift")
	f.BoolVar(&o.logConsole, "log-console", false, "log to the console (stderr)")
	f.StringVar(&o.logFile, "log-file", "", "log to `FILE`.txt, as BMv2")
	f.StringVarP(&o.logLevel, "log-level", "L", "info", "log level: trace, debug, info, warn, error or off")
	f.Bool("log-flush", false, "accepted for simple_switch_grpc's command lines: p4switch's log is never buffered")
	f.StringVar(&o.pcap, "pcap", "", "write each port's received and sent frames to `DIR`/<iface>_in.pcap and _out.pcap")
	f.BoolVar(&o.noP4, "no-p4", false, "start without a program, for the controller to push one over P4Runtime")
	f.StringVar(&o.entries, "entries", "", "table entries, multicast groups and clone sessions from a tutorials-style runtime JSON `FILE`")
	f.StringVar(&o.p4info, "p4info", "", "the program's P4Info (text) `FILE`, which makes it P4Runtime's pipeline, for controllers to read and write (default: the one p4c wrote beside the JSON, NAME.p4info.txtpb or .txt, if there is one)")
	f.StringArrayVar(&o.queueRate, "queue-rate", nil, "egress rate in packets per second: `PPS` for every port or PORT:PPS (repeatable), as set_queue_rate")
	f.StringArrayVar(&o.portRate, "port-rate", nil, "make egress ports links of `BPS` bits per second shared by their priority queues (a frame's bytes plus 24 for FCS, preamble and gap): BPS for every port or PORT:BPS (repeatable); the Go target's own, BMv2's queue rates count packets")
	f.StringArrayVar(&o.portDelay, "port-delay", nil, "give egress ports' links a propagation delay: `DUR` (e.g. 5ms) for every port or PORT:DUR (repeatable); a frame arrives DUR after its last bit left; the Go target's own")
	f.Float64Var(&o.recircRate, "recirculation-rate", 0, "recirculated packets per second back to ingress (0: as fast as the switch runs)")
	f.StringArrayVar(&o.queueDepth, "queue-depth", nil, "egress queue depth in packets: `N` for every port or PORT:N (repeatable), as set_queue_depth")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the program's random()")
	f.BoolVar(&o.busyPoll, "busy-poll", false, "poll the ports without sleeping: a core per receiving port for the lowest latency")
	f.StringVar(&o.portIO, "port-io", "auto", "how ports move frames: ring (received frames read from a ring mapped with the kernel, no system call; sent by sendmmsg), ring-v3 (the ring in blocks: fewer wake-ups, up to 1 ms more latency when traffic is light), mmsg (recvmmsg and sendmmsg), or auto (ring where the kernel sets it up, else mmsg)")
	f.StringVar(&o.control, "control", "", "take set_queue_rate, set_queue_depth, set_port_rate, set_port_delay, set_recirculation_rate and mirroring_add while running, one per line, on the Unix socket `PATH`")
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usage("%v; see 'p4switch --help'", err) })
	return cmd
}

// targetFlags parses the options after "--", simple_switch_grpc's own.
func (o *options) targetFlags(args []string) error {
	fs := pflag.NewFlagSet("target options", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.grpcAddr, "grpc-server-addr", "127.0.0.1:9559", "P4Runtime address (port 0: any free port, printed at start)")
	fs.IntVar(&o.cpuPort, "cpu-port", 0, "CPU port")
	fs.IntVar(&o.priorityQueues, "priority-queues", 1, "strict-priority queues per port")
	fs.BoolVar(&o.sec.ssl, "grpc-server-ssl", false, "serve P4Runtime over TLS")
	fs.StringVar(&o.sec.cacert, "grpc-server-cacert", "", "PEM file of the CA that verifies clients' certificates")
	fs.StringVar(&o.sec.cert, "grpc-server-cert", "", "PEM file of the server's certificate")
	fs.StringVar(&o.sec.key, "grpc-server-key", "", "PEM file of the server's key")
	fs.BoolVar(&o.sec.clientAuth, "grpc-server-with-client-auth", false, "require clients to present a certificate the CA signed (mutual TLS)")
	fs.StringVar(&o.sec.policy, "grpc-server-policy", "", "p4switch's own: JSON file of the client identities that may be primary")
	fs.IntVar(&o.maxStreams, "grpc-max-streams", p4rt.DefaultMaxStreams, "p4switch's own: StreamChannel streams at once")
	fs.IntVar(&o.maxStreamsPerID, "grpc-max-streams-per-identity", p4rt.DefaultMaxStreamsPerIdentity, "p4switch's own: streams of one client certificate's identity (mutual TLS)")
	fs.IntVar(&o.maxConns, "grpc-max-connections", p4rt.DefaultMaxConnections, "p4switch's own: authenticated client connections at once")
	fs.IntVar(&o.maxConnsPerID, "grpc-max-connections-per-identity", p4rt.DefaultMaxConnectionsPerIdentity, "p4switch's own: connections of one client certificate's identity (mutual TLS)")
	fs.IntVar(&o.maxHandshakes, "grpc-max-handshakes", p4rt.DefaultMaxHandshakes, "p4switch's own: connections in their handshake at once, past which a newcomer displaces the oldest")
	fs.IntVar(&o.maxHandshakesPerAddr, "grpc-max-handshakes-per-address", p4rt.DefaultMaxHandshakesPerAddr, "p4switch's own: connections in their handshake from one peer address")
	fs.DurationVar(&o.handshakeTimeout, "grpc-handshake-timeout", p4rt.DefaultHandshakeTimeout, "p4switch's own: close a connection whose handshake has not finished after this long")
	fs.DurationVar(&o.idleTimeout, "grpc-idle-timeout", p4rt.DefaultIdleTimeout, "p4switch's own: close a connection that carried no request this long")
	fs.IntVar(&o.maxRecv, "grpc-max-recv-message-size", p4rt.DefaultMaxRecvMsgSize, "p4switch's own: largest request, bytes")
	fs.Int64Var(&o.maxRequestBytes, "grpc-max-request-bytes", 0, "p4switch's own: bytes of Write and pipeline requests received at once, each counted at the largest request (default twice --grpc-max-recv-message-size)")
	fs.DurationVar(&o.keepalive, "grpc-keepalive-time", p4rt.DefaultKeepaliveTime, "p4switch's own: ping a client silent this long")
	fs.DurationVar(&o.keepaliveWait, "grpc-keepalive-timeout", p4rt.DefaultKeepaliveTimeout, "p4switch's own: drop a client whose ping answer is this late")
	fs.DurationVar(&o.busyWait, "grpc-keepalive-busy-timeout", p4rt.DefaultBusyTimeout, "p4switch's own: the same for a client with a request in progress (sending it, waiting for its answer, reading it), which may be slow to answer, not frozen")
	if err := fs.Parse(args); err != nil {
		return usage("after --: %v", err)
	}
	if fs.NArg() > 0 {
		return usage("after --: unexpected %q", fs.Arg(0))
	}
	if o.priorityQueues < 1 || o.priorityQueues > 8 {
		return usage("--priority-queues %d: want 1 to 8", o.priorityQueues)
	}
	for name, n := range map[string]int{"grpc-max-streams": o.maxStreams, "grpc-max-streams-per-identity": o.maxStreamsPerID,
		"grpc-max-connections-per-identity": o.maxConnsPerID, "grpc-max-handshakes": o.maxHandshakes,
		"grpc-max-handshakes-per-address": o.maxHandshakesPerAddr} {
		if n < 1 {
			return usage("after --: --%s %d: want 1 or more", name, n)
		}
	}
	for name, d := range map[string]time.Duration{"grpc-handshake-timeout": o.handshakeTimeout, "grpc-idle-timeout": o.idleTimeout} {
		if d <= 0 {
			return usage("after --: --%s %v: want more than 0, such as 5s", name, d)
		}
	}
	switch {
	case o.maxConns < o.maxStreams:
		return usage("after --: --grpc-max-connections %d: want at least --grpc-max-streams (%d), a connection per stream", o.maxConns, o.maxStreams)
	case o.maxRecv < 4<<20:
		return usage("after --: --grpc-max-recv-message-size %d: want 4 MiB (%d) or more", o.maxRecv, 4<<20)
	case o.maxRequestBytes != 0 && o.maxRequestBytes < int64(o.maxRecv):
		return usage("after --: --grpc-max-request-bytes %d: want at least --grpc-max-recv-message-size (%d), room for one request", o.maxRequestBytes, o.maxRecv)
	case o.keepalive < time.Second:
		return usage("after --: --grpc-keepalive-time %v: want 1s or more (gRPC pings no more often)", o.keepalive)
	case o.keepaliveWait <= 0:
		return usage("after --: --grpc-keepalive-timeout %v: want more than 0", o.keepaliveWait)
	case o.busyWait < o.keepaliveWait:
		return usage("after --: --grpc-keepalive-busy-timeout %v: want at least --grpc-keepalive-timeout (%v)", o.busyWait, o.keepaliveWait)
	}
	return o.sec.check()
}

// logger builds the log: console, file, or nowhere.
func (o *options) logger(stderr io.Writer) (*slog.Logger, func(), error) {
	levels := map[string]slog.Level{"trace": slog.LevelDebug - 4, "debug": slog.LevelDebug, "info": slog.LevelInfo,
		"warn": slog.LevelWarn, "warning": slog.LevelWarn, "error": slog.LevelError, "off": slog.LevelError + 100}
	level, ok := levels[o.logLevel]
	if !ok {
		return nil, nil, usage("--log-level %q: want trace, debug, info, warn, error or off", o.logLevel)
	}
	var w io.Writer
	closer := func() {}
	switch {
	case o.logFile != "":
		// As BMv2, which writes FILE.txt.
		f, err := createLog(o.logFile + ".txt")
		if err != nil {
			return nil, nil, usage("--log-file: %v", err)
		}
		w, closer = f, func() { f.Close() }
	case o.logConsole:
		w = stderr
	default:
		return slog.New(slog.DiscardHandler), closer, nil
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})), closer, nil
}

// portValue splits a flag's "V" (every port, -1) or "PORT:V".
func portValue(flag, s string) (port int, val string, err error) {
	if p, rest, ok := strings.Cut(s, ":"); ok {
		if port, err = strconv.Atoi(p); err != nil || port < 0 {
			return 0, "", usage("--%s %q: port %q is not a port number", flag, s, p)
		}
		return port, rest, nil
	}
	return -1, s, nil
}

// portSetting reads a number, 0 or more, for every port or one.
func portSetting(flag, s string) (int, float64, error) {
	port, val, err := portValue(flag, s)
	if err != nil {
		return 0, 0, err
	}
	v, err := strconv.ParseFloat(val, 64)
	if err != nil || v < 0 {
		return 0, 0, usage("--%s %q: %q is not a number, 0 or more", flag, s, val)
	}
	return port, v, nil
}

// portDuration reads a duration, 0 or more, for every port or one.
func portDuration(flag, s string) (int, time.Duration, error) {
	port, val, err := portValue(flag, s)
	if err != nil {
		return 0, 0, err
	}
	d, err := time.ParseDuration(val)
	if err != nil || d < 0 {
		return 0, 0, usage("--%s %q: %q is not a duration such as 5ms, 0 or more", flag, s, val)
	}
	return port, d, nil
}
