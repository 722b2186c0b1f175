package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/p4rcm/p4rcm/stats"
)

// An area is one table of BENCHMARKS.md.
type area struct {
	Key, Title string
	// About says what the table measures, for its page.
	About string
	Rows  []row
}

// A row is one measurement: what it is, the command that measures it
// (run by sh in the repository's root, the p4ctl of this checkout on the
// PATH), its target, and how its figures come out of a run.
type row struct {
	What, Command, Target string
	Measure               func(e *env, r row) (result, error)
}

// result is a row's measured cells.
type result struct {
	Baseline string `json:"baseline"`
	Figure   string `json:"figure"`
	// Verdict is "met", "not met", or empty where nothing was measured.
	Verdict string `json:"verdict,omitempty"`
}

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "not met"
}

const (
	rigCommand   = "go test -run '^$' -bench Rig -benchtime 1x -timeout 60m ./internal/switchbench/ -args -targets=relay,relay-ring,relay-process,relay-process-ring,go,go-mmsg,go-ring-v3,bmv2 -programs=rcm,l3 -sizes=64 -rounds 3"
	writeOne     = "go test -run '^$' -bench WriteOnePerRequest -benchtime 10000x -count 3 ./p4rt/"
	writeBatched = "go test -run '^$' -bench WriteBatched1000 -benchtime 200000x -count 3 ./p4rt/"
	writeProcs   = "go test -run '^$' -bench WriteBatchedProcesses -benchtime 200000x -count 3 ./p4rt/"
	applyCommand = "go test -run '^$' -bench 'Apply/k=4$' -benchtime 1x -count 3 ./fabric/"
	// probeCommand times the named controller's round alone and under
	// TestHostileProbe's load.
	probeCommand  = "go test -run '^$' -bench HostileProbe -benchtime 1x -count 5 ./p4rt/"
	incastCommand = "go test -run '^$' -bench IncastRate -benchtime 1x ./test/ -args -rates 69M,250M"
	// fatTreeCommand climbs the k=4 fat tree's emulated rate with the
	// switches in one process and with a process each.
	fatTreeCommand = "go test -run '^$' -bench FatTreeRate -benchtime 1x -timeout 30m ./test/ -args -multiples 1,2,3,4,6,8,12"
	// ns3Config is the benchmark's configuration in an ns-3 RDMA
	// simulator's simulation/ directory for a scheme as its run.py names
	// it: the 320-host fat tree and the web-search flow file of
	// sim/scenario/data/.
	ns3Config = "mix/config_fat320_ws30_%s.txt"
)

// ns3Schemes are the schemes of the ns-3 rows: p4rcm's name and the ns-3
// simulator's run.py's.
var ns3Schemes = [][2]string{{"dcqcn", "dcqcn"}, {"hpcc", "hp95"}, {"dctcp", "dctcp"}, {"timely", "timely"}}

// ns3Rows are the ns-3 area's rows, one per scheme.
func ns3Rows() []row {
	var rows []row
	for _, sc := range ns3Schemes {
		ours, theirs := sc[0], sc[1]
		cfg := fmt.Sprintf(ns3Config, theirs)
		rows = append(rows, row{
			What:    "`bench-fat320`, " + ours + ": wall seconds per simulated ms",
			Command: fmt.Sprintf("`p4ctl sim bench -q --json --runs 3 --scheme %[2]s`, `build/scratch/third %[1]s` in NS3/simulation, `p4ctl sim bench -q --json --runs 3 --scheme %[2]s --reference-seconds S` (S: that ns-3 run's wall seconds), %[3]d times in turn", cfg, ours, ns3Pairs),
			Target:  "at least 30x ns-3, per simulated ms and wall to wall (means)",
			Measure: func(e *env, r row) (result, error) { return measureNS3(e, ours, cfg) },
		})
	}
	return rows
}

// threadsCommand times the benchmark at 1 and 2 threads and auto, the
// default's choice.
const threadsCommand = "p4ctl sim bench -q --json --threads-compare 1,2,auto --runs 3"

// threadsLines runs threadsCommand's like, whose three lines are 1, 2 and
// auto.
func threadsLines(e *env, command string) ([]simCompare, error) {
	var lines []simCompare
	if err := e.json(command, &lines); err != nil || len(lines) != 3 {
		return nil, fmt.Errorf("want 1, 2 and auto threads: %v", err)
	}
	return lines, nil
}

// areas are BENCHMARKS.md's tables, in its order.
var areas = []area{
	{
		Key:   "ns3",
		Title: "The simulator against the ns-3 RDMA simulator",
		About: "The input is the ns-3 RDMA simulator's own benchmark (the HPCC paper's simulator): a 320-host fat tree " +
			"(16 hosts at 100 Gb/s per ToR, 400 Gb/s uplinks, 1 us links) and 6,706 web-search flows at 30% load for 10 ms, " +
			"each scheme with that simulator's settings; p4rcm runs it as the `bench-fat320` preset with `--scheme`. " +
			"The speed is wall seconds per simulated millisecond up to the last completion. ns-3 runs three times on the same machine, " +
			"each run between two sets of three of p4rcm's, and the ratio is the mean over the three pairs (ns-3's run, p4rcm's fastest " +
			"around it) with its 95% interval: ns-3's time drifts by 10-20% over a day here, a pair's runs see the same drift, and another " +
			"tenant taking the second core for a minute slows p4rcm's two threads far more than ns-3's one. `make bench NS3=DIR` runs ns-3 from DIR, a build of alibaba-edu/High-Precision-Congestion-Control " +
			"(its optimised profile) whose `simulation/mix/config_fat320_ws30_*.txt` run the benchmark's topology and flow files " +
			"(`ns3/build.sh` builds it so); without it the rows say so.",
		Rows: ns3Rows(),
	},
	{
		Key:   "sim",
		Title: "The simulator's cost",
		About: "What a scheme and a thread change in the simulator's wall time on the same benchmark (`bench-fat320`), the runs of " +
			"the compared settings taking turns so that the machine's drift hits all alike, fastest of three each; and the event " +
			"queue against `container/heap` on the same events.",
		Rows: []row{{
			What:    "RCM's cost over DCQCN",
			Command: "p4ctl sim bench -q --json --compare dcqcn,rcm --runs 3",
			Target:  "at most 1.30x",
			Measure: func(e *env, r row) (result, error) {
				var lines []simCompare
				if err := e.json(r.Command, &lines); err != nil || len(lines) != 2 {
					return result{}, fmt.Errorf("want two schemes: %v", err)
				}
				return result{
					Baseline: fmt.Sprintf("dcqcn %.2f s", lines[0].Bench.WallSeconds),
					Figure:   fmt.Sprintf("rcm %.2f s: **%.2fx**", lines[1].Bench.WallSeconds, lines[1].Cost),
					Verdict:  verdict(lines[1].Cost <= 1.30),
				}, nil
			},
		}, {
			What:    "HPCC's, TIMELY's and DCTCP's cost over DCQCN",
			Command: "p4ctl sim bench -q --json --compare dcqcn,hpcc,timely,dctcp --runs 3",
			Target:  "at most 1.50x each",
			Measure: func(e *env, r row) (result, error) {
				var lines []simCompare
				if err := e.json(r.Command, &lines); err != nil || len(lines) != 4 {
					return result{}, fmt.Errorf("want four schemes: %v", err)
				}
				var figs []string
				worst := 0.0
				for _, l := range lines[1:] {
					figs = append(figs, fmt.Sprintf("%s %.2f s: **%.2fx**", l.Scheme, l.Bench.WallSeconds, l.Cost))
					worst = max(worst, l.Cost)
				}
				return result{
					Baseline: fmt.Sprintf("dcqcn %.2f s", lines[0].Bench.WallSeconds),
					Figure:   strings.Join(figs, ", "),
					Verdict:  verdict(worst <= 1.50),
				}, nil
			},
		}, {
			What:    "Two threads against one",
			Command: threadsCommand,
			Target:  "at least 1.7x on 2 cores",
			Measure: func(e *env, r row) (result, error) {
				lines, err := threadsLines(e, r.Command)
				if err != nil {
					return result{}, err
				}
				return result{
					Baseline: fmt.Sprintf("1 thread %.2f s", lines[0].Bench.WallSeconds),
					Figure:   fmt.Sprintf("2 threads %.2f s: **%.2fx**", lines[1].Bench.WallSeconds, lines[1].Speedup),
					Verdict:  verdict(lines[1].Speedup >= 1.7),
				}, nil
			},
		}, {
			What:    "The default threads (auto: a thread per idle core, one while that is faster)",
			Command: threadsCommand,
			Target:  "at least 0.95x the faster of 1 and 2 threads",
			Measure: func(e *env, r row) (result, error) {
				lines, err := threadsLines(e, r.Command)
				if err != nil {
					return result{}, err
				}
				best := min(lines[0].Bench.WallSeconds, lines[1].Bench.WallSeconds)
				share := best / lines[2].Bench.WallSeconds
				return result{
					Baseline: fmt.Sprintf("the faster of 1 and 2 threads %.2f s", best),
					Figure:   fmt.Sprintf("auto %.2f s (%d part(s)): **%.2fx**", lines[2].Bench.WallSeconds, lines[2].Bench.Threads, share),
					Verdict:  verdict(share >= 0.95),
				}, nil
			},
		}, {
			What:    "An event scheduled and run, 1,024 pending",
			Command: "go test -run '^$' -bench Step -count 3 ./sim/event/",
			Target:  "at least 4x faster than `container/heap`",
			Measure: func(e *env, r row) (result, error) {
				m, err := e.medians(r.Command, "ns/op", "BenchmarkStep/pending=1024", "BenchmarkStepHeapBaseline/pending=1024")
				if err != nil {
					return result{}, err
				}
				cal, heap := m[0], m[1]
				return result{
					Baseline: fmt.Sprintf("`container/heap` %.1f ns", heap),
					Figure:   fmt.Sprintf("calendar queue %.1f ns: **%.1fx** faster", cal, heap/cal),
					Verdict:  verdict(heap/cal >= 4),
				}, nil
			},
		}},
	},
	{
		Key:   "target",
		Title: "The Go P4 target against its ceilings and BMv2",
		About: "64-byte frames through a switch between two network namespaces (`internal/switchbench`), three rounds in which " +
			"every target takes its turn; medians over the rounds, ratios paired round by round. The ceilings: `relay` copies " +
			"frames between the two packet sockets with no pipeline, in the rig's process; `relay-process` does so in a process " +
			"of its own, as every switch runs; both by `recvmmsg` and `sendmmsg`, and `relay-ring` and `relay-process-ring` the " +
			"same on mapped rings. `go` is `p4switch` as it starts by default, its ports on rings where the kernel sets them up " +
			"(docs/target.md), held to the ring relay; `go-mmsg` is `p4switch --port-io mmsg`, held to `relay`; `go-ring-v3` is `--port-io ring-v3`. The rig's own " +
			"sender and receiver are on rings for every target. BMv2 (`simple_switch_grpc`) is measured where it is on the PATH. " +
			"Needs root.",
		Rows: []row{{
			What:    "`rcm.p4`, forwarding rate",
			Command: rigCommand,
			Target:  "at least 60% of `relay-ring`",
			Measure: rigRow("go/rcm/64B / relay-ring", 60, false),
		}, {
			What:    "`l3.p4` (a plain router), forwarding rate",
			Command: rigCommand,
			Target:  "at least 85% of `relay-ring`",
			Measure: rigRow("go/l3/64B / relay-ring", 85, false),
		}, {
			What:    "`rcm.p4`, median latency when idle",
			Command: rigCommand,
			Target:  "at most 1.3x `relay-ring`'s",
			Measure: rigRow("go/rcm/64B / relay-ring", 1.3, true),
		}, {
			What:    "`rcm.p4` on rings, forwarding rate against `--port-io mmsg`",
			Command: rigCommand,
			Target:  "at least 1,000,000 pkt/s on 2 cores",
			Measure: func(e *env, r row) (result, error) {
				out, err := e.run(r.Command)
				if err != nil {
					return result{}, err
				}
				ratio, ok := rigRatios(out)["go/rcm/64B / go-mmsg"]
				if !ok {
					return result{}, fmt.Errorf("no \"go/rcm/64B / go-mmsg\" in the rig's summary")
				}
				rates := rigRates(out)
				return result{
					Baseline: fmt.Sprintf("`go-mmsg` %.0f pkt/s", rates["go-mmsg/rcm/64B"]),
					Figure:   fmt.Sprintf("**%.0f pkt/s**: %.1f%%", rates["go/rcm/64B"], ratio[0]),
					Verdict:  verdict(rates["go/rcm/64B"] >= 1e6),
				}, nil
			},
		}, {
			What:    "`relay-ring`, forwarding rate against `relay`",
			Command: rigCommand,
			Target:  "at least `relay`'s",
			Measure: rigRow("relay-ring/64B / relay", 100, false),
		}, {
			What:    "`rcm.p4` on `recvmmsg`/`sendmmsg` (`go-mmsg`), forwarding rate",
			Command: rigCommand,
			Target:  "at least 60% of `relay`",
			Measure: rigRow("go-mmsg/rcm/64B / relay", 60, false),
		}, {
			What:    "`rcm.p4`, forwarding rate against BMv2",
			Command: rigCommand,
			Target:  "at least 20x BMv2",
			Measure: func(e *env, r row) (result, error) {
				out, err := e.run(r.Command)
				if err != nil {
					return result{}, err
				}
				rates := rigRates(out)
				goRate := rates["go/rcm/64B"]
				bmv2 := rates["bmv2/rcm/64B"]
				if goRate == 0 {
					return result{}, fmt.Errorf("no median rate of go/rcm/64B in the output")
				}
				if bmv2 == 0 {
					return result{Baseline: "BMv2 not installed here", Figure: fmt.Sprintf("%.0f pkt/s", goRate)}, nil
				}
				return result{
					Baseline: fmt.Sprintf("BMv2 %.0f pkt/s", bmv2),
					Figure:   fmt.Sprintf("%.0f pkt/s: **%.1fx**", goRate, goRate/bmv2),
					Verdict:  verdict(goRate/bmv2 >= 20),
				}, nil
			},
		}},
	},
	{
		Key:   "p4runtime",
		Title: "P4Runtime against a server that does nothing",
		About: "Writes of `p4/testdata/runtime.p4`'s 16,384-entry table over gRPC on loopback, medians of three runs: the Go " +
			"target's P4Runtime server in the benchmark's process against a server there whose Write does nothing (`null`: " +
			"what gRPC and protobuf cost alone); and as a user meets them, the `p4switch` process against a null server " +
			"in a process of its own, the same client sending both the same batches in rounds that take turns (medians " +
			"over the rounds, the share paired round by round), with each server process's CPU per entry. And " +
			"`fabric apply` programming a k=4 fat tree of 20 `p4switch` processes (688 entities) against inserting the " +
			"same entities blind, without reading anything first. Last, the controller a `p4switch` process's mutual-TLS " +
			"policy names connecting afresh, arbitrating and writing an entry while a hostile local user with another " +
			"certificate holds 100 silent sockets and 40 follower streams and pushes four 200 MiB pipelines " +
			"(`TestHostileProbe`'s load), against the median of three such rounds alone just before; five runs, medians.",
		Rows: []row{{
			What:    "One update per request, latency",
			Command: writeOne,
			Target:  "at most 1.5x `null`'s",
			Measure: func(e *env, r row) (result, error) {
				m, err := e.medians(r.Command, "ns/op", "BenchmarkWriteOnePerRequest/go-inprocess", "BenchmarkWriteOnePerRequest/null")
				if err != nil {
					return result{}, err
				}
				own, null := m[0], m[1]
				return result{
					Baseline: fmt.Sprintf("`null` %.1f us", null/1e3),
					Figure:   fmt.Sprintf("%.1f us: **%.2fx**", own/1e3, own/null),
					Verdict:  verdict(own/null <= 1.5),
				}, nil
			},
		}, {
			What:    "1,000 updates per request, rate",
			Command: writeBatched,
			Target:  "at least 70% of `null`'s",
			Measure: func(e *env, r row) (result, error) {
				m, err := e.medians(r.Command, "entries/s", "BenchmarkWriteBatched1000/go-inprocess", "BenchmarkWriteBatched1000/null")
				if err != nil {
					return result{}, err
				}
				own, null := m[0], m[1]
				return result{
					Baseline: fmt.Sprintf("`null` %.0f entries/s", null),
					Figure:   fmt.Sprintf("%.0f entries/s: **%.1f%%**", own, 100*own/null),
					Verdict:  verdict(own/null >= 0.70),
				}, nil
			},
		}, {
			What:    "1,000 updates per request, `p4switch` process against a null server process",
			Command: writeProcs,
			Target:  "at least 70% of the null process's",
			Measure: func(e *env, r row) (result, error) {
				const name = "BenchmarkWriteBatchedProcesses"
				g, err := e.goBench(r.Command)
				if err != nil {
					return result{}, err
				}
				var v [5]float64
				for i, unit := range []string{"go-entries/s", "null-entries/s", "%-of-null", "go-server-cpu-us/entry", "null-server-cpu-us/entry"} {
					if v[i], err = g.median(name, unit); err != nil {
						return result{}, err
					}
				}
				own, null, share, ownCPU, nullCPU := v[0], v[1], v[2], v[3], v[4]
				return result{
					Baseline: fmt.Sprintf("null server process %.0f entries/s, %.2f us of its CPU per entry", null, nullCPU),
					Figure:   fmt.Sprintf("%.0f entries/s, %.2f us of its CPU per entry: **%.1f%%**", own, ownCPU, share),
					Verdict:  verdict(share >= 70),
				}, nil
			},
		}, {
			What:    "`fabric apply`, first apply of a k=4 fat tree",
			Command: applyCommand,
			Target:  "under 0.8 s",
			Measure: func(e *env, r row) (result, error) {
				g, err := e.goBench(r.Command)
				if err != nil {
					return result{}, err
				}
				n, err := g.median("BenchmarkApply/k=4", "entries")
				if err != nil {
					return result{}, err
				}
				first, err := g.median("BenchmarkApply/k=4", "first-entries/s")
				if err != nil {
					return result{}, err
				}
				blind, err := g.median("BenchmarkApply/k=4", "blind-entries/s")
				if err != nil {
					return result{}, err
				}
				return result{
					Baseline: fmt.Sprintf("blind inserts %.3f s", n/blind),
					Figure:   fmt.Sprintf("**%.3f s**", n/first),
					Verdict:  verdict(n/first < 0.8),
				}, nil
			},
		}, {
			What:    "The named controller under a hostile probe: connect, arbitrate, write",
			Command: probeCommand,
			Target:  "at most 5x its time alone",
			Measure: func(e *env, r row) (result, error) {
				g, err := e.goBench(r.Command)
				if err != nil {
					return result{}, err
				}
				var v [3]float64
				for i, unit := range []string{"alone-ms", "probed-ms", "x-alone"} {
					if v[i], err = g.median("BenchmarkHostileProbe", unit); err != nil {
						return result{}, err
					}
				}
				return result{
					Baseline: fmt.Sprintf("alone %.1f ms", v[0]),
					Figure:   fmt.Sprintf("under the probe %.1f ms: **%.1fx**", v[1], v[2]),
					Verdict:  verdict(v[2] <= 5),
				}, nil
			},
		}},
	},
	{
		Key:   "emulation",
		Title: "Emulation",
		About: "How fast one machine emulates: `p4ctl emulate`'s harness running a 4:1 incast (five hosts in namespaces, " +
			"one Go target running `rcm.p4`, PFC alone, each sender at its line rate, about a second of traffic) at the " +
			"emulated host link rate `p4ctl emulate` uses by default (69 Mb/s) and at 250 Mb/s, near the most it accepts (four times the default). The figure is the share " +
			"of the receiver's link rate delivered between the first start and the last completion. " +
			"Then the default preset on a k=4 fat tree (20 switches, 16 hosts), its rate climbed from the default (6.93 Mb/s) " +
			"through multiples of it, three runs at each, up to the last at which no sender fell behind its schedule and the mean FCT " +
			"stayed within 10% of the model's: with the switches in one process (`--processes shared`, the default) against " +
			"a process each. Needs root.",
		Rows: []row{{
			What:    "4:1 incast at 69 Mb/s, receiver's link busy",
			Command: incastCommand,
			Target:  "at least 95%",
			Measure: incastRow("69M"),
		}, {
			What:    "4:1 incast at 250 Mb/s, receiver's link busy",
			Command: incastCommand,
			Target:  "at least 95%",
			Measure: incastRow("250M"),
		}, {
			What:    "k=4 fat tree, highest emulated rate kept, one switch process against a process each",
			Command: fatTreeCommand,
			Target:  "at least twice a process each's",
			Measure: fatTreeRow,
		}},
	},
	{
		Key:   "studies",
		Title: "Studies",
		About: "A parameter study's own work past its runs (per-run metrics, intervals and paired tests at every point, " +
			"plots, CSV, JSON and HTML), which `p4ctl experiment` times itself, against the study's wall time in the same " +
			"command: 4 loads x 5 seeds x 3 schemes on the default preset.",
		Rows: []row{{
			What:    "A study's statistics, plots and files",
			Command: "p4ctl experiment --vary workload.load=0.3,0.5,0.7,0.9 --seeds 5 -q -o $TMPDIR/study",
			Target:  "at most 5% of the study's wall time",
			Measure: func(e *env, r row) (result, error) {
				out, err := e.run(r.Command)
				if err != nil {
					return result{}, err
				}
				m := studyCost.FindStringSubmatch(out)
				if m == nil {
					return result{}, fmt.Errorf("no wall time line in the output")
				}
				var share float64
				fmt.Sscan(m[4], &share)
				return result{
					Baseline: fmt.Sprintf("the study, %s runs: %s s", m[2], m[1]),
					Figure:   fmt.Sprintf("%s s: **%s%%**", m[3], m[4]),
					Verdict:  verdict(share <= 5),
				}, nil
			},
		}},
	},
}

// rigRow reads the rig's ratio of pair ("switch / ceiling"): its rate
// median in percent (at least bound), or with latency its idle latency
// median (at most bound).
func rigRow(pair string, bound float64, latency bool) func(e *env, r row) (result, error) {
	return func(e *env, r row) (result, error) {
		out, err := e.run(r.Command)
		if err != nil {
			return result{}, err
		}
		ratio, ok := rigRatios(out)[pair]
		if !ok {
			return result{}, fmt.Errorf("no %q in the rig's summary", pair)
		}
		rates := rigRates(out)
		sw, ceiling := rigTargets(pair)
		name, _, _ := strings.Cut(ceiling, "/")
		if latency {
			return result{Baseline: fmt.Sprintf("`%s`", name), Figure: fmt.Sprintf("**%.2fx**", ratio[1]), Verdict: verdict(ratio[1] <= bound)}, nil
		}
		return result{
			Baseline: fmt.Sprintf("`%s` %.0f pkt/s", name, rates[ceiling]),
			Figure:   fmt.Sprintf("%.0f pkt/s: **%.1f%%**", rates[sw], ratio[0]),
			Verdict:  verdict(ratio[0] >= bound),
		}, nil
	}
}

// rigTargets splits "go/rcm/64B / relay" into the switch's and the
// ceiling's names in the rig's table of medians.
func rigTargets(pair string) (string, string) {
	var sw, ceiling string
	fmt.Sscanf(pair, "%s / %s", &sw, &ceiling)
	size := filepath.Base(sw)
	return sw, ceiling + "/" + size
}

// incastRow reads BenchmarkIncastRate's link-busy share at rate.
func incastRow(rate string) func(e *env, r row) (result, error) {
	return func(e *env, r row) (result, error) {
		g, err := e.goBench(r.Command)
		if err != nil {
			return result{}, err
		}
		busy, err := g.median("BenchmarkIncastRate/"+rate, "link-busy")
		if err != nil {
			return result{}, err
		}
		sw, _ := g.median("BenchmarkIncastRate/"+rate, "switch-cores")
		return result{
			Baseline: fmt.Sprintf("the link's rate, %s Mb/s", strings.TrimSuffix(rate, "M")),
			Figure:   fmt.Sprintf("**%.1f%%** (the switch on %.2f cores)", 100*busy, sw),
			Verdict:  verdict(busy >= 0.95),
		}, nil
	}
}

// fatTreeRow reads BenchmarkFatTreeRate's highest kept rates.
func fatTreeRow(e *env, r row) (result, error) {
	g, err := e.goBench(r.Command)
	if err != nil {
		return result{}, err
	}
	var kept, mbps, off [2]float64
	for i, mode := range []string{"each", "shared"} {
		name := "BenchmarkFatTreeRate/" + mode
		if kept[i], err = g.median(name, "kept-multiple"); err != nil {
			return result{}, err
		}
		mbps[i], _ = g.median(name, "kept-Mbps")
		off[i], _ = g.median(name, "fct-vs-model-%")
	}
	if kept[0] == 0 {
		return result{}, fmt.Errorf("%s: a process each kept no rate, not even the default", r.Command)
	}
	return result{
		Baseline: fmt.Sprintf("a process each: %.3g Mb/s (%gx the default), FCT %+.1f%% off the model", mbps[0], kept[0], off[0]),
		Figure:   fmt.Sprintf("one process: %.3g Mb/s (%gx), FCT %+.1f%%: **%.1fx**", mbps[1], kept[1], off[1], kept[1]/kept[0]),
		Verdict:  verdict(kept[1] >= 2*kept[0]),
	}, nil
}

// ns3Pairs is how many times measureNS3 runs ns-3, each run with p4rcm's
// on either side of it: the ratio's interval is over these pairs. ns-3
// runs for minutes and its time drifts by 10-20% over a day on these
// machines, so one pair says little; a pair's runs are close in time, so
// the drift hits both alike.
const ns3Pairs = 3

// measureNS3 runs the ns-3 simulator on the benchmark with one scheme's
// configuration cfg, where it is built, between two sets of p4rcm's runs
// of the same scheme, ns3Pairs times, and gives the mean speed ratio with
// its 95% interval. The target is met when the means of both ratios,
// per simulated ms and wall to wall, reach it.
func measureNS3(e *env, scheme, cfg string) (result, error) {
	if e.ns3 == "" {
		return result{Baseline: "ns-3 not built here", Figure: "`make bench NS3=DIR` fills it"}, nil
	}
	dir := filepath.Join(e.ns3, "simulation")
	bin := filepath.Join(dir, "build", "scratch", "third")
	for _, f := range []string{bin, filepath.Join(dir, cfg)} {
		if _, err := os.Stat(f); err != nil {
			return result{}, fmt.Errorf("NS3=%s: %w", e.ns3, err)
		}
	}
	var theirs, ours, ratios, walls []float64
	var perMs [2]float64 // ns-3's and p4rcm's seconds per simulated ms, summed
	for i := 0; i < ns3Pairs; i++ {
		var before simBench
		if err := e.jsonAgain(fmt.Sprintf("p4ctl sim bench -q --json --runs 3 --scheme %s", scheme), &before); err != nil {
			return result{}, err
		}
		cmd := exec.Command(bin, cfg)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+filepath.Join(dir, "build"))
		e.logf("ns-3 (%d of %d): %s %s in %s", i+1, ns3Pairs, bin, cfg, dir)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			return result{}, fmt.Errorf("ns-3: %v\n%s", err, lastLines(string(out), 10))
		}
		wall := time.Since(start).Seconds()
		var b simBench
		if err := e.jsonAgain(fmt.Sprintf("p4ctl sim bench -q --json --runs 3 --scheme %s --reference-seconds %.1f", scheme, wall), &b); err != nil {
			return result{}, err
		}
		// p4rcm's time is the fastest of its runs on either side of
		// ns-3's: another tenant taking this machine's second core for a
		// minute or two slows p4rcm's two threads by up to half and ns-3's
		// one hardly at all, and what the pair measures is the two
		// programs.
		fastest := min(before.WallSeconds, b.WallSeconds)
		ms := b.SecondsPerSimMs * fastest / b.WallSeconds
		ratio := b.SpeedupVsRef * b.WallSeconds / fastest
		theirs, ours, ratios = append(theirs, wall), append(ours, fastest), append(ratios, ratio)
		walls = append(walls, wall/fastest)
		perMs[0] += ratio * ms
		perMs[1] += ms
	}
	// The two simulators' last flows complete at different times (under
	// DCQCN p4rcm's 3 ms later), so the time to the whole answer (wall to
	// wall) and the speed per simulated ms differ; the row gives both.
	iv, w := stats.MeanInterval(ratios, 0.95), stats.MeanInterval(walls, 0.95)
	return result{
		Baseline: fmt.Sprintf("ns-3 %s s wall, %.2f s per simulated ms (mean)", seconds(theirs, 1), perMs[0]/ns3Pairs),
		Figure: fmt.Sprintf("p4rcm %s s wall (fastest of 6 around each), %.3f s per simulated ms: **%.1fx** (95%% interval %.1f-%.1fx over %d pairs); wall to wall %.1fx (%.1f-%.1fx)",
			seconds(ours, 2), perMs[1]/ns3Pairs, iv.Mean, iv.Lo, iv.Hi, ns3Pairs, w.Mean, w.Lo, w.Hi),
		Verdict: verdict(iv.Mean >= 30 && w.Mean >= 30),
	}, nil
}

// seconds lists times with digits decimals: "259.5, 251.0, 262.3".
func seconds(xs []float64, digits int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.FormatFloat(x, 'f', digits, 64)
	}
	return strings.Join(s, ", ")
}
