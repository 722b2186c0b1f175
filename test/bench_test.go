//go:build linux

package test

import (
	"context"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/buffercalc"
	"github.com/p4rcm/p4rcm/emulate"
	"github.com/p4rcm/p4rcm/internal/p4switchbin"
	"github.com/p4rcm/p4rcm/netlab"
	"github.com/p4rcm/p4rcm/roce"
	"github.com/p4rcm/p4rcm/sim"
	"github.com/p4rcm/p4rcm/switchproc"
)

var benchRates = flag.String("rates", "25M,50M,100M,200M", "emulated host link rates of BenchmarkIncastRate")

// BenchmarkIncastRate is how fast this machine emulates: a 4:1 incast
// (PFC alone, each sender at its line rate, about a second of traffic) at
// each emulated host link rate, reporting how busy the receiver's link
// was (the share of its rate delivered: 1 when the agents pace and the
// switch forwards at the rate asked, below 0.95 when they fall behind)
// and the cores the switch and the agents used. Run it with
//
//	go test -run '^$' -bench IncastRate -benchtime 1x ./test/
func BenchmarkIncastRate(b *testing.B) {
	if err := netlab.Available(); err != nil {
		b.Skip(err)
	}
	target, bin := p4switchbin.Choose(b)
	for _, r := range strings.Split(*benchRates, ",") {
		rate, err := buffercalc.ParseRate(r)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(r, func(b *testing.B) {
			// A second of the receiver's link at rate, in four flows.
			size := int64(rate / 8 / 4 / 1000 * 1000)
			cfg := scenarioOf(b, fmt.Sprintf(`
name: incast-rate
topology: {kind: star, hosts: 5, host_rate: 100G, delay: 1us}
workload: {kind: incast, senders: [0, 1, 2, 3], receiver: 4, size: %d}
scheme: pfc
switch: {buffer: 1MB, pfc_xoff: 40KB}
`, size))
			for b.Loop() {
				out, err := emulate.Run(context.Background(), cfg, emulate.Options{Target: target, Binary: bin, Rate: rate})
				if err != nil {
					b.Fatal(err)
				}
				res := out.Results
				if res.Completed != 4 {
					b.Fatalf("%d of 4 flows completed", res.Completed)
				}
				var first, last, wire int64 = res.Flows[0].Start, 0, 0
				for _, f := range res.Flows {
					first, last = min(first, f.Start), max(last, f.Finish)
					packets := (f.Size + 999) / 1000
					wire += f.Size + packets*(roce.Overhead+4+20)
				}
				// In the scenario's terms: the 100 Gb/s link's busy share.
				busy := float64(wire) * 8 / (100e9 * float64(last-first) / 1e12)
				secs := out.Wall.Seconds()
				var sw time.Duration
				for _, c := range out.SwitchCPU {
					sw += c
				}
				b.ReportMetric(busy, "link-busy")
				b.ReportMetric(sw.Seconds()/secs, "switch-cores")
				b.ReportMetric(out.AgentsCPU.Seconds()/secs, "agents-cores")
				b.ReportMetric(secs, "traffic-s")
			}
		})
	}
}

var (
	fatTreeMultiples = flag.String("multiples", "1,2,4,6,8", "BenchmarkFatTreeRate's rates, as multiples of the default emulated rate, climbed in order")
	fatTreeRuns      = flag.Int("fat-tree-runs", 3, "BenchmarkFatTreeRate's runs at each rate")
)

// fatTreeAgreement is how far, percent, BenchmarkFatTreeRate lets the
// emulation's mean FCT stray from the model's at a rate it keeps.
const fatTreeAgreement = 10

// BenchmarkFatTreeRate is how fast this machine emulates a fabric with
// its switches in one process and with a process each: the default
// preset on a k=4 fat tree (20 switches, 16 hosts in groups of 4, 1 ms of
// web-search flows), climbing from the default emulated rate through
// -multiples of it, three runs at each, up to the last rate at which no
// run fell behind its schedule (emulate.Outcome.FellBehind) and the mean
// FCT of the flows both the emulation and the model completed stayed
// within fatTreeAgreement of the model's. It reports that multiple and
// rate, and there the FCT's departure from the model (percent). Run it
// with
//
//	go test -run '^$' -bench FatTreeRate -benchtime 1x -timeout 30m ./test/
func BenchmarkFatTreeRate(b *testing.B) {
	if err := netlab.Available(); err != nil {
		b.Skip(err)
	}
	target, bin := p4switchbin.Choose(b)
	if target != switchproc.TargetGo {
		b.Skip("only the Go target runs its switches in one process")
	}
	cfg := presetOf(b, "default", "topology.k=4", "workload.group_size=4", "stop=1ms")
	model, err := sim.Run(cfg)
	if err != nil {
		b.Fatal(err)
	}
	var multiples []float64
	for _, m := range strings.Split(*fatTreeMultiples, ",") {
		x, err := strconv.ParseFloat(m, 64)
		if err != nil {
			b.Fatalf("-multiples: %v", err)
		}
		multiples = append(multiples, x)
	}
	base := emulate.RateFor(target, &cfg)
	for _, mode := range []emulate.Processes{emulate.ProcessEach, emulate.ProcessShared} {
		b.Run(string(mode), func(b *testing.B) {
			for b.Loop() {
				kept, departure := 0.0, 0.0
				for _, m := range multiples {
					var emulated, modelled float64
					ok := true
					for range *fatTreeRuns {
						out, err := emulate.Run(context.Background(), cfg, emulate.Options{Target: target, Binary: bin, Rate: m * base, Processes: mode})
						if err != nil {
							b.Fatal(err)
						}
						if why, fell := out.FellBehind(); fell {
							b.Logf("%s at %.3g Mb/s (x%g): %s", mode, m*base/1e6, m, why)
							ok = false
							break
						}
						for i, f := range out.Results.Flows {
							if f.Finish > 0 && model.Flows[i].Finish > 0 {
								emulated += float64(f.FCT)
								modelled += float64(model.Flows[i].FCT)
							}
						}
					}
					d := 100 * (emulated/modelled - 1)
					if ok && math.Abs(d) > fatTreeAgreement {
						b.Logf("%s at %.3g Mb/s (x%g): mean FCT %+.1f%% off the model's", mode, m*base/1e6, m, d)
						ok = false
					}
					if !ok {
						break
					}
					kept, departure = m, d
				}
				b.ReportMetric(kept, "kept-multiple")
				b.ReportMetric(kept*base/1e6, "kept-Mbps")
				b.ReportMetric(departure, "fct-vs-model-%")
			}
		})
	}
}
