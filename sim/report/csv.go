package report

import (
	"bufio"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/p4rcm/p4rcm/sim"
)

// The CSV writers share these formats:
//
//   - Times given in nanoseconds are written with exactly three decimals
//     ("1234.567"), which represents the simulator's picoseconds exactly;
//     paused_us has six decimals for the same reason.
//   - Other floating-point numbers are written in the shortest decimal
//     form that reads back as the same float64, without an exponent.
//   - Rows come in the order of the input slice (for a sim.Results, flows
//     by ID, ports by switch then port number, samples in time order).
//   - Quoting follows encoding/csv, so a class name holding a comma or a
//     quote survives a round trip.

// flowsHeader is the header of WriteFlowsCSV.
var flowsHeader = []string{"id", "src", "dst", "sport", "dport", "size_bytes", "start_ns", "finish_ns",
	"fct_ns", "ideal_fct_ns", "slowdown", "class", "retransmits", "cnps", "rate_cuts", "delivered_bytes"}

// portsHeader is the header of WritePortsCSV.
var portsHeader = []string{"node", "node_name", "port", "peer", "rate_gbps", "tx_packets", "tx_bytes",
	"ctrl_packets", "ecn_marked", "pauses_sent", "resumes_sent", "pauses_received", "resumes_received", "paused_us", "drops",
	"max_queue_bytes", "max_ingress_bytes", "max_headroom_bytes", "utilisation"}

// queuesHeader is the header of WriteQueuesCSV.
var queuesHeader = []string{"time_ns", "node", "port", "prio", "bytes"}

// ratesHeader is the header of WriteRatesCSV.
var ratesHeader = []string{"time_ns", "flow", "bytes", "gbps"}

// ccHeader is the header of WriteCCCSV for DCQCN, ldcpCCHeader for LDCP.
var (
	ccHeader     = []string{"time_ns", "flow", "rate_gbps", "target_gbps", "alpha"}
	ldcpCCHeader = []string{"time_ns", "flow", "window_pkts", "rate_gbps"}
)

// WriteFlowsCSV writes one row per flow under the header
// id,src,dst,sport,dport,size_bytes,start_ns,finish_ns,fct_ns,ideal_fct_ns,
// slowdown,class,retransmits,cnps,rate_cuts,delivered_bytes. Times are nanoseconds with
// three decimals; finish_ns, fct_ns and slowdown are empty for a flow that
// did not complete.
func WriteFlowsCSV(w io.Writer, flows []sim.FlowRecord) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(flowsHeader); err != nil {
		return err
	}
	row := make([]string, len(flowsHeader))
	for _, f := range flows {
		finish, fct, slow := "", "", ""
		if completed(f) {
			finish, fct, slow = fixed(f.Finish, 3), fixed(f.FCT, 3), float(f.Slowdown)
		}
		row = append(row[:0],
			strconv.Itoa(f.ID), strconv.Itoa(f.Src), strconv.Itoa(f.Dst),
			strconv.Itoa(f.SPort), strconv.Itoa(f.DPort), strconv.FormatInt(f.Size, 10),
			fixed(f.Start, 3), finish, fct, fixed(f.Ideal, 3), slow, f.Class,
			strconv.FormatInt(f.Retransmits, 10), strconv.Itoa(f.CNPs), strconv.Itoa(f.RateCuts),
			strconv.FormatInt(f.Delivered, 10))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// NS3Addr is the IPv4 address, as a 32-bit number, that the ns-3 RDMA
// simulator gives node id: 11.x.y.1 with x = id/256 and y = id%256.
func NS3Addr(id int) uint32 {
	return 0x0b000001 + uint32(id/256)*0x10000 + uint32(id%256)*0x100
}

// WriteNS3FCT writes the ns-3 RDMA simulator's fct.txt: one line per
// completed flow, in completion order then by ID,
//
//	sip dip sport dport size start_ns fct_ns ideal_fct_ns
//
// with the addresses as eight lower-case hex digits (NS3Addr) and times in
// integer nanoseconds, rounded to the nearest (halves away from zero).
// Unlike the other writers it has no header line, as the ns-3 file has
// none and the scripts that read it expect none.
func WriteNS3FCT(w io.Writer, flows []sim.FlowRecord) error {
	done := make([]sim.FlowRecord, 0, len(flows))
	for _, f := range flows {
		if completed(f) {
			done = append(done, f)
		}
	}
	slices.SortStableFunc(done, func(a, b sim.FlowRecord) int {
		return cmp.Or(cmp.Compare(a.Finish, b.Finish), cmp.Compare(a.ID, b.ID))
	})
	bw := bufio.NewWriter(w)
	for _, f := range done {
		fmt.Fprintf(bw, "%08x %08x %d %d %d %d %d %d\n", NS3Addr(f.Src), NS3Addr(f.Dst), f.SPort, f.DPort,
			f.Size, roundNs(f.Start), roundNs(f.FCT), roundNs(f.Ideal))
	}
	return bw.Flush()
}

// WritePortsCSV writes one row per switch port under the header
// node,node_name,port,peer,rate_gbps,tx_packets,tx_bytes,ctrl_packets,
// ecn_marked,pauses_sent,resumes_sent,pauses_received,resumes_received,
// paused_us,drops,
// max_queue_bytes,max_ingress_bytes,max_headroom_bytes,utilisation: the
// rate in Gbit/s, the paused time in microseconds (six decimals) and the
// counters as the simulator keeps them. The columns named in
// notMeasured (sim.Results.NotMeasured) are left empty in every row.
func WritePortsCSV(w io.Writer, ports []sim.PortRecord, notMeasured ...string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(portsHeader); err != nil {
		return err
	}
	var blank []int // the columns not measured
	for i, col := range portsHeader {
		if slices.Contains(notMeasured, col) {
			blank = append(blank, i)
		}
	}
	row := make([]string, len(portsHeader))
	for _, p := range ports {
		row = append(row[:0],
			strconv.Itoa(p.Node), p.NodeName, strconv.Itoa(p.Port), strconv.Itoa(p.Peer),
			float(p.Rate/1e9), strconv.FormatInt(p.TxPackets, 10), strconv.FormatInt(p.TxBytes, 10),
			strconv.FormatInt(p.CtrlPackets, 10), strconv.FormatInt(p.Marked, 10),
			strconv.FormatInt(p.PausesSent, 10), strconv.FormatInt(p.Resumes, 10),
			strconv.FormatInt(p.PausesReceived, 10), strconv.FormatInt(p.ResumesReceived, 10),
			fixed(p.PausedTime, 6), strconv.FormatInt(p.Drops, 10),
			float(p.MaxQueueBytes), float(p.MaxIngressBytes), float(p.MaxHeadroomBytes), float(p.Utilisation))
		for _, i := range blank {
			row[i] = ""
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteQueuesCSV writes the queue samples under the header
// time_ns,node,port,prio,bytes.
func WriteQueuesCSV(w io.Writer, samples []sim.QueueSample) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(queuesHeader); err != nil {
		return err
	}
	row := make([]string, len(queuesHeader))
	for _, s := range samples {
		row = append(row[:0], fixed(s.Time, 3), strconv.Itoa(s.Node), strconv.Itoa(s.Port),
			strconv.Itoa(s.Prio), float(s.Bytes))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteRatesCSV writes the rate samples under the header
// time_ns,flow,bytes,gbps. interval is the sampling interval in
// picoseconds (sim.RateSampling.Interval) and must be positive; gbps is a
// sample's bytes over it.
func WriteRatesCSV(w io.Writer, samples []sim.RateSample, interval int64) error {
	if interval <= 0 {
		return fmt.Errorf("rate sampling interval must be positive, got %d ps", interval)
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(ratesHeader); err != nil {
		return err
	}
	row := make([]string, len(ratesHeader))
	for _, s := range samples {
		// bytes*8 bits over interval ps is bytes*8e3/interval Gbit/s.
		gbps := float64(s.Bytes) * 8e3 / float64(interval)
		row = append(row[:0], fixed(s.Time, 3), strconv.Itoa(s.Flow), strconv.FormatInt(s.Bytes, 10), float(gbps))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteCCCSV writes the senders' DCQCN state samples under the header
// time_ns,flow,rate_gbps,target_gbps,alpha: R_C and R_T in Gbit/s; or
// LDCP's (samples with a window) under time_ns,flow,window_pkts,rate_gbps.
func WriteCCCSV(w io.Writer, samples []sim.CCSample) error {
	cw := csv.NewWriter(w)
	header := ccHeader
	ldcp := len(samples) > 0 && samples[0].Window > 0
	if ldcp {
		header = ldcpCCHeader
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	row := make([]string, len(header))
	for _, s := range samples {
		if ldcp {
			row = append(row[:0], fixed(s.Time, 3), strconv.Itoa(s.Flow), float(s.Window), float(s.Rate/1e9))
		} else {
			row = append(row[:0], fixed(s.Time, 3), strconv.Itoa(s.Flow), float(s.Rate/1e9), float(s.Target/1e9), float(s.Alpha))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// InferRateInterval guesses the rate sampling interval from the samples:
// the smallest gap between distinct sample times, or the time of the
// samples if they all share one (the simulator takes its first sample one
// interval after time 0). It fails when there are no samples or no
// positive gap or time.
func InferRateInterval(samples []sim.RateSample) (int64, error) {
	if len(samples) == 0 {
		return 0, errors.New("no rate samples to infer the sampling interval from")
	}
	times := make([]int64, len(samples))
	for i, s := range samples {
		times[i] = s.Time
	}
	slices.Sort(times)
	times = slices.Compact(times)
	interval := times[0]
	for i := 1; i < len(times); i++ {
		gap := times[i] - times[i-1]
		if i == 1 || gap < interval {
			interval = gap
		}
	}
	if interval <= 0 {
		return 0, errors.New("cannot infer the rate sampling interval: sample times are not positive")
	}
	return interval, nil
}

// fixed writes v/10^decimals with exactly that many decimals, exactly.
func fixed(v int64, decimals int) string {
	var unit uint64 = 1
	for range decimals {
		unit *= 10
	}
	sign := ""
	u := uint64(v)
	if v < 0 {
		sign = "-"
		u = -u
	}
	return fmt.Sprintf("%s%d.%0*d", sign, u/unit, decimals, u%unit)
}

// float writes x in the shortest form that parses back to x, with no
// exponent.
func float(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// roundNs converts picoseconds to the nearest nanosecond, halves away
// from zero.
func roundNs(ps int64) int64 {
	if ps < 0 {
		return -((-ps + 500) / 1000)
	}
	return (ps + 500) / 1000
}
