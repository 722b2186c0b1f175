package bmjson

import (
	"strings"
	"testing"
)

func TestDecodeErrorsSayWhere(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"{\n \"header_types\": [\n  {\"name\": 1}\n ]\n}", "line 3, column 13"},
		{"{\n \"actions\": [\n", "line 3: the JSON ends before it is complete"},
		{`{"__meta__": {"version": [1, 0]}}`, "format 2.x"},
		{`{}`, "__meta__.version missing"},
	} {
		_, err := Decode([]byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.doc, err, c.want)
		}
	}
}

func TestParseNumber(t *testing.T) {
	for s, want := range map[string]int64{"0x0800": 0x800, "-0x1": -1, "17": 17, "0x000000000000000000ff": 0xff, "0xffffffffffffffff": -1} {
		got, err := ParseNumber(s)
		if err != nil || got != want {
			t.Errorf("%s: %d, %v; want %d", s, got, err, want)
		}
	}
	if _, err := ParseNumber("0x1ffffffffffffffff"); err == nil {
		t.Error("a 65-bit number: no error")
	}
}
