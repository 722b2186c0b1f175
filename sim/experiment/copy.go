package experiment

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/p4rcm/p4rcm/sim/scenario"
	"go.yaml.in/yaml/v3"
)

// A Scenario keeps the YAML tree it was read from, and Set edits that tree
// in place, so two runs cannot share one Scenario. Its tree is not
// exported, so each run re-reads the scenario from a canonical document
// made from its exported fields: the values the caller loaded and
// overrode, written so that Parse reads them back exactly.

// Types whose YAML text carries a unit and cannot be written as a plain
// number.
var (
	sizeType     = reflect.TypeFor[scenario.Size]()
	rateType     = reflect.TypeFor[scenario.Rate]()
	fractionType = reflect.TypeFor[scenario.Fraction]()
	marshaler    = reflect.TypeFor[yaml.Marshaler]()
)

// scenarioTemplate is a scenario ready to be copied once per run: its canonical
// document and where its relative file names point.
type scenarioTemplate struct {
	doc  []byte
	file string
	dir  string
}

// newTemplate writes s as a canonical document and checks that the
// document reads back into the same values, so that a copy is never
// silently different from what the caller loaded (say, after a new field
// of a type this file does not know is added to scenario.Scenario).
func newTemplate(s *scenario.Scenario, dir string) (*scenarioTemplate, error) {
	doc, err := canonical(s)
	if err != nil {
		return nil, err
	}
	if dir == "" {
		dir = scenarioDir(s.File())
	}
	t := &scenarioTemplate{doc: doc, file: s.File(), dir: dir}
	c, err := t.scenario()
	if err != nil {
		return nil, fmt.Errorf("experiment: the scenario does not read back from its canonical form: %w", err)
	}
	again, err := canonical(c)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(doc, again) {
		return nil, fmt.Errorf("experiment: the scenario %s does not read back from its canonical form unchanged", s.File())
	}
	return t, nil
}

// scenario makes a fresh, independent Scenario from the template.
func (t *scenarioTemplate) scenario() (*scenario.Scenario, error) {
	return scenario.Parse(t.doc, t.file, t.dir)
}

// scenarioDir guesses the directory a scenario's relative file names are
// anchored at from the name it was loaded under: none for a built-in
// preset ("preset NAME"), else the file's directory.
func scenarioDir(file string) string {
	if file == "" || strings.HasPrefix(file, "preset ") {
		return ""
	}
	return filepath.Dir(file)
}

// canonical writes the exported fields of s as YAML, leaving out zero
// values that the file would leave out too.
func canonical(s *scenario.Scenario) ([]byte, error) {
	n, err := encodeValue(reflect.ValueOf(s).Elem(), "")
	if err != nil {
		return nil, err
	}
	if n == nil {
		n = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	return yaml.Marshal(n)
}

// encodeValue turns v into a YAML node; nil means "leave it out" (a nil
// pointer, slice, map or interface).
func encodeValue(v reflect.Value, path string) (*yaml.Node, error) {
	t := v.Type()
	switch t {
	case sizeType:
		return scalar("", strconv.FormatFloat(v.Float(), 'f', -1, 64)), nil
	case rateType:
		return scalar("", strconv.FormatFloat(v.Float(), 'f', -1, 64)+"bps"), nil
	case fractionType:
		return floatScalar(v.Float()), nil
	}
	if t.Implements(marshaler) && v.Kind() != reflect.Pointer && v.Kind() != reflect.Interface {
		x, err := v.Interface().(yaml.Marshaler).MarshalYAML()
		if err != nil {
			return nil, fmt.Errorf("experiment: copying the scenario: %s: %w", path, err)
		}
		var n yaml.Node
		if err := n.Encode(x); err != nil {
			return nil, fmt.Errorf("experiment: copying the scenario: %s: %w", path, err)
		}
		return &n, nil
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil, nil
		}
		return encodeValue(v.Elem(), path)
	case reflect.String:
		return scalar("!!str", v.String()), nil
	case reflect.Bool:
		return scalar("", strconv.FormatBool(v.Bool())), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return scalar("", strconv.FormatInt(v.Int(), 10)), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return scalar("", strconv.FormatUint(v.Uint(), 10)), nil
	case reflect.Float32, reflect.Float64:
		return floatScalar(v.Float()), nil
	case reflect.Slice:
		if v.IsNil() {
			return nil, nil
		}
		fallthrough
	case reflect.Array:
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for i := range v.Len() {
			e, err := encodeValue(v.Index(i), path+"."+strconv.Itoa(i))
			if err != nil {
				return nil, err
			}
			if e == nil {
				e = scalar("!!null", "null")
			}
			seq.Content = append(seq.Content, e)
		}
		return seq, nil
	case reflect.Map:
		if v.IsNil() {
			return nil, nil
		}
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("experiment: copying the scenario: %s: maps keyed by %s are not supported", path, t.Key())
		}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, k := range keys {
			e, err := encodeValue(v.MapIndex(k), join(path, k.String()))
			if err != nil {
				return nil, err
			}
			if e != nil {
				m.Content = append(m.Content, scalar("!!str", k.String()), e)
			}
		}
		return m, nil
	case reflect.Struct:
		m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "-" {
				continue
			}
			if opts != "" && opts != "omitempty" && opts != "flow" {
				return nil, fmt.Errorf("experiment: copying the scenario: %s: yaml option %q is not supported", join(path, f.Name), opts)
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			fv := v.Field(i)
			// A zero value reads back the same when left out. For
			// pointers, slices and maps zero is nil: a pointer to zero
			// or an empty list is kept.
			if fv.IsZero() {
				continue
			}
			e, err := encodeValue(fv, join(path, name))
			if err != nil {
				return nil, err
			}
			if e != nil {
				m.Content = append(m.Content, scalar("!!str", name), e)
			}
		}
		return m, nil
	}
	return nil, fmt.Errorf("experiment: copying the scenario: %s: values of type %s are not supported", path, t)
}

// scalar makes a scalar node; an empty tag lets the encoder write the
// value plainly, which the decoder reads back by the field's type.
func scalar(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}

// floatScalar writes a float in the shortest form that reads back exactly.
func floatScalar(x float64) *yaml.Node {
	switch {
	case math.IsNaN(x):
		return scalar("", ".nan")
	case math.IsInf(x, 1):
		return scalar("", ".inf")
	case math.IsInf(x, -1):
		return scalar("", "-.inf")
	}
	return scalar("", strconv.FormatFloat(x, 'g', -1, 64))
}

// join extends a dotted path for messages: "switch" and "ecn" give
// "switch.ecn".
func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}
