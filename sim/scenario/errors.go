package scenario

import (
	"errors"
	"strings"
	"unicode"

	"github.com/p4rcm/p4rcm/sim/topo"
	"github.com/p4rcm/p4rcm/sim/workload"
)

// optionError words a topology builder's or workload generator's option
// error in the scenario's terms: the YAML path of the option, its value as
// the file (or --set) wrote it, and what is wrong, with no Go names.
// section is where the options came from: "topology", "workload",
// "workloads.1". Other errors are placed at section as they are.
func (s *Scenario) optionError(section string, err error) error {
	var option, value, reason string
	var we *workload.OptionError
	var te *topo.OptionError
	switch {
	case errors.As(err, &we):
		option, value, reason = we.Option, we.Value, we.Reason
	case errors.As(err, &te):
		option, value, reason = te.Option, te.Value, te.Reason
	default:
		return s.errorf(section, "%v", err)
	}
	if option == "" {
		return s.errorf(section, "%s", reason)
	}
	path := optionPath(section, option)
	n := s.nodeAt(path)
	if n == nil {
		// Not in the file: the generator's default or the topology's.
		key := path[strings.LastIndex(path, ".")+1:]
		return s.errorf(path[:strings.LastIndex(path, ".")], "%s not given: %s", key, reason)
	}
	if value != "" && n.Value != "" {
		reason = n.Value + ": " + reason // as the user wrote it: "10ms", not picoseconds
	}
	return s.errorf(path, "%s", reason)
}

// optionKeys are the YAML keys of the options not spelt as their names in
// snake case.
var optionKeys = map[string]string{"N": "hosts", "Rate": "host_rate", "HostsPerToR": "hosts_per_tor", "CDF": "cdf"}

// optionPath is the YAML path of an option of section: "Senders[2]" of
// "workload" is "workload.senders.2". A workload's HostRate is the
// topology's host_rate.
func optionPath(section, option string) string {
	name, index, _ := strings.Cut(option, "[")
	if name == "HostRate" && section != "topology" {
		return "topology.host_rate"
	}
	key, ok := optionKeys[name]
	if !ok {
		key = snakeCase(name)
	}
	path := section + "." + key
	if index != "" {
		path += "." + strings.TrimSuffix(index, "]")
	}
	return path
}

// snakeCase spells a Go name the way YAML keys are: "GroupSize" is
// "group_size".
func snakeCase(name string) string {
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
