//go:build linux

package switchbench

import (
	"context"
	"flag"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/bmv2"
	"github.com/p4rcm/p4rcm/internal/race"
	"github.com/p4rcm/p4rcm/netlab"
)

var (
	targets = flag.String("targets", "veth,go,bmv2", "targets of BenchmarkRig (bmv2 is skipped where it is not installed)")
	goArgs  = flag.String("p4switch-args", "", "more flags for p4switch in BenchmarkRig, space-separated (--busy-poll)")
)

// buildP4Switch compiles cmd/p4switch into a temporary directory.
func buildP4Switch(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "p4switch")
	out, err := exec.Command("go", "build", "-o", bin, "../../cmd/p4switch").CombinedOutput()
	if err != nil {
		tb.Fatalf("go build p4switch: %v: %s", err, out)
	}
	return bin
}

// BenchmarkRig is the benchmark: packets per second under 0.1%
// loss through one switch between two namespaces, CPU per packet and
// idle latency, for each target and frame size. Run it with
//
//	go test -run '^$' -bench Rig -benchtime 1x ./internal/switchbench/
func BenchmarkRig(b *testing.B) {
	if err := netlab.Available(); err != nil {
		b.Skip(err)
	}
	bin := buildP4Switch(b)
	for _, target := range strings.Split(*targets, ",") {
		if target == "bmv2" {
			if _, err := bmv2.Lookup(bmv2.SwitchBinary); err != nil {
				b.Logf("bmv2: %v", err)
				continue
			}
		}
		for _, size := range []int{64, 1500} {
			b.Run(target+"/"+map[int]string{64: "64B", 1500: "1500B"}[size], func(b *testing.B) {
				for b.Loop() {
					rs, err := Run(context.Background(), Options{Targets: []string{target}, Sizes: []int{size},
						Trial: time.Second, P4Switch: bin, P4SwitchArgs: strings.Fields(*goArgs), JSON: "../../p4/build/rcm.json",
						Log: func(s string) { b.Log(s) }})
					if err != nil {
						b.Fatal(err)
					}
					r := rs[0]
					b.ReportMetric(r.PPS, "pkt/s")
					b.ReportMetric(float64(r.CPUPerPacket.Nanoseconds()), "cpu-ns/pkt")
					b.ReportMetric(float64(r.P50.Microseconds()), "p50-us")
					b.ReportMetric(float64(r.P99.Microseconds()), "p99-us")
				}
			})
		}
	}
}

// TestRigForwards runs the rig briefly on the Go target: it must forward
// the lowest rate (with under 2% loss: CI machines are busy; the
// benchmark holds the target to 0.1%) and measure a latency.
func TestRigForwards(t *testing.T) {
	if err := netlab.Available(); err != nil {
		t.Skip(err)
	}
	if race.Enabled {
		t.Skip("a test of rates: runs in make test's pass without -race")
	}
	bin := buildP4Switch(t)
	r, err := newRig(context.Background(), Options{P4Switch: bin, JSON: "../../p4/build/rcm.json"}, "go")
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	got, loss, cpu, err := r.offer(context.Background(), Options{Trial: 300 * time.Millisecond}, 64, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	// Loss, not the rate received: on a busy machine the sender itself
	// may fall behind its schedule.
	if loss > 0.02 || got == 0 {
		r.stop()
		t.Errorf("at 10,000/s: received %.0f/s, loss %.2f%%; p4switch: %s", got, 100*loss, strings.Join(r.output, "; "))
	}
	p50, p99, err := r.latency(context.Background(), 64)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("10,000/s: received %.0f/s, %v CPU per packet; latency p50 %v p99 %v", got, cpu, p50, p99)
}
