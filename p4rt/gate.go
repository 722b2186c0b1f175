package p4rt

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/tap"
)

// Full method names of the RPCs the tap tells apart.
const (
	methodStreamChannel = "/p4.v1.P4Runtime/StreamChannel"
)

// tap judges each RPC on its headers, before gRPC reads a byte of its
// request or starts a handler: what it refuses costs the server the
// headers alone.
//
//   - A connection past the caps on authenticated connections is refused
//     every RPC, with the cap it is past, until it is closed.
//   - Under a policy, a StreamChannel is refused to an identity the
//     policy does not name: streams are for the controllers that may be
//     primary, and a client that may only read needs none, so followers
//     of no standing cannot take the places the controllers need.
func (s *Server) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	pc := connOf(ctx)
	if pc == nil || pc.local {
		return ctx, nil
	}
	if pc.refused != "" {
		return nil, errorf(codes.ResourceExhausted, "%s", pc.refused)
	}
	if info.FullMethodName == methodStreamChannel && !s.cfg.Policy.mayWrite(pc) {
		return nil, errorf(codes.PermissionDenied, "client %s may hold no stream under the policy %s, which names the controllers that may: it may read, which needs none",
			pc.identityText(), s.cfg.Policy.Path)
	}
	return ctx, nil
}
