//go:build linux

package switchbench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/afpacket"
	"github.com/p4rcm/p4rcm/internal/labtest"
	"github.com/p4rcm/p4rcm/internal/race"
	"github.com/p4rcm/p4rcm/netlab"
	"github.com/p4rcm/p4rcm/switchproc"
)

var (
	targets  = flag.String("targets", "veth,relay,relay-ring,relay-process,relay-process-ring,go,go-mmsg,bmv2", "targets of BenchmarkRig: veth (no switch), relay (packet sockets by recvmmsg and sendmmsg, no pipeline, in the rig's process), relay-process (the same, a process of its own), relay-ring and relay-process-ring (the same on mapped rings), go (p4switch, its ports as by default), go-IO (p4switch --port-io IO: go-mmsg, go-ring, go-ring-v3), bmv2 (skipped where it is not installed)")
	goArgs   = flag.String("p4switch-args", "", "more flags for p4switch in BenchmarkRig, space-separated (--busy-poll)")
	programs = flag.String("programs", "rcm,l3", "programs of BenchmarkRig: rcm (p4/rcm.p4) and l3 (p4/testdata/l3.p4, a plain router)")
	sizes    = flag.String("sizes", "64,1500", "frame sizes of BenchmarkRig, bytes, comma-separated")
	rounds   = flag.Int("rounds", 1, "rounds of BenchmarkRig: every target once a round, in turn; with 2 or more, the medians and ratios over the rounds are printed at the end")
)

// program is a P4 program the rig loads and the entries it installs.
type program struct{ json, entries string }

var rigPrograms = map[string]program{
	"rcm": {"../../p4/build/rcm.json", RCMEntries},
	"l3":  {"../../p4/testdata/build/l3.json", L3Entries},
}

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

// rigRounds collects BenchmarkRig's results; with -rounds (or -count) 2
// or more, TestMain prints their summary after the last round.
var rigRounds Rounds

// TestMain is also the relay process of the "relay-process" target.
func TestMain(m *testing.M) {
	if RelayMain() {
		return
	}
	code := m.Run()
	if rigRounds.Repeated() {
		fmt.Print(rigRounds.Summary())
	}
	os.Exit(code)
}

// BenchmarkRig is the benchmark: packets per second under 0.1%
// loss through one switch between two namespaces, CPU per packet and
// idle latency, for each target and frame size. Run it with
//
//	go test -run '^$' -bench Rig -benchtime 1x ./internal/switchbench/
//
// and with -args -rounds N to run every target once a round, in turn, N
// rounds, and get at the end the medians and each switch's ratios to the
// relays of the same rounds (Rounds.Summary). (-count N runs each target
// N times in a row instead, minutes apart from the relay's runs.)
func BenchmarkRig(b *testing.B) {
	if err := netlab.Available(); err != nil {
		b.Skip(err)
	}
	if *rounds < 1 {
		b.Fatalf("-rounds %d: want 1 or more", *rounds)
	}
	bin := buildP4Switch(b)
	for range *rounds {
		rigRound(b, bin)
	}
}

// rigRound measures every target, program and size once.
func rigRound(b *testing.B, bin string) {
	for _, target := range strings.Split(*targets, ",") {
		if target == "bmv2" {
			if _, err := switchproc.Lookup(switchproc.SwitchBinary); err != nil {
				b.Logf("bmv2: %v", err)
				continue
			}
		}
		names := strings.Split(*programs, ",")
		for _, name := range names {
			prog, ok := rigPrograms[name]
			if !ok {
				b.Fatalf("-programs: unknown program %q: want rcm or l3", name)
			}
			noProgram := target == "veth" || strings.HasPrefix(target, "relay")
			if noProgram && name != names[0] {
				// No program: measured once, whichever programs the
				// round runs (with -programs=l3 alone, as with rcm).
				continue
			}
			for _, f := range strings.Split(*sizes, ",") {
				size, err := strconv.Atoi(f)
				if err != nil {
					b.Fatalf("-sizes: %q: %v", f, err)
				}
				sub := fmt.Sprintf("%s/%s/%dB", target, name, size)
				if noProgram {
					sub = fmt.Sprintf("%s/%dB", target, size)
				}
				b.Run(sub, func(b *testing.B) {
					for b.Loop() {
						rs, err := Run(context.Background(), Options{Targets: []string{target}, Sizes: []int{size},
							Trial: time.Second, P4Switch: bin, P4SwitchArgs: strings.Fields(*goArgs),
							JSON: prog.json, Entries: prog.entries, Log: func(s string) { b.Log(s) }})
						if err != nil {
							b.Fatal(err)
						}
						r := rs[0]
						rigRounds.Add(sub, r)
						b.ReportMetric(r.PPS, "pkt/s")
						b.ReportMetric(float64(r.CPUPerPacket.Nanoseconds()), "cpu-ns/pkt")
						b.ReportMetric(float64(r.P50.Microseconds()), "p50-us")
						b.ReportMetric(float64(r.P99.Microseconds()), "p99-us")
						if !noProgram {
							// What a 4:1 incast at the emulation's default
							// queue rate offers the switch, as a share of
							// what it forwards: at most 0.5 with rcm.p4.
							b.ReportMetric(4*switchproc.Target(target).DefaultQueueRate()/r.PPS, "incast-load")
						}
					}
				})
			}
		}
	}
}

// TestRigForwards runs the rig briefly on the Go target with each
// program and each port IO and on the relays: each must forward the
// lowest rate (with under 2% loss: CI machines are busy; the benchmark
// holds the target to 0.1%) and measure a latency.
func TestRigForwards(t *testing.T) {
	labtest.Require(t)
	if race.Enabled {
		t.Skip("a test of rates: runs in make test's pass without -race")
	}
	bin := buildP4Switch(t)
	for _, c := range []struct{ target, program string }{{"go", "rcm"}, {"go", "l3"}, {"go-mmsg", "rcm"}, {"go-ring-v3", "rcm"},
		{"relay", ""}, {"relay-process", ""}, {"relay-ring", ""}, {"relay-process-ring", ""}} {
		t.Run(strings.Trim(c.target+"/"+c.program, "/"), func(t *testing.T) {
			prog := rigPrograms[c.program]
			o := Options{P4Switch: bin, JSON: prog.json, Entries: prog.entries}
			r, err := newRig(context.Background(), o, c.target)
			if err != nil {
				t.Fatal(err)
			}
			defer r.close()
			o.Trial = 300 * time.Millisecond
			got, loss, cpu, err := r.offer(context.Background(), o, 64, 10_000)
			if err != nil {
				t.Fatal(err)
			}
			// Loss, not the rate received: on a busy machine the sender
			// itself may fall behind its schedule.
			if loss > 0.02 || got == 0 {
				r.stop()
				t.Errorf("at 10,000/s: received %.0f/s, loss %.2f%%; switch output: %s", got, 100*loss, strings.Join(r.output, "; "))
			}
			p50, p99, err := r.latency(context.Background(), 64)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("10,000/s: received %.0f/s, %v CPU per packet; latency p50 %v p99 %v", got, cpu, p50, p99)
		})
	}
}

// TestRelayIO: the "-ring" relays are on rings, the others on recvmmsg and
// sendmmsg, whatever afpacket opens by default.
func TestRelayIO(t *testing.T) {
	for target, want := range map[string]afpacket.IO{"relay": afpacket.Mmsg, "relay-process": afpacket.Mmsg,
		"relay-ring": afpacket.Ring, "relay-process-ring": afpacket.Ring} {
		if got := relayIO(target); got != want {
			t.Errorf("%s: %v, want %v", target, got, want)
		}
	}
}
