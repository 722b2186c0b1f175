package fabric

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/p4rcm/p4rcm/controlplane"
	"github.com/p4rcm/p4rcm/p4"
)

// Target is where a switch's P4Runtime server is, and how to reach it.
type Target struct {
	Addr     string `json:"addr"`
	DeviceID uint64 `json:"device_id"`
	// TLS, if set, reaches the switch over TLS (plain text otherwise).
	TLS *tls.Config `json:"-"`
}

// Pipeline is rcm.p4's pipeline as Apply installs it: its P4Info, its
// BMv2 JSON, and the cookie that tells a switch already running it.
func Pipeline() (controlplane.Pipeline, error) {
	info, err := p4.P4Info()
	if err != nil {
		return controlplane.Pipeline{}, err
	}
	// The cookie of the committed files, as controlplane.ReadPipeline
	// makes it from them (and p4switch, started with them): the same
	// from every binary.
	return controlplane.Pipeline{Info: info, DeviceConfig: p4.DeviceConfig(), Cookie: controlplane.Cookie(p4.P4InfoText(), p4.DeviceConfig())}, nil
}

// Pipeline is rcm.p4's pipeline as this fabric installs it: the
// program of Pipeline, under a cookie of its own, made from the
// program's and the fabric's shape (its nodes, links, ports and
// addresses, not the thresholds a scenario sets). A switch running it
// runs this fabric's program: Apply reconciles its entries. One running
// another cookie (another fabric's, or rcm.p4 set by hand) is not this
// fabric's to take unless asked (ApplyOptions.Replace).
func (f *Fabric) Pipeline() (controlplane.Pipeline, error) {
	p, err := Pipeline()
	if err != nil {
		return p, err
	}
	p.Cookie = controlplane.Cookie(p4.P4InfoText(), p.DeviceConfig, f.shape())
	return p, nil
}

// shape is the fabric's nodes, links, port numbers and addresses as
// text, the part of a fabric that says whose a switch is.
func (f *Fabric) shape() []byte {
	var b strings.Builder
	t := f.Topology
	for id, n := range t.Nodes {
		fmt.Fprintf(&b, "node %d %d %s %v %v\n", id, n.Kind, n.Name, f.HostIP[id], f.HostMAC[id])
	}
	adj := t.Adjacency()
	for id := range t.Nodes {
		for i, p := range adj[id] {
			port := uint32(0)
			if i < len(f.Ports[id]) {
				port = f.Ports[id][i]
			}
			fmt.Fprintf(&b, "end %s %d link %d\n", t.Nodes[id].Name, port, p.Link)
		}
	}
	return []byte(b.String())
}

// ApplyOptions say how Apply reaches the switches and what it installs.
type ApplyOptions struct {
	// Pipeline is installed on a switch that runs none (it started or
	// restarted), which empties the switch's tables first; a switch
	// running it (by cookie) keeps it. Fabric.Pipeline is the fabric's.
	Pipeline controlplane.Pipeline
	// Replace installs Pipeline on a switch that runs another pipeline
	// too (another fabric's, or one set by hand), emptying its tables;
	// without it such a switch is refused, left as it was.
	Replace  bool
	Election controlplane.ElectionID
	// DryRun reads the switches and reports what would change.
	DryRun bool
	// Parallel switches are programmed at once (0: 8).
	Parallel int
	// Timeout bounds reaching each switch (0: 10 s).
	Timeout time.Duration
}

// Result is what Apply did to one switch.
type Result struct {
	Name string
	// PipelineSet says the pipeline was installed (or, in a dry run,
	// would be).
	PipelineSet bool
	Applied     controlplane.Applied
	// Changes are the updates of a dry run, one line each.
	Changes []string
	Elapsed time.Duration
	Err     error
}

// Entries is how many entities Apply checked on the switch.
func (r Result) Entries() int { return r.Applied.Inserted + r.Applied.Modified + r.Applied.Unchanged }

// Apply makes every switch hold its intent: the pipeline installed where
// it is missing (a restarted switch) or another, then every entry and
// clone session read back and inserted when missing or modified when it
// differs, in batched writes. A second Apply changes nothing. Entries a
// switch holds beyond its intent are left alone. Results come in the
// intents' order; a switch that fails does not stop the others.
func Apply(ctx context.Context, intents []Intent, targets map[string]Target, o ApplyOptions) []Result {
	if o.Parallel <= 0 {
		o.Parallel = 8
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	out := make([]Result, len(intents))
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	for i, in := range intents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			start := time.Now()
			out[i] = applyOne(ctx, in, targets, o)
			out[i].Name, out[i].Elapsed = in.Name, time.Since(start)
		}()
	}
	wg.Wait()
	return out
}

func applyOne(ctx context.Context, in Intent, targets map[string]Target, o ApplyOptions) Result {
	var r Result
	t, ok := targets[in.Name]
	if !ok {
		r.Err = fmt.Errorf("no address for switch %s", in.Name)
		return r
	}
	dctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	// What does not listen, or does not speak TLS as the controller
	// does, is told at once, for what it is.
	err := controlplane.Reach(dctx, t.Addr)
	var opts []controlplane.Option
	if t.TLS != nil {
		opts = append(opts, controlplane.WithTLS(t.TLS))
		if err == nil {
			err = controlplane.CheckTLS(dctx, t.Addr, t.TLS)
		}
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("%s did not answer within %v: a host that is down, or a firewall that drops?", t.Addr, o.Timeout)
		}
		r.Err = err
		return r
	}
	var s *controlplane.Session
	if o.DryRun {
		// A dry run only reads: it takes no part in arbitration.
		s, err = controlplane.DialReader(dctx, t.Addr, t.DeviceID, opts...)
	} else {
		s, err = controlplane.Dial(dctx, t.Addr, t.DeviceID, o.Election, append(opts, controlplane.WaitWhileHeld())...)
	}
	switch {
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded):
		r.Err = fmt.Errorf("%s takes connections, but no P4Runtime server answered there within %v: is it the switch's P4Runtime port, and %d its device?", t.Addr, o.Timeout, t.DeviceID)
		return r
	case status.Code(err) == codes.InvalidArgument:
		r.Err = fmt.Errorf("election ID %v was another controller's all of %v at %s: give another --election-id", o.Election, o.Timeout, t.Addr)
		return r
	default:
		r.Err = err
		return r
	}
	defer s.Close()
	if !o.DryRun && !s.Primary() {
		holder := "another controller"
		if id, ok := s.PrimaryElection(); ok {
			holder += " (election ID " + id.String() + ")"
		}
		r.Err = fmt.Errorf("%s is primary at %s, above election ID %v, and only the primary writes: wait for it to leave, or give a higher --election-id", holder, t.Addr, o.Election)
		return r
	}
	cookie, running, err := s.RunningCookie(ctx)
	if err != nil {
		r.Err = err
		return r
	}
	if running && cookie != o.Pipeline.Cookie && !o.Replace {
		r.Err = fmt.Errorf("%s runs another pipeline (cookie %#x, this fabric's is %#x): another fabric's, or a program set by hand; --replace installs this fabric's, which empties its tables", t.Addr, cookie, o.Pipeline.Cookie)
		return r
	}
	if !running || cookie != o.Pipeline.Cookie {
		// Installing the pipeline empties the switch: everything is
		// inserted.
		if o.DryRun {
			r.PipelineSet = true
			r.Applied.Inserted = len(in.Entries) + len(in.Clones)
			why := "it runs none"
			if running {
				why = fmt.Sprintf("replacing cookie %#x", cookie)
			}
			r.Changes = []string{fmt.Sprintf("SET PIPELINE cookie %#x (%s), then %d inserts", o.Pipeline.Cookie, why, r.Applied.Inserted)}
			return r
		}
		if err := s.SetPipeline(ctx, o.Pipeline); err != nil {
			r.Err = err
			return r
		}
		r.PipelineSet = true
	} else if err := s.AdoptPipeline(ctx, o.Pipeline.Cookie); err != nil {
		r.Err = err
		return r
	}
	want, err := Entities(s, in)
	if err != nil {
		r.Err = err
		return r
	}
	if o.DryRun {
		updates, plan, err := s.Plan(ctx, want)
		r.Applied, r.Err = plan, err
		for _, u := range updates {
			r.Changes = append(r.Changes, s.Describe(u))
		}
		return r
	}
	r.Applied, r.Err = s.Reconcile(ctx, want)
	return r
}

// Entities are an intent as P4Runtime entities, checked against the
// session's pipeline.
func Entities(s *controlplane.Session, in Intent) ([]*p4v1.Entity, error) {
	want := make([]*p4v1.Entity, 0, len(in.Entries)+len(in.Clones))
	for _, e := range in.Entries {
		ent, err := s.EntryEntity(e)
		if err != nil {
			return nil, fmt.Errorf("switch %s: %w", in.Name, err)
		}
		want = append(want, ent)
	}
	for _, c := range in.Clones {
		want = append(want, controlplane.CloneSessionEntity(c.Session, c.Port))
	}
	return want, nil
}
