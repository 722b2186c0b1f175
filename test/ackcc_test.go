//go:build linux

package test

import (
	"testing"
	"time"
)

// TIMELY and DCTCP on the agents through rcm.p4: a 4:1 incast of 150 KB
// flows completes under each, nothing lost; DCTCP's switch marks past its
// K (300 KB at 100 Gb/s, more than the 40 KB PFC lets build here) never,
// so its senders see no echo.
func TestTIMELYAndDCTCPOnRealPackets(t *testing.T) {
	for _, scheme := range []string{"timely", "dctcp"} {
		cfg := scenarioOf(t, `
name: incast-4
topology: {kind: star, hosts: 5, host_rate: 100G, delay: 1us}
workload: {kind: incast, senders: [0, 1, 2, 3], receiver: 4, size: 150KB}
scheme: `+scheme+`
switch: {buffer: 1MB, pfc_xoff: 40KB}
`)
		out := emulated(t, cfg)
		var retx int64
		for _, a := range out.Agents {
			retx += a.Retransmits
		}
		t.Logf("%s: %d of 4 flows, mean FCT %v in the scenario's terms, %d packets sent again, %d echoes", scheme,
			out.Results.Completed, time.Duration(meanFCT(out.Results)/1000), retx, out.Results.CNPs)
		if out.Results.Completed != 4 || retx != 0 {
			t.Errorf("%s: %d of 4 flows completed, %d packets sent again; want all, none", scheme, out.Results.Completed, retx)
		}
	}
}
