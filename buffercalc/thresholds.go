package buffercalc

import (
	"fmt"
	"math"
)

// FieldError is bad input, naming the field at fault. Field is the name the
// CLI gives the matching flag.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Buffer is a shared-buffer switch as the DCQCN paper (section 4) models it:
// Size bytes shared by Ports ports, each with Priorities lossless priorities,
// each of those holding Headroom bytes back for PFC.
type Buffer struct {
	Size       float64 // B, bytes
	Ports      int     // n
	Priorities int     // lossless priorities per port (8 in the paper)
	Headroom   float64 // t_flight, bytes per port per priority
	MTU        float64 // bytes
}

// Validate checks every field, naming the first bad one.
func (b Buffer) Validate() error {
	switch {
	case b.Size <= 0:
		return fieldErr("buffer", "must be greater than zero, got %g B", b.Size)
	case b.Ports <= 0:
		return fieldErr("ports", "must be greater than zero, got %d", b.Ports)
	case b.Priorities < 1 || b.Priorities > 8:
		return fieldErr("priorities", "must be 1 to 8 (PFC has 8 priorities), got %d", b.Priorities)
	case b.Headroom <= 0:
		return fieldErr("headroom", "must be greater than zero, got %g B", b.Headroom)
	case b.MTU <= 0:
		return fieldErr("mtu", "must be greater than zero, got %g B", b.MTU)
	case b.Reserved() >= b.Size:
		return fieldErr("headroom", "%d priorities x %d ports x %s = %s of headroom leaves nothing of the %s buffer",
			b.Priorities, b.Ports, FormatSize(b.Headroom), FormatSize(b.Reserved()), FormatSize(b.Size))
	}
	return nil
}

// queues is p*n, the number of lossless ingress queues.
func (b Buffer) queues() float64 { return float64(b.Priorities * b.Ports) }

// Reserved is the headroom the whole switch holds back: p n t_flight.
func (b Buffer) Reserved() float64 { return b.queues() * b.Headroom }

// Shared is what is left for queues to grow into: B - p n t_flight.
func (b Buffer) Shared() float64 { return b.Size - b.Reserved() }

// Static are the fixed thresholds of section 4, for p lossless priorities
// (the paper's 8 generalised).
type Static struct {
	// XOFF is the largest static PFC threshold t_PFC an ingress queue may
	// have: t_PFC <= (B - p n t_flight) / (p n). Every lossless queue of every
	// port can then fill to t_PFC and still have its headroom.
	XOFF float64
	// XON is where the paused queue sends RESUME: t_PFC - 2 MTU.
	XON float64
	// ECN is the strict upper bound on the egress marking threshold:
	// t_ECN < t_PFC / n. In the worst case all n egress queues are fed by one
	// ingress queue, which must not reach t_PFC before every egress queue
	// has reached t_ECN.
	ECN float64
}

// Static computes the static thresholds. b must be valid.
func (b Buffer) Static() Static {
	xoff := b.Shared() / b.queues()
	return Static{XOFF: xoff, XON: xoff - 2*b.MTU, ECN: xoff / float64(b.Ports)}
}

// Dynamic are the thresholds of a dynamic-threshold buffer (Broadcom's
// "alpha", SONiC's dynamic_th = log2 beta), where an ingress queue may grow
// to t_PFC = beta (B - p n t_flight - s) / p with s bytes of the buffer in use.
type Dynamic struct {
	Beta float64
	// XOFFEmpty is t_PFC with the shared buffer empty (s = 0).
	XOFFEmpty float64
	// ECN is the strict upper bound on t_ECN:
	// t_ECN < beta (B - p n t_flight) / (p n (beta + 1)).
	// The worst case is the static one (one ingress queue feeding all n
	// egress queues, so t_PFC must exceed n t_ECN) with the buffer as full as
	// it can be before any queue is marked: every port's p egress queues at
	// t_ECN, s = p n t_ECN.
	ECN float64
	// XOFFAtECN is t_PFC in that worst case, n t_ECN at the bound.
	XOFFAtECN float64
}

// Dynamic computes the dynamic thresholds for beta > 0. b must be valid.
func (b Buffer) Dynamic(beta float64) Dynamic {
	ecn := beta * b.Shared() / (b.queues() * (beta + 1))
	return Dynamic{
		Beta:      beta,
		XOFFEmpty: b.DynamicXOFF(beta, 0),
		ECN:       ecn,
		XOFFAtECN: b.DynamicXOFF(beta, b.queues()*ecn),
	}
}

// DynamicXOFF is the dynamic PFC threshold of one ingress queue when
// occupied bytes of the shared buffer are in use; never below zero.
func (b Buffer) DynamicXOFF(beta, occupied float64) float64 {
	return math.Max(0, beta*(b.Shared()-occupied)/float64(b.Priorities))
}

// MinBetaForECN is the smallest beta for which the dynamic ECN bound reaches
// ecn bytes (one MTU, say); ok is false when no beta does, since the bound
// approaches (B - p n t_flight) / (p n) as beta grows.
func (b Buffer) MinBetaForECN(ecn float64) (beta float64, ok bool) {
	room := b.Shared() - b.queues()*ecn
	if room <= 0 {
		return 0, false
	}
	return b.queues() * ecn / room, true
}

// StandardBetas are the dynamic-threshold settings of Broadcom switch ASICs,
// the powers of two from 1/128 to 8 (SONiC dynamic_th -7 to 3).
var StandardBetas = []float64{1.0 / 128, 1.0 / 64, 1.0 / 32, 1.0 / 16, 1.0 / 8, 1.0 / 4, 1.0 / 2, 1, 2, 4, 8}
