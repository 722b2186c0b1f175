package p4switch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"

	"google.golang.org/grpc"

	"github.com/p4rcm/p4rcm/afpacket"
	"github.com/p4rcm/p4rcm/p4rt"
	"github.com/p4rcm/p4rcm/v1model"
)

// port is one attached interface with its counters, pcap files and the
// frames waiting to be sent in one batch.
type port struct {
	num     int
	name    string // the interface, or mem:NAME
	p       link
	in, out *pcapFile
	rx, tx  atomic.Uint64

	// Frames to send, filled by emit (under the switch's lock) from
	// whichever goroutine runs egress, and sent by flush: two sets of
	// buffers, one filling while the other is on its way out.
	mu      sync.Mutex
	sendMu  sync.Mutex
	pending [][]byte
	bufs    [afpacket.Batch][]byte
	spare   [afpacket.Batch][]byte
	out2    [][]byte

	// mem is the port's link when that is a link in memory, which
	// carries the link's clock to the far end: pendingAt holds when the
	// link delivered each pending frame (at2 is flush's copy), late the
	// receiving goroutine's lateness of each frame it got.
	mem       *memEnd
	pendingAt []time.Time
	at2       []time.Time
	late      []time.Duration
}

type pcapFile struct {
	mu sync.Mutex
	f  *os.File
	w  *pcapgo.Writer
}

func (pf *pcapFile) write(frame []byte) {
	if pf == nil {
		return
	}
	pf.mu.Lock()
	defer pf.mu.Unlock()
	ci := gopacket.CaptureInfo{Timestamp: time.Now(), CaptureLength: len(frame), Length: len(frame)}
	_ = pf.w.WritePacket(ci, frame) // a full disk must not stop the switch
}

func createLog(path string) (*os.File, error) {
	return openNoFollow(path, os.O_APPEND)
}

// openNoFollow opens a file the switch writes (its log, its pcaps),
// creating it, without following a symbolic link at its name: a link
// there, left by someone who can write the directory, would have the
// switch (root, as a rule) append to or truncate whatever it points at.
func openNoFollow(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|syscall.O_NOFOLLOW|flag, 0o644)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symbolic link: p4switch writes no file through a link (remove it, or name the file itself)", path)
	}
	return f, err
}

func serve(ctx context.Context, o options, log *slog.Logger, stdout io.Writer) error {
	attach, err := parseInterfaces(o.ifaces)
	if err != nil {
		return err
	}
	if o.cpuPort != 0 {
		for _, a := range attach {
			if a.num == o.cpuPort {
				return usage("--cpu-port %d is also attached to %s: the CPU port is the controller's, not an interface's", o.cpuPort, a.iface)
			}
		}
	}
	swCfg := v1model.Config{Logger: log, Seed: o.seed, PriorityQueues: o.priorityQueues}
	if o.noP4 && o.entries != "" {
		return usage("--entries with --no-p4: entries need a program")
	}
	if o.noP4 && o.p4info != "" {
		return usage("--p4info with --no-p4: the P4Info goes with a program")
	}
	var rt *v1model.Runtime
	if o.entries != "" {
		if rt, err = v1model.LoadRuntime(o.entries); err != nil {
			return usage("--entries: %v", err)
		}
	}
	// The program given on the command line is also P4Runtime's pipeline
	// when its P4Info is at hand, so that a controller (p4ctl stats)
	// reads the switch it finds: it is then compiled and its entries
	// installed through the P4Runtime server (preload, below), once.
	// Otherwise the target loads it here, the entries with it.
	p4info := o.p4info
	if p4info == "" && !o.noP4 {
		p4info = p4infoBeside(o.json)
	}
	noPreload := ""
	switch {
	case o.noP4:
	case p4info == "":
		noPreload = fmt.Sprintf("no P4Info beside %s (--p4info names one)", o.json)
	case rt != nil && profilesOrMeters(rt) != "":
		noPreload = fmt.Sprintf("--entries has %s, which P4Runtime's runtime files do not", profilesOrMeters(rt))
	}
	var sw *v1model.Switch
	if !o.noP4 && noPreload != "" {
		cfg := swCfg
		cfg.Digest = func(d v1model.Digest) { log.Info("digest", "list", d.List, "values", d.Values) }
		if sw, err = v1model.Load(o.json, cfg); err != nil {
			return usage("%v", err)
		}
		if rt != nil {
			if err := sw.Install(rt); err != nil {
				return usage("--entries: %v", err)
			}
		}
	}
	// portSetting has checked the values; the settings apply to every
	// switch the datapath runs.
	dp := &datapath{}
	for _, s := range o.queueRate {
		p, v, err := portSetting("queue-rate", s)
		if err != nil {
			return err
		}
		if err := inRange("queue rate", v); err != nil {
			return usage("--queue-rate %s: %v", s, err)
		}
		_ = dp.setting(func(sw *v1model.Switch) error { return sw.SetQueueRate(p, -1, v) })
	}
	for _, s := range o.portRate {
		p, v, err := portSetting("port-rate", s)
		if err != nil {
			return err
		}
		if err := inRange("port rate", v); err != nil {
			return usage("--port-rate %s: %v", s, err)
		}
		_ = dp.setting(func(sw *v1model.Switch) error { return sw.SetPortRate(p, v) })
	}
	for _, s := range o.portDelay {
		p, d, err := portDuration("port-delay", s)
		if err != nil {
			return err
		}
		if err := inRange("port delay", d.Seconds()); err != nil {
			return usage("--port-delay %s: %v", s, err)
		}
		_ = dp.setting(func(sw *v1model.Switch) error { return sw.SetPortDelay(p, d) })
	}
	if err := inRange("recirculation rate", o.recircRate); err != nil {
		return usage("--recirculation-rate: %v", err)
	}
	if o.recircRate > 0 {
		_ = dp.setting(func(sw *v1model.Switch) error { return sw.SetRecirculationRate(o.recircRate) })
	}
	for _, s := range o.queueDepth {
		p, v, err := portSetting("queue-depth", s)
		if err != nil {
			return err
		}
		if v != float64(int(v)) || v < 1 || inRange("queue depth", v) != nil {
			return usage("--queue-depth %s: want a whole number of packets, 1 to %d", s, int(settingRanges["queue depth"].max))
		}
		_ = dp.setting(func(sw *v1model.Switch) error { return sw.SetQueueDepth(p, -1, int(v)) })
	}
	portIO, err := afpacket.ParseIO(o.portIO)
	if err != nil {
		return usage("--port-io: %v", err)
	}
	ports := map[int]*port{}
	var order []int
	closeAll := func() {
		for _, n := range order {
			pt := ports[n]
			pt.p.Close()
			for _, pf := range []*pcapFile{pt.in, pt.out} {
				if pf != nil {
					pf.f.Close()
				}
			}
		}
	}
	for _, a := range attach {
		var l link
		var mem *memEnd
		if name, ok := memName(a.iface); ok {
			mem = o.mem.claim(name)
			l = mem
		} else {
			ap, err := afpacket.Open(a.iface, afpacket.WithIO(portIO))
			if err != nil {
				closeAll()
				return usage("-i %d@%s: %v", a.num, a.iface, err)
			}
			if why := ap.RingRefused(); why != nil {
				log.Warn("port on recvmmsg and sendmmsg: the kernel refused its rings", "port", a.num, "err", why)
			}
			log.Info("port open", "port", a.num, "iface", a.iface, "io", ap.IO())
			ap.BusyPoll = o.busyPoll
			l = socket{ap}
		}
		pt := &port{num: a.num, name: a.iface, p: l, mem: mem}
		for i := range pt.bufs {
			pt.bufs[i] = make([]byte, 0, afpacket.MaxFrame+512)
			pt.spare[i] = make([]byte, 0, afpacket.MaxFrame+512)
		}
		ports[a.num] = pt
		order = append(order, a.num)
		if o.pcap != "" {
			// A link in memory's pcaps are named without the colon.
			base := strings.ReplaceAll(a.iface, ":", "-")
			if pt.in, err = openPcap(filepath.Join(o.pcap, base+"_in.pcap")); err == nil {
				pt.out, err = openPcap(filepath.Join(o.pcap, base+"_out.pcap"))
			}
			if err != nil {
				closeAll()
				return usage("--pcap: %v", err)
			}
		}
	}
	var unattached, noProgram atomic.Uint64
	var srv *p4rt.Server
	emitFor := func(sw *v1model.Switch) v1model.Emit {
		return func(n int, frame []byte) {
			if n == o.cpuPort && o.cpuPort != 0 {
				srv.PacketIn(frame)
				return
			}
			pt := ports[n]
			if pt == nil {
				unattached.Add(1)
				return
			}
			if pt.add(frame, sw.EmitLateness()) {
				pt.flush(log)
			}
		}
	}
	flush := func() {
		for _, n := range order {
			ports[n].flush(log)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	dp.emitFor, dp.idle = emitFor, flush
	creds, policy, err := o.sec.credentials()
	if err != nil {
		closeAll()
		return err
	}
	rtCfg := p4rt.Config{DeviceID: o.deviceID, Switch: swCfg, Logger: log,
		Commit: func(sw *v1model.Switch) { dp.replace(ctx, sw) }, Policy: policy,
		MaxStreams: o.maxStreams, MaxStreamsPerIdentity: o.maxStreamsPerID, MaxRecvMsgSize: o.maxRecv, MaxRequestBytes: o.maxRequestBytes,
		MaxConnections: o.maxConns, MaxConnectionsPerIdentity: o.maxConnsPerID, MaxHandshakes: o.maxHandshakes,
		MaxHandshakesPerAddr: o.maxHandshakesPerAddr, HandshakeTimeout: o.handshakeTimeout, IdleTimeout: o.idleTimeout,
		KeepaliveTime: o.keepalive, KeepaliveTimeout: o.keepaliveWait, BusyTimeout: o.busyWait}
	if o.cpuPort != 0 {
		rtCfg.PacketOut = func(sw *v1model.Switch, frame []byte) error {
			err := sw.ReceiveBatch(o.cpuPort, [][]byte{frame}, emitFor(sw))
			flush()
			return err
		}
	}
	srv = p4rt.New(rtCfg)
	var cookie uint64
	if !o.noP4 && noPreload == "" {
		if cookie, err = preload(ctx, srv, o.deviceID, p4info, o.json, rt); err != nil {
			closeAll()
			return usage("%v", err)
		}
	}
	// The control socket is up before the P4Runtime port accepts, so
	// that a harness that waits for the port (switchproc.Start) finds both.
	if o.control != "" {
		ctl, err := listenControl(o.control, dp, log)
		if err != nil {
			closeAll()
			return usage("--control: %v", err)
		}
		ctl.stats = func() []string {
			var lines []string
			for _, n := range order {
				lines = append(lines, ports[n].stats(dp.current(), true))
			}
			return lines
		}
		defer os.Remove(o.control)
		go ctl.serve(ctx)
	}
	lis, err := net.Listen("tcp", o.grpcAddr)
	if err != nil {
		closeAll()
		return usage("--grpc-server-addr %s: %v", o.grpcAddr, err)
	}
	var gs *grpc.Server
	if creds != nil {
		gs = srv.NewGRPCServer(grpc.Creds(creds))
	} else {
		gs = srv.NewGRPCServer()
		if !loopback(lis.Addr()) {
			fmt.Fprint(stdout, plainTextWarning(lis.Addr()))
		}
	}
	go func() { _ = gs.Serve(srv.Listener(lis)) }()
	defer gs.Stop()
	if sw != nil {
		dp.replace(ctx, sw)
	}
	var wg sync.WaitGroup
	failed := make(chan error, len(order))
	for _, n := range order {
		pt := ports[n]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				frames, err := pt.p.Recv()
				if err != nil {
					if !errors.Is(err, afpacket.ErrClosed) {
						failed <- err
					}
					return
				}
				pt.rx.Add(uint64(len(frames)))
				for _, f := range frames {
					pt.in.write(f)
				}
				sw, emit := dp.running()
				if sw == nil {
					noProgram.Add(uint64(len(frames)))
					continue
				}
				var late []time.Duration
				if pt.mem != nil {
					pt.late = pt.mem.lateness(pt.late[:0])
					late = pt.late
				}
				if err := sw.ReceiveBatchLate(pt.num, frames, late, emit); err != nil {
					if sw.Stopped() != nil {
						failed <- err
						return
					}
					log.Warn("frame refused", "port", pt.num, "err", err)
				}
				flush()
			}
		}()
	}
	var names []string
	for _, a := range attach {
		names = append(names, fmt.Sprintf("%d@%s", a.num, a.iface))
	}
	if len(names) == 0 {
		names = []string{"no interfaces"}
	}
	program := o.json
	switch {
	case o.noP4:
		program = "no program (waiting for one over P4Runtime)"
	case noPreload != "":
		program += fmt.Sprintf(" (P4Runtime serves no pipeline: %s)", noPreload)
	default:
		program += fmt.Sprintf(" (P4Runtime pipeline cookie %#x, with %s)", cookie, p4info)
	}
	security := ""
	switch {
	case policy != nil:
		security = fmt.Sprintf(" over mutual TLS, primary only for the writers of %s", policy.Path)
	case o.sec.clientAuth:
		security = " over mutual TLS"
	case o.sec.ssl:
		security = " over TLS"
	}
	fmt.Fprintf(stdout, "p4switch: running %s on %s; P4Runtime on %s%s, device %d\n", program, strings.Join(names, ", "), lis.Addr(), security, o.deviceID)
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-failed:
	}
	cancel()
	gs.Stop()
	closeAll()
	wg.Wait()
	dp.close()
	last := dp.current()
	for _, n := range order {
		fmt.Fprintf(stdout, "p4switch: %s\n", ports[n].stats(last, false))
	}
	if last != nil {
		if n := last.RecirculationDrops(); n > 0 {
			fmt.Fprintf(stdout, "p4switch: %d recirculated packets dropped at a full recirculation queue\n", n)
		}
	}
	if n := noProgram.Load(); n > 0 {
		fmt.Fprintf(stdout, "p4switch: %d frames arrived before a program was set\n", n)
	}
	if u := unattached.Load(); u > 0 {
		fmt.Fprintf(stdout, "p4switch: %d frames sent to ports without an interface\n", u)
	}
	return runErr
}

// stats is the port's counts as a line: frames in and out, dropped at
// full queues (sw's, if any) and, where any were or always, lost by its
// link before the switch saw them (link.dropped).
func (pt *port) stats(sw *v1model.Switch, always bool) string {
	drops := uint64(0)
	if sw != nil {
		drops = sw.QueueDrops(pt.num)
	}
	line := fmt.Sprintf("port %d (%s): %d frames in, %d out, %d dropped at full queues", pt.num, pt.name, pt.rx.Load(), pt.tx.Load(), drops)
	if n, why := pt.p.dropped(); n > 0 || always {
		line += fmt.Sprintf(", %d %s", n, why)
	}
	return line
}

// add copies a frame the switch sends into the pending batch, with how
// late its link delivered it (EmitLateness), which a link in memory
// hands on: the far end counts the frame from then (ReceiveBatchLate).
// It reports whether the batch is full, to be flushed.
func (pt *port) add(frame []byte, late time.Duration) (full bool) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	k := len(pt.pending)
	pt.pending = append(pt.pending, append(pt.bufs[k][:0], frame...))
	if pt.mem != nil {
		pt.pendingAt = append(pt.pendingAt, time.Now().Add(-late))
	}
	return len(pt.pending) == afpacket.Batch
}

// flush sends the pending batch on the port's link.
func (pt *port) flush(log *slog.Logger) {
	// One sender at a time; emit keeps filling the other buffers.
	pt.sendMu.Lock()
	defer pt.sendMu.Unlock()
	pt.mu.Lock()
	if len(pt.pending) == 0 {
		pt.mu.Unlock()
		return
	}
	out := append(pt.out2[:0], pt.pending...)
	at := append(pt.at2[:0], pt.pendingAt...)
	pt.bufs, pt.spare = pt.spare, pt.bufs
	pt.pending = pt.pending[:0]
	pt.pendingAt = pt.pendingAt[:0]
	pt.mu.Unlock()
	var err error
	if pt.mem != nil {
		err = pt.mem.sendAt(out, at)
	} else {
		err = pt.p.Send(out...)
	}
	pt.at2 = at[:0]
	if err != nil && !errors.Is(err, afpacket.ErrClosed) {
		log.Warn("send failed", "port", pt.num, "err", err)
	}
	for _, f := range out {
		pt.out.write(f)
	}
	pt.tx.Add(uint64(len(out)))
	pt.out2 = out[:0]
}

type attachment struct {
	num   int
	iface string
}

// parseInterfaces reads -i PORT@IFACE flags.
func parseInterfaces(flags []string) ([]attachment, error) {
	var out []attachment
	seenPort, seenIf := map[int]bool{}, map[string]bool{}
	for _, s := range flags {
		p, iface, ok := strings.Cut(s, "@")
		n, err := strconv.Atoi(p)
		if !ok || err != nil || n < 0 || n >= v1model.DropPort || iface == "" {
			return nil, usage("-i %q: want PORT@IFACE with a port from 0 to %d", s, v1model.DropPort-1)
		}
		if seenPort[n] || seenIf[iface] {
			return nil, usage("-i %q: port %d or interface %s attached twice", s, n, iface)
		}
		seenPort[n], seenIf[iface] = true, true
		out = append(out, attachment{n, iface})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].num < out[j].num })
	return out, nil
}

func openPcap(path string) (*pcapFile, error) {
	f, err := openNoFollow(path, os.O_TRUNC)
	if err != nil {
		return nil, err
	}
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(afpacket.MaxFrame, layers.LinkTypeEthernet); err != nil {
		f.Close()
		return nil, err
	}
	return &pcapFile{f: f, w: w}, nil
}
