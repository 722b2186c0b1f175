//go:build !linux

package p4rt

import (
	"net"
	"time"
)

// tcpTimesWork says tcpTimes answers here: not off Linux, where gRPC's
// keepalive alone judges liveness, with KeepaliveTimeout.
const tcpTimesWork = false

func tcpTimes(net.Conn) (sinceRecv, sinceSent time.Duration, ok bool) { return 0, 0, false }
