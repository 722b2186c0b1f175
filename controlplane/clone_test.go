package controlplane

import (
	"context"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A clone session is created, read back, and replaced by a second call;
// session 0 and a port given twice are refused, and a missing session
// reads as NOT_FOUND.
func TestCloneSession(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := startSwitch(ctx, t, nil, nil, nil)

	for _, ports := range [][]uint32{{2, 1}, {3}, {}} {
		if err := s.SetCloneSession(ctx, 5, ports...); err != nil {
			t.Fatalf("SetCloneSession(5, %v): %v", ports, err)
		}
		got, err := s.CloneSession(ctx, 5)
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Sorted(slices.Values(ports))
		if !slices.Equal(got, want) {
			t.Errorf("after SetCloneSession(5, %v), CloneSession(5) = %v", ports, got)
		}
	}
	if _, err := s.CloneSession(ctx, 6); status.Code(err) != codes.NotFound {
		t.Errorf("CloneSession(6) of no session: %v, want code NotFound", err)
	}
	if err := s.SetCloneSession(ctx, 0, 1); err == nil {
		t.Error("clone session 0 was accepted")
	}
	if err := s.SetCloneSession(ctx, 7, 1, 2, 1); err == nil {
		t.Error("a port twice in a clone session was accepted")
	}
}
