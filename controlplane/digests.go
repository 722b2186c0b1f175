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
		return fmt.Errorf("digest %s: negative configuration %v, %d, %v", name, maxTimeout, maxListSize, ackTimeout)
	}
	e := &p4v1.DigestEntry{DigestId: d.Preamble.Id, Config: &p4v1.DigestEntry_Config{
		MaxTimeoutNs: maxTimeout.Nanoseconds(), MaxListSize: maxListSize, AckTimeoutNs: ackTimeout.Nanoseconds()}}
	if err := s.upsert(ctx, &p4v1.Entity{Entity: &p4v1.Entity_DigestEntry{DigestEntry: e}}); err != nil {
		return fmt.Errorf("enable digest %s: %w", name, err)
	}
	return nil
}

// DigestName is the P4Info name of the digest with this ID (the
// DigestId of a DigestList), or "" if the pipeline has none.
func (s *Session) DigestName(id uint32) string {
	info, err := s.P4Info()
	if err != nil {
		return ""
	}
	d := find(info.Digests, func(d *p4configv1.Digest) bool { return d.Preamble.Id == id })
	if d == nil {
		return ""
	}
	return d.Preamble.Name
}

func (s *Session) digest(name string) (*p4configv1.Digest, error) {
	info, err := s.P4Info()
	if err != nil {
		return nil, err
	}
	return resolvePreamble("digest", name, info.Digests, (*p4configv1.Digest).GetPreamble)
}
