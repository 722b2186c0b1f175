package controlplane

import (
	"context"
	"errors"
	"fmt"
	"slices"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
)

// cloneInstance is the instance (egress_rid) of every copy a clone
// session makes; BMv2's PI takes a replica as (instance, port), so a
// port may appear once per session.
const cloneInstance = 1

// SetCloneSession makes clone session id (> 0; BMv2 takes ids below
// 32768) copy whole packets to ports, at the default class of service.
// It creates the session, or replaces the ports of one that exists.
func (s *Session) SetCloneSession(ctx context.Context, id uint32, ports ...uint32) error {
	if id == 0 {
		return errors.New("clone session 0 is not a session")
	}
	for i, p := range ports {
		if slices.Contains(ports[:i], p) {
			return fmt.Errorf("clone session %d: port %d twice", id, p)
		}
	}
	if err := s.upsert(ctx, CloneSessionEntity(id, ports...)); err != nil {
		return fmt.Errorf("set clone session %d: %w", id, err)
	}
	return nil
}

// CloneSession reads the ports of clone session id, in increasing order.
// A session that does not exist is an error with code NOT_FOUND.
func (s *Session) CloneSession(ctx context.Context, id uint32) ([]uint32, error) {
	if id == 0 {
		return nil, errors.New("clone session 0 is not a session")
	}
	var ports []uint32
	found := false
	err := s.read(ctx, cloneSessionEntity(&p4v1.CloneSessionEntry{SessionId: id}), func(e *p4v1.Entity) {
		if cs := e.GetPacketReplicationEngineEntry().GetCloneSessionEntry(); cs != nil && cs.SessionId == id {
			found = true
			for _, r := range cs.Replicas {
				ports = append(ports, r.EgressPort)
			}
		}
	})
	if err == nil && !found {
		err = errors.New("not in the answer")
	}
	if err != nil {
		return nil, fmt.Errorf("read clone session %d: %w", id, err)
	}
	slices.Sort(ports)
	return ports, nil
}

// CloneSessionEntity is clone session id copying whole packets to
// ports, as SetCloneSession writes it: for Reconcile.
func CloneSessionEntity(id uint32, ports ...uint32) *p4v1.Entity {
	cs := &p4v1.CloneSessionEntry{SessionId: id}
	for _, p := range ports {
		cs.Replicas = append(cs.Replicas, &p4v1.Replica{EgressPort: p, Instance: cloneInstance})
	}
	return cloneSessionEntity(cs)
}

func cloneSessionEntity(cs *p4v1.CloneSessionEntry) *p4v1.Entity {
	return &p4v1.Entity{Entity: &p4v1.Entity_PacketReplicationEngineEntry{
		PacketReplicationEngineEntry: &p4v1.PacketReplicationEngineEntry{
			Type: &p4v1.PacketReplicationEngineEntry_CloneSessionEntry{CloneSessionEntry: cs}}}}
}
