package fabric

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"github.com/p4rcm/p4rcm/controlplane"
	"github.com/p4rcm/p4rcm/internal/p4switchbin"
	"github.com/p4rcm/p4rcm/p4"
	"github.com/p4rcm/p4rcm/switchproc"
	"google.golang.org/protobuf/encoding/prototext"
)

// rcmPipeline is the committed rcm.p4 as Apply installs it.
func rcmPipeline(tb testing.TB) controlplane.Pipeline {
	tb.Helper()
	info, err := p4.P4Info()
	if err != nil {
		tb.Fatal(err)
	}
	text, _ := prototext.Marshal(info)
	return controlplane.Pipeline{Info: info, DeviceConfig: p4.DeviceConfig(), Cookie: controlplane.Cookie(text, p4.DeviceConfig())}
}

// startTargets starts a switch per intent, without a pipeline, and
// returns where they listen: a process each, or with group every switch
// in one p4switch process (--group, as an emulated fabric runs them).
func startTargets(tb testing.TB, intents []Intent, group bool) map[string]Target {
	tb.Helper()
	target, bin := p4switchbin.Choose(tb)
	if group && target != switchproc.TargetGo {
		tb.Skipf("skipping: only the Go target runs several switches in one process, not %s", target)
	}
	out := map[string]Target{}
	var cs []switchproc.Config
	for _, in := range intents {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		cs = append(cs, switchproc.Config{Name: in.Name, DeviceID: 1, GRPCAddr: addr, ThriftPort: 1, Target: target, Binary: bin})
		out[in.Name] = Target{Addr: addr, DeviceID: 1}
	}
	if group {
		g, err := switchproc.StartGroup(context.Background(), "fabric", cs)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { g.Stop() })
		return out
	}
	for _, c := range cs {
		sw, err := switchproc.Start(context.Background(), c)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { sw.Stop() })
	}
	return out
}

// writeAll is the baseline: every switch's pipeline set and its entities
// inserted in batched writes, nothing read back; 8 switches at a time,
// as Apply.
func writeAll(tb testing.TB, intents []Intent, targets map[string]Target, pipe controlplane.Pipeline) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, in := range intents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			ctx := context.Background()
			s, err := controlplane.Dial(ctx, targets[in.Name].Addr, 1, controlplane.ElectionID{Low: 1})
			if err != nil {
				tb.Error(err)
				return
			}
			defer s.Close()
			if err := s.SetPipeline(ctx, pipe); err != nil {
				tb.Error(err)
				return
			}
			want, err := Entities(s, in)
			if err != nil {
				tb.Error(err)
				return
			}
			updates := make([]*p4v1.Update, len(want))
			for i, e := range want {
				updates[i] = &p4v1.Update{Type: controlplane.Insert, Entity: e}
			}
			if err := s.Write(ctx, updates...); err != nil {
				tb.Error(err)
			}
		}()
	}
	wg.Wait()
}

// BenchmarkApply programs a k=4 and a k=8 fat tree of Go targets (20 and
// 80 p4switch processes, rcm.p4, scheme rcm) and reports entries per
// second for the first Apply (pipeline set, every entry read back and
// inserted), the second (read back, nothing to write), and the baseline
// that inserts the same entries blind into fresh switches, in the same
// run; k=4-group is the k=4 fat tree with its switches in one process
// (p4switch --group), which decodes rcm.json once for all of them. Run
// it with
//
//	go test -run '^$' -bench Apply -benchtime 1x ./fabric/
func BenchmarkApply(b *testing.B) {
	for _, c := range []struct {
		k     int
		group bool
	}{{4, false}, {4, true}, {8, false}} {
		k, name := c.k, fmt.Sprintf("k=%d", c.k)
		if c.group {
			name += "-group"
		}
		b.Run(name, func(b *testing.B) {
			cfg := config(b, "rcm", k)
			f, err := FromTopology(cfg.Topology)
			if err != nil {
				b.Fatal(err)
			}
			intents, err := f.Plan(cfg)
			if err != nil {
				b.Fatal(err)
			}
			entries := 0
			for _, in := range intents {
				entries += len(in.Entries) + len(in.Clones)
			}
			pipe := rcmPipeline(b)
			var first, second, blind time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				fresh := startTargets(b, intents, c.group)
				targets := startTargets(b, intents, c.group)
				b.StartTimer()
				start := time.Now()
				writeAll(b, intents, fresh, pipe)
				blind += time.Since(start)
				for j, d := range []*time.Duration{&first, &second} {
					start := time.Now()
					for _, r := range Apply(context.Background(), intents, targets, ApplyOptions{Pipeline: pipe, Election: controlplane.ElectionID{Low: 1}}) {
						if r.Err != nil {
							b.Fatal(r.Err)
						}
						if j == 1 && r.Applied.Inserted+r.Applied.Modified > 0 {
							b.Fatalf("second apply changed %s: %v", r.Name, r.Applied)
						}
					}
					*d += time.Since(start)
				}
			}
			n := float64(b.N * entries)
			b.ReportMetric(float64(entries), "entries")
			b.ReportMetric(n/first.Seconds(), "first-entries/s")
			b.ReportMetric(n/second.Seconds(), "second-entries/s")
			b.ReportMetric(n/blind.Seconds(), "blind-entries/s")
			b.ReportMetric(blind.Seconds()/first.Seconds(), "first/blind")
		})
	}
}
