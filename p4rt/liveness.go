package p4rt

import (
	"time"
)

// Liveness: telling a frozen client from a busy one.
//
// gRPC's keepalive drops a connection whose peer has not answered a
// ping within a fixed time after it. That demotes a frozen primary (a
// stopped process keeps its TCP connection open, its kernel still
// acknowledging), but it also drops a live one that is slow to answer
// while busy: a controller pushing a 255 MiB pipeline on a loaded
// machine, starved of the CPU for a few seconds, lost the push and its
// stream. So gRPC's timeout is left long (BusyTimeout), and the guard
// judges each authenticated connection by what the kernel saw of it
// (TCP_INFO: when data last came from the peer, when the switch last
// sent any): a connection whose peer has sent nothing since the switch
// sent it something (a ping, after KeepaliveTime of silence) for
// KeepaliveTimeout is closed, or for BusyTimeout while it carries a
// request other than its stream (being received, handled, or answered).
// The kernel's times do not depend on when the switch's own goroutines
// run, so a switch that is itself slow to read does not take its
// client for dead.

// livenessTick is how often the guard looks at its connections.
const livenessTick = 250 * time.Millisecond

// watching starts the liveness check with the first guarded listener
// and stops it when the last one is closed (d is +1 or -1).
func (g *guard) watching(d int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.listeners += d
	switch {
	case g.listeners == 1 && d > 0 && tcpTimesWork:
		g.stopWatch = make(chan struct{})
		go g.watch(g.stopWatch)
	case g.listeners == 0 && g.stopWatch != nil:
		close(g.stopWatch)
		g.stopWatch = nil
	}
}

func (g *guard) watch(stop <-chan struct{}) {
	t := time.NewTicker(livenessTick)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			for _, c := range g.frozen(now) {
				g.log("closing the connection of a client that stopped answering", c)
				c.Close()
			}
		}
	}
}

// frozen are the authenticated connections whose peer stopped
// answering, as of now.
func (g *guard) frozen(now time.Time) []*guardedConn {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*guardedConn
	for _, c := range g.conns {
		if !c.up || c.closed {
			continue
		}
		sinceRecv, sinceSent, ok := tcpTimes(c.Conn)
		if !ok {
			continue
		}
		lastRecv, lastSent := now.Add(-sinceRecv), now.Add(-sinceSent)
		switch {
		case !lastSent.After(lastRecv):
			c.probeAt = time.Time{} // the peer spoke last
		case c.probeAt.IsZero() || c.probeAt.Before(lastRecv):
			c.probeAt = lastSent // the switch spoke since: a probe
		}
		wait := g.lim.keepaliveWait
		if c.busy.Load() > 0 {
			wait = g.lim.busy
		}
		if !c.probeAt.IsZero() && now.Sub(c.probeAt) >= wait && sinceRecv >= g.lim.keepalive+wait {
			out = append(out, c)
		}
	}
	return out
}
