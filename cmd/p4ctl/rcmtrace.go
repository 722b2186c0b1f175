package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"

	"github.com/p4rcm/p4rcm/dataplane"
	"github.com/p4rcm/p4rcm/rcm"
	"github.com/p4rcm/p4rcm/sim"
)

// RCMTraceFile is the file --rcm-trace writes into the output directory.
const RCMTraceFile = "rcm_trace.csv"

// rcmTrace writes RCM's decisions about flows as CSV, one row per event:
// time_ns,switch,port,event,fb,flows,cam. flows are the flagged or named
// flows and cam (flag events only) the CAM's flows with their entries
// ("id:hits"), both space-separated flow IDs as flows.csv numbers them
// (several joined by "|" when their 5-tuple hashes collide, "h" and the
// hash in hex for a hash no flow has), so that what RCM flagged can be
// set beside what each flow was.
type rcmTrace struct {
	f   *os.File
	w   *bufio.Writer
	net *sim.Network
	buf []byte
	err error
}

func newRCMTrace(path string) (*rcmTrace, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	t := &rcmTrace{f: f, w: bufio.NewWriterSize(f, 1<<20)}
	_, t.err = t.w.WriteString("time_ns,switch,port,event,fb,flows,cam\n")
	return t, nil
}

// event is sim.Config.RCMTrace.
func (t *rcmTrace) event(sw string, ev *dataplane.RCMEvent) {
	if t.err != nil {
		return
	}
	b := t.buf[:0]
	b = strconv.AppendFloat(b, float64(ev.Time)/1e3, 'f', 3, 64)
	b = append(b, ',')
	b = append(b, sw...)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(ev.Port), 10)
	b = append(b, ',')
	b = append(b, ev.Kind.String()...)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(ev.Fb), 10)
	b = append(b, ',')
	for i, id := range ev.Flows {
		if i > 0 {
			b = append(b, ' ')
		}
		b = t.appendFlow(b, id)
	}
	b = append(b, ',')
	// The CAM's flows in the order of their first entry, with their hits.
	for i, id := range ev.CAM {
		if !firstAt(ev.CAM, i) {
			continue
		}
		if len(b) > 0 && b[len(b)-1] != ',' {
			b = append(b, ' ')
		}
		b = t.appendFlow(b, id)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(hits(ev.CAM, id)), 10)
	}
	b = append(b, '\n')
	t.buf = b
	_, t.err = t.w.Write(b)
}

func (t *rcmTrace) appendFlow(b []byte, id rcm.FlowID) []byte {
	flows := t.net.FlowsWithHash(uint32(id))
	if len(flows) == 0 {
		return fmt.Appendf(b, "h%08x", uint32(id))
	}
	for i, f := range flows {
		if i > 0 {
			b = append(b, '|')
		}
		b = strconv.AppendInt(b, int64(f), 10)
	}
	return b
}

// firstAt reports whether ids[i] is the first entry of its flow.
func firstAt(ids []rcm.FlowID, i int) bool {
	for _, x := range ids[:i] {
		if x == ids[i] {
			return false
		}
	}
	return true
}

func hits(ids []rcm.FlowID, id rcm.FlowID) int {
	n := 0
	for _, x := range ids {
		if x == id {
			n++
		}
	}
	return n
}

// Close flushes the file and returns the first error writing it.
func (t *rcmTrace) Close() error {
	if err := t.w.Flush(); t.err == nil {
		t.err = err
	}
	if err := t.f.Close(); t.err == nil {
		t.err = err
	}
	return t.err
}
