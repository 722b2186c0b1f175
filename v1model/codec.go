package v1model

import endian "encoding/binary"

// codec reads and writes a header's fields a 64-bit word at a time: the
// fields are cut into words that start and end on byte boundaries, each
// at most 64 bits, so that extracting is one big-endian load per word
// and a shift and a mask per field, and deparsing an or per field and
// one store per word. Both touch up to 7 bytes past the header (span):
// packet buffers have the room, and the callers check it.
type codec struct {
	words  []codecWord
	fields []codecField // by field index
	span   int          // bytes from the header's start the words' loads and stores touch
	// gen, when built in for this layout (gen.go), is extract and pack
	// as generated code, every offset, shift and mask a constant.
	gen *genCodec
	key string // genKey's, once computed
}

type codecWord struct {
	at          int // byte offset in the header
	first, last int // fields first to last-1
}

type codecField struct {
	shift  uint   // 64 minus the field's end, in bits from the word's start
	mask   uint64 // ones(width)
	width  int
	signed bool
}

// newCodec is t's codec, or nil when t is not a whole number of bytes or
// some run of its fields crosses 64 bits without a byte boundary.
func newCodec(t *headerType) *codec {
	if t.bits%8 != 0 || len(t.fields) == 0 {
		return nil
	}
	c := &codec{fields: make([]codecField, len(t.fields))}
	for first := 0; first < len(t.fields); {
		start := t.fields[first].offset // on a byte boundary
		last := -1                      // one past the last field that ends a byte, within 64 bits
		for i := first; i < len(t.fields); i++ {
			end := t.fields[i].offset + t.fields[i].width
			if end-start > 64 {
				break
			}
			if end%8 == 0 {
				last = i + 1
			}
		}
		if last < 0 {
			return nil
		}
		for i := first; i < last; i++ {
			f := t.fields[i]
			c.fields[i] = codecField{shift: uint(64 - (f.offset + f.width - start)), mask: ones(f.width), width: f.width, signed: f.signed}
		}
		c.words = append(c.words, codecWord{at: start / 8, first: first, last: last})
		c.span = start/8 + 8
		first = last
	}
	return c
}

// extract reads the fields from b, which holds at least span bytes.
func (c *codec) extract(b []byte, vals []uint64) {
	if c.gen != nil {
		c.gen.extract(b, vals)
		return
	}
	b = b[:c.span]
	for _, w := range c.words {
		x := endian.BigEndian.Uint64(b[w.at:])
		for i := w.first; i < w.last; i++ {
			f := &c.fields[i]
			v := x >> f.shift & f.mask
			if f.signed {
				v = wrap(int64(v), f.width, true)
			}
			vals[i] = v
		}
	}
}

// pack writes the fields into b, which holds at least span bytes: the
// header's bytes, and zeros past them up to span.
func (c *codec) pack(b []byte, vals []uint64) {
	if c.gen != nil {
		c.gen.pack(b, vals)
		return
	}
	b = b[:c.span]
	for _, w := range c.words {
		var x uint64
		for i := w.first; i < w.last; i++ {
			f := &c.fields[i]
			x |= (vals[i] & f.mask) << f.shift
		}
		endian.BigEndian.PutUint64(b[w.at:], x)
	}
}
