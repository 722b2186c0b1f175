package p4switch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"sync"

	"github.com/spf13/cobra"

	"github.com/p4rcm/p4rcm/internal/groupfile"
)

// readGroup reads and checks a group file: every switch named once, its
// arguments valid, no interface, control socket or P4Runtime address
// given to two of them, every link in memory joining two ports.
func readGroup(path string) ([]string, []options, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, usage("--group: %v", err)
	}
	var g groupfile.File
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&g); err != nil {
		return nil, nil, usage("--group %s: %v (want {\"switches\": [{\"name\": ..., \"args\": [...]}, ...]})", path, err)
	}
	if len(g.Switches) == 0 {
		return nil, nil, usage("--group %s: no switches", path)
	}
	var names []string
	var opts []options
	byName := map[string]bool{}
	owner := map[string]string{} // interface, socket or address: the switch that has it
	claim := func(name, what, v string) error {
		if v == "" {
			return nil
		}
		if other, ok := owner[what+" "+v]; ok {
			return usage("--group %s: switches %s and %s both have %s %s", path, other, name, what, v)
		}
		owner[what+" "+v] = name
		return nil
	}
	mem := map[string][]string{}
	for i, sw := range g.Switches {
		name := sw.Name
		if name == "" {
			return nil, nil, usage("--group %s: switch %d has no name", path, i+1)
		}
		if byName[name] {
			return nil, nil, usage("--group %s: two switches are called %s", path, name)
		}
		byName[name] = true
		var o options
		cmd := command(&o, func(*cobra.Command) error { return nil })
		cmd.SetArgs(sw.Args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		if err := cmd.Execute(); err != nil {
			return nil, nil, fmt.Errorf("--group %s: switch %s: %w", path, name, err)
		}
		attach, err := parseInterfaces(o.ifaces)
		if err != nil {
			return nil, nil, fmt.Errorf("--group %s: switch %s: %w", path, name, err)
		}
		for _, a := range attach {
			if l, ok := memName(a.iface); ok {
				mem[l] = append(mem[l], fmt.Sprintf("switch %s, port %d", name, a.num))
				continue
			}
			if err := claim(name, "interface", a.iface); err != nil {
				return nil, nil, err
			}
		}
		if err := claim(name, "control socket", o.control); err != nil {
			return nil, nil, err
		}
		if err := claim(name, "--log-file", o.logFile); err != nil {
			return nil, nil, err
		}
		if _, port, err := net.SplitHostPort(o.grpcAddr); err != nil || port != "0" {
			if err := claim(name, "P4Runtime address", o.grpcAddr); err != nil {
				return nil, nil, err
			}
		}
		names, opts = append(names, name), append(opts, o)
	}
	if err := pairMemLinks(mem); err != nil {
		return nil, nil, fmt.Errorf("--group %s: %w", path, err)
	}
	return names, opts, nil
}

// memUses lists, for pairMemLinks, the links in memory a switch's own
// ports name.
func memUses(who string, o options) map[string][]string {
	uses := map[string][]string{}
	attach, err := parseInterfaces(o.ifaces)
	if err != nil {
		return uses // serve reports it
	}
	for _, a := range attach {
		if l, ok := memName(a.iface); ok {
			uses[l] = append(uses[l], fmt.Sprintf("%s, port %d", who, a.num))
		}
	}
	return uses
}

// runGroup runs the switches of a group file in this process until ctx
// ends or one of them fails, which stops them all: they share a process,
// and a fabric missing a switch is not the one the user started.
func runGroup(ctx context.Context, path string, stdout, stderr io.Writer) error {
	names, opts, err := readGroup(path)
	if err != nil {
		return err
	}
	mem := &memLinks{}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var out sync.Mutex
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i, o := range opts {
		name := names[i]
		o.mem = mem
		log, closeLog, err := o.logger(stderr)
		if err != nil {
			cancel()
			wg.Wait()
			return fmt.Errorf("switch %s: %w", name, err)
		}
		log = log.With("switch", name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer closeLog()
			err := serve(ctx, o, log, &prefixed{mu: &out, w: stdout, prefix: name + ": "})
			if err != nil {
				once.Do(func() { first = fmt.Errorf("switch %s: %w", name, err) })
				cancel()
			}
		}()
	}
	wg.Wait()
	return first
}

// prefixed writes each line given to it to w after prefix, one writer
// at a time: the switches of a group share the process's output.
type prefixed struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *prefixed) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			break
		}
		if _, err := fmt.Fprintf(p.w, "%s%s", p.prefix, p.buf[:i+1]); err != nil {
			return 0, err
		}
		p.buf = p.buf[i+1:]
	}
	return len(b), nil
}
