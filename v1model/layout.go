package v1model

import (
	"fmt"
	"strings"

	"github.com/p4rcm/p4rcm/v1model/bmjson"
)

// maxWidth is the widest field the target handles: values live in 64-bit
// words. Wider fields (IPv6 addresses) are refused when the JSON loads.
const maxWidth = 64

// fieldInfo is one field of a header type, at a bit offset in the header.
type fieldInfo struct {
	name   string
	width  int
	signed bool
	offset int // bits from the start of the header
}

// headerType is a compiled header type.
type headerType struct {
	name   string
	fields []fieldInfo
	bits   int
	index  map[string]int
	wide   map[string]wideInfo // fields over 64 bits, by name
	codec  *codec              // nil for a type the parser and deparser take field by field
}

// wideInfo is a field over 64 bits: the indices of its parts.
type wideInfo struct {
	width int
	parts []int
}

// bytes is the header's length on the wire.
func (t *headerType) bytes() int { return (t.bits + 7) / 8 }

// headerInfo is one header instance and where its fields live in a packet.
type headerInfo struct {
	name     string
	id       int
	typ      *headerType
	base     int // slot of its first field in packet.f
	metadata bool
	union    int // index into layout.unions, or -1
}

// stackInfo is a header stack: its elements are header instances.
type stackInfo struct {
	name    string
	id      int
	typ     *headerType
	headers []int // header indices, element 0 first
}

// unionInfo is a header union instance.
type unionInfo struct {
	name    string
	headers []int
}

// layout places every field of every header in one flat array per
// packet, so that a packet's state is a few slices allocated once.
type layout struct {
	types   map[string]*headerType
	headers []*headerInfo
	byName  map[string]int
	stacks  []*stackInfo
	stackBy map[string]int
	unions  []*unionInfo
	unionBy map[string]int
	slots   int
	width   []int // by slot
	aliases map[string][2]string
	// standard_metadata slots, -1 when the program lacks the field.
	std stdSlots
}

// stdSlots are the slots of v1model's standard_metadata fields.
type stdSlots struct {
	ingressPort, egressSpec, egressPort, instanceType, packetLength int
	enqTimestamp, enqQdepth, deqTimedelta, deqQdepth                int
	ingressTimestamp, egressTimestamp, mcastGrp, egressRID, qid     int
	checksumError, parserError, priority                            int
	header                                                          int
}

func newLayout(doc *bmjson.Document) (*layout, error) {
	l := &layout{
		types:   map[string]*headerType{},
		byName:  map[string]int{},
		stackBy: map[string]int{},
		unionBy: map[string]int{},
		aliases: map[string][2]string{},
	}
	for i := range doc.HeaderTypes {
		ht := &doc.HeaderTypes[i]
		fields, err := ht.DecodeFields()
		if err != nil {
			return nil, err
		}
		t := &headerType{name: ht.Name, index: map[string]int{}, wide: map[string]wideInfo{}}
		for _, f := range fields {
			if f.Variable {
				return nil, fmt.Errorf("header_types %q: field %q is variable-length (varbit), which this target does not handle yet", ht.Name, f.Name)
			}
			if f.Width <= 0 {
				return nil, fmt.Errorf("header_types %q: field %q: width %d", ht.Name, f.Name, f.Width)
			}
			if f.Width > maxWidth {
				// A wide field (an IPv6 address) lives in 64-bit parts,
				// the most significant first; extraction, deparsing,
				// hashes and field lists see the parts, expressions the
				// whole (wide.go).
				if f.Signed {
					return nil, fmt.Errorf("header_types %q: field %q is a %d-bit int; this target handles signed fields of up to %d bits", ht.Name, f.Name, f.Width, maxWidth)
				}
				w := wideInfo{width: f.Width}
				for rest, i := f.Width, 0; rest > 0; i++ {
					pw := rest - (rest-1)/maxWidth*maxWidth
					w.parts = append(w.parts, len(t.fields))
					t.fields = append(t.fields, fieldInfo{name: fmt.Sprintf("%s$%d", f.Name, i), width: pw, offset: t.bits})
					t.bits += pw
					rest -= pw
				}
				t.wide[f.Name] = w
				continue
			}
			t.index[f.Name] = len(t.fields)
			t.fields = append(t.fields, fieldInfo{name: f.Name, width: f.Width, signed: f.Signed, offset: t.bits})
			t.bits += f.Width
		}
		t.codec = newCodec(t)
		l.types[t.name] = t
	}
	for _, h := range doc.Headers {
		t := l.types[h.HeaderType]
		if t == nil {
			return nil, fmt.Errorf("headers %q: unknown header type %q", h.Name, h.HeaderType)
		}
		if !h.Metadata && t.bits%8 != 0 {
			return nil, fmt.Errorf("headers %q: header type %q is %d bits, not a whole number of bytes", h.Name, t.name, t.bits)
		}
		if _, dup := l.byName[h.Name]; dup {
			return nil, fmt.Errorf("headers %q: defined twice", h.Name)
		}
		l.byName[h.Name] = len(l.headers)
		l.headers = append(l.headers, &headerInfo{name: h.Name, id: h.ID, typ: t, base: l.slots, metadata: h.Metadata, union: -1})
		l.slots += len(t.fields)
		for _, f := range t.fields {
			l.width = append(l.width, f.width)
		}
	}
	byID := map[int]int{}
	for i, h := range l.headers {
		byID[h.id] = i
	}
	for _, s := range doc.HeaderStacks {
		st := &stackInfo{name: s.Name, id: s.ID, typ: l.types[s.HeaderType]}
		for _, id := range s.HeaderIDs {
			hi, ok := byID[id]
			if !ok {
				return nil, fmt.Errorf("header_stacks %q: unknown header id %d", s.Name, id)
			}
			st.headers = append(st.headers, hi)
		}
		l.stackBy[s.Name] = len(l.stacks)
		l.stacks = append(l.stacks, st)
	}
	if len(doc.HeaderUnionStacks) > 0 {
		return nil, fmt.Errorf("header_union_stacks %q: stacks of header unions are not handled by this target yet", doc.HeaderUnionStacks[0].Name)
	}
	for _, u := range doc.HeaderUnions {
		ui := &unionInfo{name: u.Name}
		for _, id := range u.HeaderIDs {
			hi, ok := byID[id]
			if !ok {
				return nil, fmt.Errorf("header_unions %q: unknown header id %d", u.Name, id)
			}
			l.headers[hi].union = len(l.unions)
			ui.headers = append(ui.headers, hi)
		}
		l.unionBy[u.Name] = len(l.unions)
		l.unions = append(l.unions, ui)
	}
	for _, a := range doc.FieldAliases {
		var name string
		var target []string
		if err := jsonUnmarshal(a[0], &name); err != nil {
			return nil, fmt.Errorf("field_aliases: %v", err)
		}
		if err := jsonUnmarshal(a[1], &target); err != nil || len(target) != 2 {
			return nil, fmt.Errorf("field_aliases %q: want [header, field]", name)
		}
		l.aliases[name] = [2]string{target[0], target[1]}
	}
	l.std = l.standardSlots()
	return l, nil
}

// field returns the slot of header.field and its description; the
// special field "$valid$" returns slot -1.
func (l *layout) field(hdr, name string) (slot int, h *headerInfo, f *fieldInfo, err error) {
	if a, ok := l.aliases[hdr+"."+name]; ok {
		hdr, name = a[0], a[1]
	}
	hi, ok := l.byName[hdr]
	if !ok {
		return 0, nil, nil, fmt.Errorf("unknown header %q", hdr)
	}
	h = l.headers[hi]
	if name == "$valid$" {
		return -1, h, nil, nil
	}
	fi, ok := h.typ.index[name]
	if !ok {
		if w, wide := h.typ.wide[name]; wide {
			return 0, nil, nil, fmt.Errorf("field %s.%s is %d bits: this target takes fields over 64 bits in assignments, == and !=, table keys, hashes and field lists only", hdr, name, w.width)
		}
		return 0, nil, nil, fmt.Errorf("header %q has no field %q", hdr, name)
	}
	return h.base + fi, h, &h.typ.fields[fi], nil
}

// wideRef is a wide field of a header instance: the slots of its parts,
// the most significant first.
type wideRef struct {
	width  int
	slots  []int
	widths []int
}

// wideField returns header.field if it is a wide field.
func (l *layout) wideField(hdr, name string) (*wideRef, bool) {
	if a, ok := l.aliases[hdr+"."+name]; ok {
		hdr, name = a[0], a[1]
	}
	hi, ok := l.byName[hdr]
	if !ok {
		return nil, false
	}
	h := l.headers[hi]
	w, ok := h.typ.wide[name]
	if !ok {
		return nil, false
	}
	r := &wideRef{width: w.width}
	for _, fi := range w.parts {
		r.slots = append(r.slots, h.base+fi)
		r.widths = append(r.widths, h.typ.fields[fi].width)
	}
	return r, true
}

// markValid marks header hi valid, and the other members of its union
// invalid.
func (l *layout) markValid(p *packet, hi int) {
	if u := l.headers[hi].union; u >= 0 {
		for _, o := range l.unions[u].headers {
			p.valid[o] = false
		}
	}
	p.valid[hi] = true
}

// header returns a header instance's index by name.
func (l *layout) header(name string) (int, error) {
	hi, ok := l.byName[name]
	if !ok {
		return 0, fmt.Errorf("unknown header %q", name)
	}
	return hi, nil
}

func (l *layout) standardSlots() stdSlots {
	get := func(names ...string) int {
		for _, n := range names {
			parts := strings.SplitN(n, ".", 2)
			if slot, _, _, err := l.field(parts[0], parts[1]); err == nil {
				return slot
			}
		}
		return -1
	}
	s := stdSlots{
		ingressPort:      get("standard_metadata.ingress_port"),
		egressSpec:       get("standard_metadata.egress_spec"),
		egressPort:       get("standard_metadata.egress_port"),
		instanceType:     get("standard_metadata.instance_type"),
		packetLength:     get("standard_metadata.packet_length"),
		enqTimestamp:     get("queueing_metadata.enq_timestamp", "standard_metadata.enq_timestamp"),
		enqQdepth:        get("queueing_metadata.enq_qdepth", "standard_metadata.enq_qdepth"),
		deqTimedelta:     get("queueing_metadata.deq_timedelta", "standard_metadata.deq_timedelta"),
		deqQdepth:        get("queueing_metadata.deq_qdepth", "standard_metadata.deq_qdepth"),
		qid:              get("queueing_metadata.qid", "standard_metadata.qid"),
		ingressTimestamp: get("intrinsic_metadata.ingress_global_timestamp", "standard_metadata.ingress_global_timestamp"),
		egressTimestamp:  get("intrinsic_metadata.egress_global_timestamp", "standard_metadata.egress_global_timestamp"),
		mcastGrp:         get("intrinsic_metadata.mcast_grp", "standard_metadata.mcast_grp"),
		egressRID:        get("intrinsic_metadata.egress_rid", "standard_metadata.egress_rid"),
		checksumError:    get("standard_metadata.checksum_error"),
		parserError:      get("standard_metadata.parser_error"),
		priority:         get("intrinsic_metadata.priority", "standard_metadata.priority"),
		header:           -1,
	}
	if hi, ok := l.byName["standard_metadata"]; ok {
		s.header = hi
	}
	return s
}
