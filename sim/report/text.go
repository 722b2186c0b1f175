package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteSummaryText writes s as a report for people: a headline (flows
// completed, slowdown p50/p95/p99), faults if any, each on a line starting
// "FAULT:", a line on the flows that did not complete if any, the FCT of
// all flows and a table of the fixed size bins (the completed flows in
// each; no table when none completed), a table
// of the classes if any, drops ("0 drops" when there are none; lossless
// drops are flagged as a FAULT), PFC totals, CNPs, RCM totals, a line
// naming what the run could not measure if anything, and the run's figures.
// Times are microseconds. Statistics of an empty set show as "-".
func WriteSummaryText(w io.Writer, s Summary) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format, args...) }

	p("p4rcm report: %d/%d flows completed", s.Completed, s.Flows)
	if s.Incomplete > 0 {
		p(" (%d incomplete, not in the statistics)", s.Incomplete)
	}
	p("; slowdown p50 %s p95 %s p99 %s\n", slowText(s.FCT, s.FCT.P50Slowdown),
		slowText(s.FCT, s.FCT.P95Slowdown), slowText(s.FCT, s.FCT.P99Slowdown))
	for _, f := range s.Faults {
		p("FAULT: %s\n", f)
	}
	if s.Drops.Lossless > 0 {
		p("FAULT: %d packets dropped on lossless priorities\n", s.Drops.Lossless)
	}
	if s.Incomplete > 0 {
		where := "flows.csv gives the bytes each delivered"
		if s.Run.RateSamples > 0 {
			where += ", rates.csv their throughput over time"
		}
		p("%d flows did not complete by the end of the run (greedy, or cut off by stop): no FCT; %s\n", s.Incomplete, where)
	}
	if s.FCT.Count > 0 {
		p("FCT: mean %s us, p50 %s us, p95 %s us, p99 %s us\n", usText(s.FCT, s.FCT.MeanFCTNs),
			usText(s.FCT, s.FCT.P50FCTNs), usText(s.FCT, s.FCT.P95FCTNs), usText(s.FCT, s.FCT.P99FCTNs))

		// completed: the flows in the bin that completed, whose FCTs these are.
		p("\nsize\tcompleted\tmean FCT us\tp50 FCT us\tp99 FCT us\tmean slowdown\tp99 slowdown\n")
		for _, b := range s.SizeBins {
			st := b.FCTStats
			p("%s\t%d\t%s\t%s\t%s\t%s\t%s\n", b.Label, st.Count, usText(st, st.MeanFCTNs), usText(st, st.P50FCTNs),
				usText(st, st.P99FCTNs), slowText(st, st.MeanSlowdown), slowText(st, st.P99Slowdown))
		}
	} else {
		p("FCT: no completed flows, so no FCT table\n")
	}

	if len(s.Classes) > 0 && s.FCT.Count == 0 {
		// No flow completed (greedy flows, as the victim and hot-spot
		// scenarios run): what the run measures is goodput, and a table
		// of FCT columns would be all dashes.
		p("\nclass\tflows\tgoodput Gbps\n")
		for _, c := range s.Classes {
			name := c.Class
			if name == "" {
				name = "(none)"
			}
			p("%s\t%d\t%.3f\n", name, c.Flows, c.GoodputGbps)
		}
		p("(goodput: the bytes each flow delivered over the time it ran, the class's mean, in the scenario's terms)\n")
	} else if len(s.Classes) > 0 {
		p("\nclass\tflows\tcompleted\tmean FCT us\tmean slowdown\tp99 slowdown\tGbps\tgoodput Gbps\n")
		for _, c := range s.Classes {
			st := c.FCTStats
			name := c.Class
			if name == "" {
				name = "(none)"
			}
			gbps := "-"
			if st.Count > 0 {
				gbps = fmt.Sprintf("%.3f", c.ThroughputGbps)
			}
			p("%s\t%d\t%d\t%s\t%s\t%s\t%s\t%.3f\n", name, c.Flows, st.Count, usText(st, st.MeanFCTNs),
				slowText(st, st.MeanSlowdown), slowText(st, st.P99Slowdown), gbps, c.GoodputGbps)
		}
	}

	p("\n")
	if s.Drops.Total == 0 {
		p("drops: 0 drops\n")
	} else {
		reasons := make([]string, 0, len(s.Drops.ByReason))
		for _, r := range s.Drops.ByReason {
			if r.Count != 0 {
				reasons = append(reasons, fmt.Sprintf("%s %d", r.Reason, r.Count))
			}
		}
		p("drops: %d (%s)\n", s.Drops.Total, strings.Join(reasons, ", "))
	}
	if s.Drops.Lossless > 0 {
		p("lossless drops: %d  FAULT: PFC must prevent these\n", s.Drops.Lossless)
	} else {
		p("lossless drops: 0\n")
	}
	p("PFC: switches sent %d PAUSE and %d RESUME frames; switches received %d PAUSE and %d RESUME, hosts %d PAUSE and %d RESUME\n",
		s.PFC.PausesSent, s.PFC.ResumesSent, s.PFC.PausesReceived, s.PFC.ResumesReceived, s.PFC.HostPauses, s.PFC.HostResumes)
	p("PFC: %.3f us paused in total; %d of %d switch ports sent PAUSE, %d were held\n",
		s.PFC.PausedNs/1e3, s.PFC.PortsPausing, s.PFC.Ports, s.PFC.PortsPaused)
	p("CNPs: %d\n", s.CNPs)
	if r := s.RCM; r != (RCMStats{}) {
		p("RCM: %d CNs sent (%d naming harmful flows + %d clearing), %d received; %d packets held, %d window cuts, %d flows detoured\n",
			r.CongestionCNsSent+r.ClearingCNsSent, r.CongestionCNsSent, r.ClearingCNsSent, r.CNsReceived, r.Held, r.Cuts, r.Detours)
	}
	if len(s.NotMeasured) > 0 {
		p("not measured in this run, so 0 above and empty in ports.csv: %s\n", strings.Join(s.NotMeasured, ", "))
	}
	if s.Run.OutOfOrder > 0 {
		p("out of order: %d data packets arrived past a gap\n", s.Run.OutOfOrder)
	}
	if s.Run.Retransmits > 0 {
		p("retransmissions: %d data packets sent again (go-back-N), by %d flows\n", s.Run.Retransmits, s.Run.RetransmitFlows)
	}
	if s.Run.Events > 0 {
		p("run: %d events, %d data packets, %d packet hops; end %.3f us, last finish %.3f us\n",
			s.Run.Events, s.Run.DataPackets, s.Run.PacketHops, s.Run.EndNs/1e3, s.Run.LastFinishNs/1e3)
	} else { // not simulated (p4ctl emulate): no events to count
		p("run: %d data packets; end %.3f us, last finish %.3f us\n", s.Run.DataPackets, s.Run.EndNs/1e3, s.Run.LastFinishNs/1e3)
	}

	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// usText shows a time statistic in microseconds, "-" if st is empty.
func usText(st FCTStats, ns float64) string {
	if st.Count == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", ns/1e3)
}

// slowText shows a slowdown statistic, "-" if st is empty.
func slowText(st FCTStats, x float64) string {
	if st.Count == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", x)
}

// WriteSummaryJSON writes s as indented JSON with snake_case keys (see the
// field tags of Summary), followed by a newline. Nil slices are written
// as empty arrays, never null.
func WriteSummaryJSON(w io.Writer, s Summary) error {
	s.SizeBins = NonNil(s.SizeBins)
	s.EqualBins = NonNil(s.EqualBins)
	s.Classes = NonNil(s.Classes)
	s.Drops.ByReason = NonNil(s.Drops.ByReason)
	s.Faults = NonNil(s.Faults)
	return WriteJSON(w, s)
}

// WriteJSON writes v as JSON indented by two spaces, <, > and & as they
// are, and a newline; nothing reaches w if v does not encode.
func WriteJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// NonNil returns s, or an empty slice if s is nil, so that JSON has []
// and never null.
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
