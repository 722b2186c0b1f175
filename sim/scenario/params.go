package scenario

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/p4rcm/p4rcm/dcqcn"
	"github.com/p4rcm/p4rcm/dctcp"
	"github.com/p4rcm/p4rcm/hpcc"
	"github.com/p4rcm/p4rcm/sim/topo"
	"github.com/p4rcm/p4rcm/timely"
)

// Param is one congestion-control parameter a scenario can set: its path
// ("hpcc.eta", for --set hpcc.eta=0.9), its value in the section's default
// parameter set, and the ns-3 RDMA simulator's name for it, where it has
// one.
type Param struct {
	Path    string `json:"path"`
	Default string `json:"default"`
	NS3     string `json:"ns3,omitempty"`
}

// SchemeParams lists the parameters of the dcqcn, hpcc, timely and dctcp
// sections in the order the sections declare them, each with its default
// parameter set's value, then the sending window and where ACKs queue.
func SchemeParams() []Param {
	d, _ := dcqcn.Preset(DefaultDCQCN)
	h, _ := hpcc.Preset(DefaultHPCC)
	t, _ := timely.Preset(DefaultTIMELY)
	c, _ := dctcp.Preset(DefaultDCTCP)
	var ps []Param
	for _, sec := range []struct {
		name     string
		section  any
		defaults any
	}{{"dcqcn", DCQCN{}, d}, {"hpcc", HPCC{}, h}, {"timely", TIMELY{}, t}, {"dctcp", DCTCP{}, c}} {
		st := reflect.TypeOf(sec.section)
		dv := reflect.ValueOf(sec.defaults)
		ps = append(ps, Param{Path: sec.name + ".preset", Default: dv.FieldByName("Name").String()})
		for i := 0; i < st.NumField(); i++ {
			f := st.Field(i)
			key := yamlKey(f)
			if key == "" || key == "preset" {
				continue
			}
			v := dv.FieldByName(f.Name)
			if !v.IsValid() {
				continue
			}
			ps = append(ps, Param{Path: sec.name + "." + key, Default: formatParam(f.Type.Elem(), v), NS3: f.Tag.Get("ns3")})
		}
	}
	win := reflect.TypeOf(Window{})
	for i := 0; i < win.NumField(); i++ {
		f := win.Field(i)
		ps = append(ps, Param{Path: "host.window." + yamlKey(f), Default: "by scheme", NS3: f.Tag.Get("ns3")})
	}
	ack, _ := reflect.TypeOf(Host{}).FieldByName("AckHighPrio")
	ps = append(ps, Param{Path: "host." + yamlKey(ack), Default: "by scheme", NS3: ack.Tag.Get("ns3")})
	sw, _ := reflect.TypeOf(Switch{}).FieldByName("AckInData")
	ps = append(ps, Param{Path: "switch." + yamlKey(sw), Default: "false", NS3: sw.Tag.Get("ns3")})
	return ps
}

func yamlKey(f reflect.StructField) string {
	k, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return k
}

// formatParam writes v, a parameter's value in its package's units, as a
// scenario would write a value of type t.
func formatParam(t reflect.Type, v reflect.Value) string {
	num := func() float64 {
		if v.CanFloat() {
			return v.Float()
		}
		return float64(v.Int())
	}
	switch t {
	case reflect.TypeOf(Rate(0)):
		return topo.FormatRate(num())
	case reflect.TypeOf(Duration(0)):
		ps := int64(num())
		for _, u := range []struct {
			ps   int64
			name string
		}{{1e9, "ms"}, {1e6, "us"}} {
			if ps >= u.ps && ps%u.ps == 0 {
				return strconv.FormatInt(ps/u.ps, 10) + u.name
			}
		}
		return topo.FormatDelay(ps)
	case reflect.TypeOf(Size(0)):
		b := num()
		for _, u := range []struct {
			div  float64
			name string
		}{{1e6, "MB"}, {1e3, "KB"}} {
			if b >= u.div && b == float64(int64(b/u.div))*u.div {
				return strconv.FormatFloat(b/u.div, 'f', -1, 64) + u.name
			}
		}
		return strconv.FormatFloat(b, 'f', -1, 64) + "B"
	}
	switch v.Kind() {
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', 6, 64)
	case reflect.Int, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	}
	return v.String()
}
