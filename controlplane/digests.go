package controlplane

import (
	"context"
	"fmt"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
)

// EnableDigest makes the switch send the digest name (by its P4Info name)
// to this session, or changes how it sends it if it already does:
//
//   - maxTimeout is the longest a digest waits in the switch for others to
//     fill its list; 0 sends each at once.
//   - maxListSize is the most digests in one list; 0 is no limit.
//   - ackTimeout is how long the switch keeps a sent digest to suppress
//     its repeats while the list is not acknowledged; 0 suppresses none.
//
// The lists arrive on Digests.
//
// BMv2 departs from P4Runtime here: its learn engine, below P4Runtime,
// holds digests until it has maxListSize of them (0: 1024) or until
// maxTimeout has passed (in whole milliseconds; under 1ms: never). On
// BMv2, give a maxListSize of 1 (each digest at once) or a maxTimeout of
// at least a millisecond.
func (s *Session) EnableDigest(ctx context.Context, name string, maxTimeout time.Duration, maxListSize int32, ackTimeout time.Duration) error {
	d, err := s.digest(name)
	if err != nil {
		return err
	}
	if maxTimeout < 0 || maxListSize < 0 || ackTimeout < 0 {
		return fmt.Errorf("controlplane: digest %s: negative configuration %v, %d, %v", name, maxTimeout, maxListSize, ackTimeout)
	}
	e := &p4v1.DigestEntry{DigestId: d.Preamble.Id, Config: &p4v1.DigestEntry_Config{
		MaxTimeoutNs: maxTimeout.Nanoseconds(), MaxListSize: maxListSize, AckTimeoutNs: ackTimeout.Nanoseconds()}}
	if err := s.upsert(ctx, &p4v1.Entity{Entity: &p4v1.Entity_DigestEntry{DigestEntry: e}}); err != nil {
		return fmt.Errorf("controlplane: enable digest %s: %w", name, err)
	}
	return nil
}

// Digests delivers the digest lists the switch sends, in order; each
// delivered list has been acknowledged to the switch. The channel holds
// 1024 lists; a list that arrives when it is full is dropped, not
// acknowledged (the switch reports its digests again once they recur
// after the ack timeout), and counted by DroppedDigests. The channel is
// closed when the stream ends: at Close, or when the switch goes away
// (then Err says why).
func (s *Session) Digests() <-chan *p4v1.DigestList { return s.digests }

// DroppedDigests is how many digest lists were dropped because the
// channel of Digests was full.
func (s *Session) DroppedDigests() uint64 { return s.dropped.Load() }

// deliver queues d for Digests, or counts it as dropped if the channel
// is full; it reports whether d was queued.
func (s *Session) deliver(d *p4v1.DigestList) bool {
	select {
	case s.digests <- d:
		return true
	default:
		s.dropped.Add(1)
		return false
	}
}

// ack acknowledges d to the switch. A failed send means the stream is
// ending, which receive's next Recv reports.
func (s *Session) ack(d *p4v1.DigestList) {
	_ = s.send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_DigestAck{
		DigestAck: &p4v1.DigestListAck{DigestId: d.DigestId, ListId: d.ListId}}})
}

// DigestName is the P4Info name of the digest with this ID (the
// DigestId of a DigestList), or "" if the pipeline has none.
func (s *Session) DigestName(id uint32) string {
	if s.info == nil {
		return ""
	}
	d := find(s.info.Digests, func(d *p4configv1.Digest) bool { return d.Preamble.Id == id })
	if d == nil {
		return ""
	}
	return d.Preamble.Name
}

func (s *Session) digest(name string) (*p4configv1.Digest, error) {
	return lookup(s, "digest", name, func(i *p4configv1.P4Info) []*p4configv1.Digest { return i.Digests },
		(*p4configv1.Digest).GetPreamble)
}
