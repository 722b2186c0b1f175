package bmjson

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeErrorsSayWhere(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"{\n \"header_types\": [\n  {\"name\": 1}\n ]\n}", "line 3, column 13"},
		{"{\n \"actions\": [\n", "line 3: the JSON ends before it is complete"},
		{"{\"__meta__\": {\"version\": [2, 0]}}\n x", "line 2, column 3: invalid character 'x' after top-level value"},
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

// TestScanValueMatchesEncodingJSON: the one-pass reading of a value
// object gives encoding/json's result, or leaves it to encoding/json,
// on every value of every program the project compiles and on the
// shapes p4c does not write.
func TestScanValueMatchesEncodingJSON(t *testing.T) {
	for _, tc := range []struct {
		in   string
		fast bool // read in one pass (else left to encoding/json)
	}{
		{`{}`, true},
		{`{"type": "hexstr", "value": "0x01"}`, true},
		{`{"value":5,"type":"x"}`, true},
		{`{"type":"x","value":-1.5e3}`, true},
		{`{"type":"x","value":true}`, true},
		{`{"type":"x","value":null}`, true},
		{`{"type":null,"value":"1"}`, true},
		{"{\n  \"type\" : \"field\",\n  \"value\" : [\"h\", \"f\"]\n}", true},
		{`{"type":"x","mask":"0xff","value":"1"}`, true},
		{`{"type":"expression","value":{"op":"}","left":null,"right":{"type":"hexstr","value":"0x\"}"}}}`, true},
		{`{"type":"x","type":"y"}`, true},
		{`{"type":"a\"b"}`, false},
		{`{"Type":"x"}`, false},
		{`{"type":"x","other":1}`, false},
		{`{"type":1}`, false},
	} {
		var slow Value
		slowErr := slow.unmarshalSlow([]byte(tc.in))
		fast, ok := scanValue([]byte(tc.in))
		if ok != tc.fast {
			t.Errorf("%s: read in one pass %v, want %v", tc.in, ok, tc.fast)
		}
		if ok && (slowErr != nil || !reflect.DeepEqual(fast, slow)) {
			t.Errorf("%s: one pass %+v, encoding/json %+v (%v)", tc.in, fast, slow, slowErr)
		}
	}
	files, err := filepath.Glob("../../p4/build/*.json")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("../../p4/testdata/build/*.json")
	files = append(files, more...)
	if len(files) < 2 {
		t.Fatalf("programs found: %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fast, err := Decode(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		slowValues = true
		slow, err := Decode(data)
		slowValues = false
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Errorf("%s: the document differs read in one pass and by encoding/json", f)
		}
	}
}

// TestStringsMatchesEncodingJSON holds the one-pass reading of a field
// reference to encoding/json's: the same list wherever it reads one, and
// everything it does not read (escapes, non-ASCII, other values, bad
// JSON) left to encoding/json.
func TestStringsMatchesEncodingJSON(t *testing.T) {
	for _, tc := range []struct {
		in   string
		fast bool
	}{
		{`["ipv4", "dst_addr"]`, true},
		{` [ "a" ,"b",  "c" ] `, true},
		{"[\n\"scalars\",\n\"tmp_0\"\n]", true},
		{`[]`, true},
		{` [ ] `, true},
		{`[""]`, true},
		{`["a b"]`, true},
		{`["a\"b"]`, false},
		{`["a\u0041"]`, false},
		{"[\"caf\xc3\xa9\"]", false},
		{"[\"bad\xff\"]", false},
		{"[\"tab\there\"]", false},
		{`null`, false},
		{`["a", 1]`, false},
		{`["a",]`, false},
		{`["a" "b"]`, false},
		{`["a"`, false},
		{`["a"] x`, false},
		{`"a"`, false},
		{`[["a"]]`, false},
		{``, false},
	} {
		fast, ok := plainStrings([]byte(tc.in))
		if ok != tc.fast {
			t.Errorf("%q: read in one pass %v, want %v", tc.in, ok, tc.fast)
		}
		var slow []string
		slowErr := json.Unmarshal([]byte(tc.in), &slow)
		if ok && (slowErr != nil || !reflect.DeepEqual(fast, slow)) {
			t.Errorf("%q: one pass %#v, encoding/json %#v (%v)", tc.in, fast, slow, slowErr)
		}
		got, err := Value{Value: json.RawMessage(tc.in)}.Strings()
		if (err != nil) != (slowErr != nil) || err == nil && !reflect.DeepEqual(got, slow) {
			t.Errorf("%q: Strings %#v (%v), encoding/json %#v (%v)", tc.in, got, err, slow, slowErr)
		}
	}
}

// FuzzStrings: wherever the one-pass reading takes an input, encoding/json
// reads the same list from it.
func FuzzStrings(f *testing.F) {
	for _, s := range []string{`["a","b"]`, `[]`, ` [ "x" ] `, `["a\"b"]`, `[1]`, "[\"\xff\"]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := plainStrings(b)
		if !ok {
			return
		}
		var slow []string
		if err := json.Unmarshal(b, &slow); err != nil || !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: one pass %#v, encoding/json %#v (%v)", b, fast, slow, err)
		}
	})
}
