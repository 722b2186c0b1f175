package v1model

import (
	"bytes"
	"testing"
)

// TestStackIndexValidity runs p4/testdata/stackindex.p4, whose ingress
// picks tags[i] with i the EtherType's low two bits: it reads
// tags[i].v into a local, writes 7 there, and if tags[i] is valid copies
// the local into tags[0]; then makes tags[i] valid. (BMv2 1.15.5 cannot
// load this JSON, so there is no golden file.)
func TestStackIndexValidity(t *testing.T) {
	sw, err := Load("../p4/testdata/build/stackindex.json", Config{})
	if err != nil {
		t.Fatal(err)
	}
	eth := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	for _, c := range []struct {
		name    string
		etype   byte
		in, out []byte // the two tags and a payload byte
	}{
		// i = 1, valid: tags[1].v (0xbb) goes to tags[0]; tags[1] is 7.
		{"valid element", 1, []byte{0xaa, 0xbb, 0xcc}, []byte{0xbb, 0x07, 0xcc}},
		// i = 2, past the two tags extracted: invalid, so tags[0] keeps
		// 0xaa; made valid, tags[2] is emitted, zeroed by setValid.
		{"invalid element", 2, []byte{0xaa, 0xbb, 0xcc}, []byte{0xaa, 0xbb, 0x00, 0xcc}},
	} {
		frame := append(append(append([]byte{}, eth...), 0, c.etype), c.in...)
		var got []byte
		if err := sw.Process(1, frame, func(_ int, f []byte) { got = append([]byte(nil), f...) }); err != nil {
			t.Fatal(err)
		}
		want := append(append(append([]byte{}, eth...), 0, c.etype), c.out...)
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %x\nwant %x", c.name, got, want)
		}
	}
}
