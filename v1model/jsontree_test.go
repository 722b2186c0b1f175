package v1model

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/p4rcm/p4rcm/v1model/bmjson"
)

// The one-pass tree decodes every expression of every program the
// project compiles as encoding/json does, level by level: the same
// operators, operand kinds and operand bytes, down to the leaves.
func TestJSONTreeMatchesEncodingJSON(t *testing.T) {
	files, _ := filepath.Glob("../p4/testdata/build/*.json")
	files = append(files, "../p4/build/rcm.json")
	var exprs int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := bmjson.Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, a := range doc.Actions {
			for _, p := range a.Primitives {
				for _, v := range p.Parameters {
					if v.Type == "expression" {
						sameExpression(t, f, v.Value, map[*byte]*jsonNode{}, &exprs)
					}
				}
			}
		}
	}
	if exprs < 2000 {
		t.Fatalf("only %d expressions in %d programs: the test would show little", exprs, len(files))
	}
}

// sameExpression compares the tree's reading of an expression's value
// with encoding/json's, and recurses into its operands.
func sameExpression(t *testing.T, file string, raw json.RawMessage, nodes map[*byte]*jsonNode, count *int) {
	t.Helper()
	*count++
	n, err := jsonTree(raw, nodes)
	if err != nil {
		t.Fatalf("%s: %v in %s", file, err, raw)
	}
	var probe struct {
		Type *string `json:"type"`
		Op   *string `json:"op"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		t.Fatal(err)
	}
	if typed := !n.member("type").isNull() && n.member("op").isNull(); typed != (probe.Type != nil && probe.Op == nil) {
		t.Fatalf("%s: a typed value or an operator? tree %v, encoding/json %v, in %s", file, typed, !typed, raw)
	}
	if probe.Type != nil && probe.Op == nil {
		var want bmjson.Value
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		sameValue(t, file, n.bmValue(), &want, nodes, count)
		return
	}
	var want bmjson.Expr
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	got := n.expression()
	if got.Op != want.Op {
		t.Fatalf("%s: op %q, encoding/json %q", file, got.Op, want.Op)
	}
	sameValue(t, file, got.Left, want.Left, nodes, count)
	sameValue(t, file, got.Right, want.Right, nodes, count)
	sameValue(t, file, got.Cond, want.Cond, nodes, count)
}

func sameValue(t *testing.T, file string, got, want *bmjson.Value, nodes map[*byte]*jsonNode, count *int) {
	t.Helper()
	if (got == nil) != (want == nil) {
		t.Fatalf("%s: operand %v, encoding/json %v", file, got, want)
	}
	if got == nil {
		return
	}
	if got.Type != want.Type || !bytes.Equal(got.Value, want.Value) || !bytes.Equal(got.Mask, want.Mask) {
		t.Fatalf("%s: operand %s %s %s, encoding/json %s %s %s", file, got.Type, got.Value, got.Mask, want.Type, want.Value, want.Mask)
	}
	if got.Type == "expression" {
		sameExpression(t, file, got.Value, nodes, count)
	}
}
