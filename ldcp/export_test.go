package ldcp

// SetWindow puts a sender in the stable stage with window cw, for tests
// that start from a hand-picked window.
func SetWindow(s *Sender, cw float64) { s.stage, s.cw = Stable, cw }

// SetRateWindow sets a rate sender's window.
func SetRateWindow(r *RateSender, cw float64) { r.cw = cw }
