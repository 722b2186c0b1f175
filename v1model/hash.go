package v1model

import (
	"fmt"
	"hash/crc32"

	"github.com/p4rcm/p4rcm/v1model/bmjson"
)

// calculation hashes a list of fields, packed bit by bit most
// significant first as BMv2 builds its hash input, with the output of the
// named algorithm.
type calculation struct {
	name  string
	algo  func([]byte) uint64
	parts []calcPart
	bits  int
	// sum16, for csum16 over fields read as leaves (IPv4's header
	// checksum), is the checksum's sum taken from the values without
	// packing them: see csum16Parts.
	sum16 []sum16Part
}

// sum16Part is a field's place in a csum16 input: its leaf, width and
// the shift that puts it at its bit position within a 16-bit word; fold
// says its shifted value may pass 48 bits, so it is folded first.
type sum16Part struct {
	l     leaf
	mask  uint64
	shift uint
	fold  bool
}

type calcPart struct {
	eval  func(p *packet) int64
	leaf  *leaf // eval inline, where it is a leaf
	width int
}

// compute hashes the packet's fields, packed into the packet's hash
// buffer.
func (c *calculation) compute(p *packet) uint64 {
	if c.sum16 != nil {
		return uint64(csum16Parts(c.sum16, p))
	}
	n := (c.bits + 7) / 8
	if n > cap(p.hash) {
		p.hash = make([]byte, n) // once per packet buffer, for wide inputs
	}
	buf := p.hash[:n]
	w := bitWriter{b: buf} // writes every byte: no clear
	for i := range c.parts {
		part := &c.parts[i]
		var v int64
		if part.leaf != nil {
			v = part.leaf.get(p)
		} else {
			v = part.eval(p)
		}
		w.put(uint64(v), part.width)
	}
	w.flush()
	return c.algo(buf)
}

// algorithms BMv2 names in "calculations" and selectors. Custom CRCs take
// BMv2's default parameters until the control plane sets others, which
// this target does not offer yet.
var algorithms = map[string]func([]byte) uint64{
	"crc32":        func(b []byte) uint64 { return uint64(crc32.ChecksumIEEE(b)) },
	"crc32_custom": func(b []byte) uint64 { return uint64(crc32.ChecksumIEEE(b)) },
	"crc16":        func(b []byte) uint64 { return uint64(crc16ARC(b)) },
	"crc16_custom": func(b []byte) uint64 { return uint64(crc16ARC(b)) },
	"crcCCITT":     func(b []byte) uint64 { return uint64(crcCCITT(b)) },
	"csum16":       func(b []byte) uint64 { return uint64(csum16(b)) },
	"xor16":        func(b []byte) uint64 { return uint64(xor16(b)) },
	"identity":     identity,
}

// crc16ARC is BMv2's crc16: polynomial 0x8005, reflected, init 0.
func crc16ARC(b []byte) uint16 {
	var crc uint16
	for _, c := range b {
		crc ^= uint16(c)
		for i := 0; i < 8; i++ {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0xA001
			} else {
				crc >>= 1
			}
		}
	}
	return crc
}

// crcCCITT is BMv2's crcCCITT: polynomial 0x1021, not reflected, init
// 0xffff.
func crcCCITT(b []byte) uint16 {
	crc := uint16(0xffff)
	for _, c := range b {
		crc ^= uint16(c) << 8
		for i := 0; i < 8; i++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// csum16Parts is csum16 of the fields' values packed most significant
// bit first, computed from the values. The packed input is a number X
// of 16-bit words, padded with zero bits to a whole word; the one's
// complement sum of its words is X's residue modulo 2^16-1 (2^16 is 1
// there), folded to 16 bits, and is 0 only when every word is. A
// field's share of X is its value times 2 to the power of the bits after
// it, the same residue as its value shifted by that count modulo 16. So
// the sum of the shifted values, folded, is the words' folded sum, and
// zero only when every value is: bit for bit csum16's.
func csum16Parts(parts []sum16Part, p *packet) uint16 {
	var sum uint64
	for i := range parts {
		q := &parts[i]
		v := uint64(q.l.get(p)) & q.mask
		if q.fold {
			v = v&0xffff + v>>16&0xffff + v>>32&0xffff + v>>48
		}
		sum += v << q.shift
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// sum16Plan is the parts of a csum16 input read as leaves, or nil when
// one is not a leaf (or there are too many for the sum to stay within
// 64 bits).
func sum16Plan(parts []calcPart, bits int) []sum16Part {
	if len(parts) == 0 || len(parts) > 1<<12 {
		return nil
	}
	padded := (bits + 15) / 16 * 16
	var plan []sum16Part
	at := 0
	for _, part := range parts {
		if part.leaf == nil || part.width <= 0 || part.width > 64 {
			return nil
		}
		at += part.width
		shift := uint((padded - at) % 16)
		plan = append(plan, sum16Part{l: *part.leaf, mask: ones(part.width), shift: shift, fold: part.width+int(shift) > 48})
	}
	return plan
}

// csum16 is the Internet checksum (RFC 1071) of b, an odd last byte
// padded with zero.
func csum16(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

func xor16(b []byte) uint16 {
	var x uint16
	for i := 0; i+1 < len(b); i += 2 {
		x ^= uint16(b[i])<<8 | uint16(b[i+1])
	}
	if len(b)%2 == 1 {
		x ^= uint16(b[len(b)-1]) << 8
	}
	return x
}

// identity is the input's first 8 bytes as a big-endian number.
func identity(b []byte) uint64 {
	var v uint64
	for _, c := range b[:min(len(b), 8)] {
		v = v<<8 | uint64(c)
	}
	return v
}

func (c *compiler) compileCalculation(bc *bmjson.Calculation) (*calculation, error) {
	algo, ok := algorithms[bc.Algo]
	if !ok {
		return nil, fmt.Errorf("calculations %q: algorithm %q is not handled by this target", bc.Name, bc.Algo)
	}
	calc := &calculation{name: bc.Name, algo: algo}
	for i, in := range bc.Input {
		switch in.Type {
		case "field":
			if wr, wide := c.wideOperand(&in); wide {
				for i, slot := range wr.slots {
					calc.parts = append(calc.parts, calcPart{eval: func(p *packet) int64 { return int64(p.f[slot]) }, leaf: &leaf{slot: slot, mask: ^uint64(0)}, width: wr.widths[i]})
					calc.bits += wr.widths[i]
				}
				continue
			}
			e, w, err := c.widthOf(in)
			if err != nil {
				return nil, fmt.Errorf("calculations %q: input %d: %w", bc.Name, i, err)
			}
			calc.parts = append(calc.parts, calcPart{eval: e.eval, leaf: e.leaf, width: w})
			calc.bits += w
		case "header":
			name, err := in.String()
			if err != nil {
				return nil, err
			}
			hi, err := c.l.header(name)
			if err != nil {
				return nil, fmt.Errorf("calculations %q: input %d: %w", bc.Name, i, err)
			}
			h := c.l.headers[hi]
			for j, f := range h.typ.fields {
				slot := h.base + j
				calc.parts = append(calc.parts, calcPart{eval: func(p *packet) int64 { return int64(p.f[slot]) }, leaf: &leaf{slot: slot, mask: ^uint64(0)}, width: f.width})
				calc.bits += f.width
			}
		default:
			return nil, fmt.Errorf("calculations %q: input %d of type %q is not handled by this target", bc.Name, i, in.Type)
		}
	}
	if bc.Algo == "csum16" {
		calc.sum16 = sum16Plan(calc.parts, calc.bits)
	}
	return calc, nil
}

// checksum is a verify_checksum or update_checksum over a calculation.
type checksum struct {
	name    string
	slot    int
	width   int
	cond    func(p *packet) int64
	compute func(p *packet) uint64
}

func (c *compiler) compileChecksum(bc *bmjson.Checksum) (*checksum, error) {
	where := fmt.Sprintf("checksums %q", bc.Name)
	if s := bc.Source.String(); s != "" {
		where += " at " + s
	}
	if bc.Type != "generic" && bc.Type != "ipv4" {
		return nil, fmt.Errorf("%s: type %q is not handled by this target", where, bc.Type)
	}
	if len(bc.Target) != 2 {
		return nil, fmt.Errorf("%s: target: want [header, field]", where)
	}
	slot, _, f, err := c.l.field(bc.Target[0], bc.Target[1])
	if err != nil || f == nil {
		return nil, fmt.Errorf("%s: target: %v", where, err)
	}
	calc := c.sw.calcs[bc.Calculation]
	if calc == nil {
		return nil, fmt.Errorf("%s: unknown calculation %q", where, bc.Calculation)
	}
	ck := &checksum{name: bc.Name, slot: slot, width: f.width}
	mask := uint64(1)<<uint(f.width) - 1
	if f.width == 64 {
		mask = ^uint64(0)
	}
	ck.compute = func(p *packet) uint64 { return calc.compute(p) & mask }
	if bc.IfCond != nil {
		e, err := c.compileValue(bc.IfCond)
		if err != nil {
			return nil, fmt.Errorf("%s: if_cond: %w", where, err)
		}
		ck.cond = e.eval
	}
	return ck, nil
}
