package v1model

import (
	"fmt"
	"math"

	"github.com/p4rcm/p4rcm/v1model/bmjson"
)

// Meter colours, as v1model numbers them.
const (
	Green  = 0
	Yellow = 1
	Red    = 2
)

// MeterRate is one rate of a meter: tokens per microsecond (bytes or
// packets, as the meter counts) and the bucket's size, as
// simple_switch_CLI meter_set_rates takes them (rate:burst).
type MeterRate struct {
	PerMicrosecond float64
	Burst          uint64
}

// meter is one two-rate three-colour marker (RFC 2698, colour-blind),
// computed as BMv2 computes it: tokens counted from the switch's start,
// so that rounding never accumulates.
type meter struct {
	rates []meterRate // highest colour first
}

type meterRate struct {
	info   float64
	burst  uint64
	tokens uint64
	last   uint64 // tokens credited since the start, at the last update
	color  int
}

// set configures the meter from rates in increasing order (committed,
// then peak).
func (m *meter) set(rates []MeterRate) error {
	m.rates = m.rates[:0]
	for i, r := range rates {
		if r.PerMicrosecond < 0 || math.IsNaN(r.PerMicrosecond) || math.IsInf(r.PerMicrosecond, 0) {
			return fmt.Errorf("rate %d: %v per microsecond", i, r.PerMicrosecond)
		}
		if i > 0 && rates[i-1].PerMicrosecond > r.PerMicrosecond {
			return fmt.Errorf("rate %d (%v) is below rate %d (%v): rates go up", i, r.PerMicrosecond, i-1, rates[i-1].PerMicrosecond)
		}
		m.rates = append(m.rates, meterRate{info: r.PerMicrosecond, burst: r.Burst, tokens: r.Burst, color: i + 1})
	}
	for i, j := 0, len(m.rates)-1; i < j; i, j = i+1, j-1 {
		m.rates[i], m.rates[j] = m.rates[j], m.rates[i]
	}
	return nil
}

// execute colours a packet of size units at micros since the start.
func (m *meter) execute(size uint64, micros uint64) int {
	color := Green
	for i := range m.rates {
		r := &m.rates[i]
		since := uint64(float64(micros) * r.info)
		if since < r.last {
			since = r.last // a clock that went back credits nothing
		}
		r.tokens = min(r.tokens+(since-r.last), r.burst)
		r.last = since
		if r.tokens < size {
			color = r.color
			break
		}
		r.tokens -= size
	}
	return color
}

// meterArray is a meter extern: indirect (indexed) or direct (one per
// entry of the table it is bound to).
type meterArray struct {
	name      string
	direct    bool
	bytes     bool // counts bytes; else packets
	rateCount int
	cells     []meter
	result    int // direct: the slot the colour goes to
	table     string
}

func (sw *Switch) addMeters(doc *bmjson.Document, l *layout) error {
	for _, ma := range doc.MeterArrays {
		m := &meterArray{name: ma.Name, direct: ma.IsDirect, rateCount: ma.RateCount, result: -1, table: ma.BindingTable}
		switch ma.Type {
		case "bytes":
			m.bytes = true
		case "packets":
		default:
			return fmt.Errorf("meter_arrays %q: type %q, want bytes or packets", ma.Name, ma.Type)
		}
		if m.rateCount == 0 {
			m.rateCount = 2
		}
		if ma.IsDirect {
			if len(ma.ResultTarget) != 2 {
				return fmt.Errorf("meter_arrays %q: a direct meter needs a result_target", ma.Name)
			}
			slot, _, f, err := l.field(ma.ResultTarget[0], ma.ResultTarget[1])
			if err != nil || f == nil {
				return fmt.Errorf("meter_arrays %q: result_target: %v", ma.Name, err)
			}
			m.result = slot
		} else {
			m.cells = make([]meter, ma.Size)
		}
		sw.meters[ma.Name] = m
	}
	return nil
}

func (m *meterArray) size(p *packet) uint64 {
	if m.bytes {
		return uint64(p.ingressLen)
	}
	return 1
}

// SetMeterRates configures cell index of an indirect meter
// (simple_switch_CLI meter_set_rates): committed rate first, then peak.
// Until it is set, and after it is set with no rates, a meter colours
// every packet green.
func (sw *Switch) SetMeterRates(name string, index int, rates []MeterRate) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	m := sw.meters[name]
	if m == nil || m.direct {
		return fmt.Errorf("no indirect meter %q", name)
	}
	if index < 0 || index >= len(m.cells) {
		return fmt.Errorf("meter %s: index %d outside 0..%d", name, index, len(m.cells)-1)
	}
	if len(rates) == 0 {
		m.cells[index] = meter{} // unconfigured: green
		return nil
	}
	if len(rates) != m.rateCount {
		return fmt.Errorf("meter %s: %d rates given, it takes %d", name, len(rates), m.rateCount)
	}
	if err := m.cells[index].set(rates); err != nil {
		return fmt.Errorf("meter %s: %w", name, err)
	}
	return nil
}
