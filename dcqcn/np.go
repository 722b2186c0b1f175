package dcqcn

// NP is the notification point of one flow (paper Figure 6): when an
// ECN-marked packet arrives and no CNP went out for the flow in the last
// interval N, a CNP goes out at once; after that at most one CNP per N,
// sent at the end of an interval in which a marked packet arrived.
type NP struct {
	last    int64 // when the last CNP was sent
	sent    bool
	pending bool // a marked packet arrived since then
}

// OnMarked handles a CE-marked packet at now with interval n. It returns
// sendNow when a CNP is due at once; otherwise, if wake is non-zero, the
// caller must call OnTimer(wake, n) then (wake is returned only for the
// first marked packet of an interval, so a caller schedules one timer per
// interval).
func (np *NP) OnMarked(now, n int64) (sendNow bool, wake int64) {
	if !np.sent || now-np.last >= n {
		np.sent, np.last, np.pending = true, now, false
		return true, 0
	}
	if np.pending {
		return false, 0
	}
	np.pending = true
	return false, np.last + n
}

// OnTimer ends an interval; it reports whether a CNP is due now. A CNP sent
// by OnTimer starts the next interval.
func (np *NP) OnTimer(now, n int64) bool {
	if !np.pending || now-np.last < n {
		return false
	}
	np.last, np.pending = now, false
	return true
}
