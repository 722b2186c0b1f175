package topo

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
)

// The ns-3 RDMA simulator's topology format (the simulator of the HPCC
// paper, SIGCOMM 2019):
//
//	nodes switches links
//	id id id ...                       (the switch node IDs)
//	a b rate delay error_rate          (one line per link)
//
// for example "0 320 100Gbps 1000ns 0.000000". Nodes not listed as switches
// are hosts.

// maxNS3Line bounds one line of a topology file. The switch ID line is the
// long one: MaxNodes IDs of up to seven digits fit.
const maxNS3Line = 8 * MaxNodes

// linkFields names the fields of a link line, in order, for messages.
var linkFields = [...]string{"endpoint a", "endpoint b", "rate", "delay", "error rate"}

// ParseNS3 reads a topology in the ns-3 RDMA simulator's format. filename
// is used in messages and, through its base name, as the topology's name.
// Every error names the file and line, and the field when one is at fault:
//
//	fat.txt:7: link rate "100Gbs": unknown unit "Gbs" (want bps, Kbps, Mbps, Gbps or Tbps)
//	fat.txt:2: switch id 999: out of range 0..375
//
// Blank lines and surrounding whitespace are ignored; anything after the
// declared number of links is an error. The result passes Validate (a
// failure is reported with the file name). Hosts are named "h<ID>" and
// switches "sw<ID>"; the format carries no tiers or groups, so every node
// has Tier 0 and Group -1. Rates and delays are read by ParseRate and
// ParseDelay. A non-zero error rate is refused at its line, since the
// simulator does not model corruption.
func ParseNS3(r io.Reader, filename string) (*Topology, error) {
	if filename == "" {
		filename = "topology"
	}
	p := &ns3Parser{file: filename}
	t, err := p.parse(r)
	if err != nil {
		return nil, err
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", filename, err)
	}
	return t, nil
}

type ns3Parser struct {
	file string
	line int // number of the line being read, from 1
}

// errorf formats an error at the current line.
func (p *ns3Parser) errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", p.file, p.line, fmt.Sprintf(format, args...))
}

func (p *ns3Parser) parse(r io.Reader) (*Topology, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxNS3Line)
	// next returns the fields of the next non-blank line, or nil at the end.
	next := func() ([]string, error) {
		for sc.Scan() {
			p.line++
			if f := strings.Fields(sc.Text()); len(f) > 0 {
				return f, nil
			}
		}
		if err := sc.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				p.line++
				return nil, p.errorf("line longer than %d bytes", maxNS3Line)
			}
			return nil, p.errorf("read error: %v", err)
		}
		return nil, nil
	}

	f, err := next()
	if err != nil {
		return nil, err
	}
	if f == nil {
		return nil, fmt.Errorf("%s: empty file: want a header line \"nodes switches links\"", p.file)
	}
	if len(f) != 3 {
		return nil, p.errorf("header: want 3 fields \"nodes switches links\", got %d", len(f))
	}
	nodes, err := p.count("node count", f[0], 1, MaxNodes)
	if err != nil {
		return nil, err
	}
	switches, err := p.count("switch count", f[1], 1, nodes)
	if err != nil {
		return nil, err
	}
	links, err := p.count("link count", f[2], 0, MaxLinks)
	if err != nil {
		return nil, err
	}

	t := &Topology{
		Name:  filepath.Base(p.file),
		Nodes: make([]Node, nodes),
		Links: make([]Link, 0, min(links, 1<<16)),
	}
	for i := range t.Nodes {
		t.Nodes[i] = Node{ID: i, Kind: Host, Group: -1}
	}

	f, err = next()
	if err != nil {
		return nil, err
	}
	if f == nil {
		return nil, p.errorf("end of file: missing the line of %d switch ids", switches)
	}
	if len(f) != switches {
		return nil, p.errorf("switch ids: got %d, header says %d", len(f), switches)
	}
	for _, s := range f {
		id, err := p.nodeID("switch id", s, nodes)
		if err != nil {
			return nil, err
		}
		if t.Nodes[id].Kind == Switch {
			return nil, p.errorf("switch id %d: listed twice", id)
		}
		t.Nodes[id].Kind = Switch
	}
	for i := range t.Nodes {
		if t.Nodes[i].Kind == Switch {
			t.Nodes[i].Name = "sw" + strconv.Itoa(i)
		} else {
			t.Nodes[i].Name = "h" + strconv.Itoa(i)
		}
	}

	hostLine := make([]int, nodes) // line of each host's link, 0 for none yet
	for {
		f, err = next()
		if err != nil {
			return nil, err
		}
		if f == nil {
			break
		}
		if len(t.Links) == links {
			return nil, p.errorf("extra content %q after the %d links the header declares", strings.Join(f, " "), links)
		}
		l, err := p.link(f, nodes)
		if err != nil {
			return nil, err
		}
		ka, kb := t.Nodes[l.A].Kind, t.Nodes[l.B].Kind
		if ka == Host && kb == Host {
			return nil, p.errorf("link %d-%d joins two hosts: hosts attach to switches", l.A, l.B)
		}
		for _, end := range [2]int{l.A, l.B} {
			if t.Nodes[end].Kind != Host {
				continue
			}
			if prev := hostLine[end]; prev != 0 {
				return nil, p.errorf("host %d has a second link (the first is on line %d): hosts have one NIC", end, prev)
			}
			hostLine[end] = p.line
		}
		t.Links = append(t.Links, l)
	}
	if len(t.Links) != links {
		return nil, p.errorf("end of file after %d links, header says %d", len(t.Links), links)
	}
	return t, nil
}

// count parses a header count in lo..hi.
func (p *ns3Parser) count(field, s string, lo, hi int) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, p.errorf("%s %q: not an integer", field, s)
	}
	if v < lo || v > hi {
		return 0, p.errorf("%s %d: out of range %d..%d", field, v, lo, hi)
	}
	return v, nil
}

// nodeID parses a node ID in 0..nodes-1.
func (p *ns3Parser) nodeID(field, s string, nodes int) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, p.errorf("%s %q: not an integer", field, s)
	}
	if v < 0 || v >= nodes {
		return 0, p.errorf("%s %d: out of range 0..%d", field, v, nodes-1)
	}
	return v, nil
}

// link parses the fields of one link line.
func (p *ns3Parser) link(f []string, nodes int) (Link, error) {
	if len(f) < len(linkFields) {
		return Link{}, p.errorf("link: missing %s (want \"a b rate delay error_rate\")", linkFields[len(f)])
	}
	if len(f) > len(linkFields) {
		return Link{}, p.errorf("link: extra content %q after the error rate", strings.Join(f[len(linkFields):], " "))
	}
	var l Link
	var err error
	if l.A, err = p.nodeID("link endpoint a", f[0], nodes); err != nil {
		return Link{}, err
	}
	if l.B, err = p.nodeID("link endpoint b", f[1], nodes); err != nil {
		return Link{}, err
	}
	if l.A == l.B {
		return Link{}, p.errorf("link %d-%d joins a node to itself", l.A, l.B)
	}
	if l.Rate, err = parseRate(f[2]); err != nil {
		return Link{}, p.errorf("link rate %q: %v", f[2], err)
	}
	if l.Delay, err = parseDelay(f[3]); err != nil {
		return Link{}, p.errorf("link delay %q: %v", f[3], err)
	}
	if l.ErrorRate, err = strconv.ParseFloat(f[4], 64); err != nil {
		return Link{}, p.errorf("link error rate %q: not a number", f[4])
	}
	if l.ErrorRate != 0 {
		return Link{}, p.errorf("link error rate %q: packet corruption is not modelled, use 0", f[4])
	}
	l.ErrorRate = 0 // "-0" too
	return l, nil
}

// WriteNS3 writes the topology in the ns-3 RDMA simulator's format, which
// ParseNS3 reads back to the same nodes' kinds and the same links: rates
// as FormatRate writes them ("100Gbps"), delays as FormatDelay does
// ("1000ns", or "ps" when not a whole number of nanoseconds) and the error
// rate as "0.000000", like the published files. The topology must pass
// Validate, which also makes every node ID its index as the format needs,
// and have at least one switch.
func (t *Topology) WriteNS3(w io.Writer) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("topo: WriteNS3 %q: %w", t.Name, err)
	}
	sw := t.Switches()
	if len(sw) == 0 {
		return fmt.Errorf("topo: WriteNS3 %q: no switch; the format needs at least one", t.Name)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%d %d %d\n", len(t.Nodes), len(sw), len(t.Links))
	for i, id := range sw {
		if i > 0 {
			bw.WriteByte(' ')
		}
		bw.WriteString(strconv.Itoa(id))
	}
	bw.WriteByte('\n')
	for _, l := range t.Links {
		fmt.Fprintf(bw, "%d %d %s %s %s\n", l.A, l.B, FormatRate(l.Rate), FormatDelay(l.Delay),
			strconv.FormatFloat(l.ErrorRate, 'f', 6, 64))
	}
	return bw.Flush()
}
