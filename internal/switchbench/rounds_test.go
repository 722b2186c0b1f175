package switchbench

import (
	"strings"
	"testing"
	"time"
)

// TestRoundsSummary: medians over rounds, and each switch's ratios to the
// relay paired round by round, rounds the relay lacks left out; the
// ring relay against the relay, and the Go target on rings against
// itself on recvmmsg and sendmmsg.
func TestRoundsSummary(t *testing.T) {
	var rs Rounds
	us := time.Microsecond
	for _, r := range []struct {
		name string
		pps  float64
		p50  time.Duration
	}{
		{"relay/64B", 100, 50 * us}, {"go/rcm/64B", 60, 50 * us},
		{"relay/64B", 200, 40 * us}, {"go/rcm/64B", 100, 80 * us},
		{"relay/64B", 300, 100 * us}, {"go/rcm/64B", 180, 100 * us},
		{"go/rcm/64B", 999, 1 * us}, // a round the relay lacks
		{"go/l3/1500B", 10, 10 * us},
		{"relay-ring/64B", 300, 25 * us}, {"go-mmsg/rcm/64B", 70, 50 * us},
		{"relay-ring/64B", 500, 40 * us}, {"go-mmsg/rcm/64B", 50, 40 * us},
	} {
		rs.Add(r.name, Result{PPS: r.pps, P50: r.p50, CPUPerPacket: time.Duration(r.pps)})
	}
	if !rs.Repeated() {
		t.Error("three rounds of relay/64B: not repeated")
	}
	got := rs.Summary()
	for _, want := range []string{
		"relay/64B                   3          200            200       50\n",
		"go/rcm/64B                  4          140            140       65\n",
		"go/rcm/64B / relay over 3 rounds: rate median 60.0%, mean 56.7% [42.3, 71.0]; idle latency median 1.00x, mean 1.33x [-0.10, 2.77]\n",
		"relay-ring/64B / relay over 2 rounds: rate median 275.0%, mean 275.0% [-42.7, 592.7]; idle latency median 0.75x, mean 0.75x [-2.43, 3.93]\n",
		"go/rcm/64B / go-mmsg over 2 rounds: rate median 142.9%, mean 142.9% [-583.2, 868.9]; idle latency median 1.50x, mean 1.50x [-4.85, 7.85]\n",
		"go/rcm/64B / relay-ring over 2 rounds:",
		"go-mmsg/rcm/64B / relay over 2 rounds:",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	for _, absent := range []string{"relay-process", "go/l3/1500B / relay", "go-mmsg/rcm/64B / go-mmsg", "relay/64B / relay"} {
		if strings.Contains(got, absent) {
			t.Errorf("summary has %q, which was not measured:\n%s", absent, got)
		}
	}
	var once Rounds
	once.Add("relay/64B", Result{PPS: 1})
	if once.Repeated() {
		t.Error("one round: repeated")
	}
}
