package controlplane

import (
	"context"
	"fmt"
	"sort"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
)

// CounterCell is one cell of an indirect counter. A counter that counts
// only packets has Bytes 0, one that counts only bytes Packets 0.
type CounterCell struct {
	Index   int64 `json:"index"`
	Packets int64 `json:"packets"`
	Bytes   int64 `json:"bytes"`
}

// Counter reads cell index of the counter name (an indirect counter, by
// its P4Info name).
func (s *Session) Counter(ctx context.Context, name string, index int64) (packets, bytes int64, err error) {
	c, err := s.counter(name)
	if err != nil {
		return 0, 0, err
	}
	if index < 0 || index >= c.Size {
		return 0, 0, fmt.Errorf("counter %s has no cell %d (it has %d)", name, index, c.Size)
	}
	cells, err := s.readCounter(ctx, c, &p4v1.Index{Index: index})
	if err != nil {
		return 0, 0, err
	}
	if len(cells) != 1 || cells[0].Index != index {
		return 0, 0, fmt.Errorf("read counter %s[%d]: the switch answered %v", name, index, cells)
	}
	return cells[0].Packets, cells[0].Bytes, nil
}

// CounterSize is how many cells the counter name has (NOT_FOUND, with
// the closest names, for a name the program has not).
func (s *Session) CounterSize(name string) (int64, error) {
	c, err := s.counter(name)
	if err != nil {
		return 0, err
	}
	return c.Size, nil
}

// Counters reads every cell of the counter name, by index.
func (s *Session) Counters(ctx context.Context, name string) ([]CounterCell, error) {
	c, err := s.counter(name)
	if err != nil {
		return nil, err
	}
	return s.readCounter(ctx, c, nil)
}

// readCounter reads c's cell index, or all its cells if index is nil.
func (s *Session) readCounter(ctx context.Context, c *p4configv1.Counter, index *p4v1.Index) ([]CounterCell, error) {
	var out []CounterCell
	e := &p4v1.CounterEntry{CounterId: c.Preamble.Id, Index: index}
	err := s.read(ctx, &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: e}}, func(e *p4v1.Entity) {
		if ce := e.GetCounterEntry(); ce != nil && ce.CounterId == c.Preamble.Id {
			out = append(out, CounterCell{Index: ce.GetIndex().GetIndex(),
				Packets: ce.GetData().GetPacketCount(), Bytes: ce.GetData().GetByteCount()})
		}
	})
	if err != nil {
		return nil, fmt.Errorf("read counter %s: %w", c.Preamble.Name, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out, nil
}

// HasCounter reports whether the pipeline s adopted has a counter of
// that name, asking the switch nothing.
func (s *Session) HasCounter(name string) bool {
	_, err := s.counter(name)
	return err == nil
}

func (s *Session) counter(name string) (*p4configv1.Counter, error) {
	info, err := s.P4Info()
	if err != nil {
		return nil, err
	}
	return resolvePreamble("counter", name, info.Counters, (*p4configv1.Counter).GetPreamble)
}
