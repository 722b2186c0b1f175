//go:build linux

package test

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/buffercalc"
	"github.com/p4rcm/p4rcm/emulate"
	"github.com/p4rcm/p4rcm/internal/p4switchbin"
	"github.com/p4rcm/p4rcm/netlab"
	"github.com/p4rcm/p4rcm/roce"
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
