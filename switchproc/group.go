package switchproc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/p4rcm/p4rcm/internal/groupfile"
)

// Group is one p4switch process running several switches (p4switch
// --group): each has its own P4Runtime server, device id, control socket,
// ports and logs, as with a process each, so a controller sees no
// difference; ports named mem:NAME on two of them are a link in memory.
// Only the Go target runs groups.
type Group struct {
	name     string
	switches []*Switch
	*proc
}

// StartGroup starts one p4switch process that runs the switches cs
// describe, and waits, until ctx ends, for every one's P4Runtime port to
// accept connections. The process's program is the first switch's
// Binary and BinaryArgs; its output goes to LogDir/name.out when the
// first switch has a LogDir. Each switch gets a control socket, in a
// directory the group removes when it stops, unless it names one.
func StartGroup(ctx context.Context, name string, cs []Config) (*Group, error) {
	if len(cs) == 0 {
		return nil, fmt.Errorf("group %s: no switches", name)
	}
	for _, c := range cs {
		if err := c.check(); err != nil {
			return nil, fmt.Errorf("group %s: %w", name, err)
		}
		if c.Target != TargetGo {
			return nil, fmt.Errorf("group %s: switch %s: target %q; only the Go target runs several switches in one process", name, c.Name, c.Target)
		}
	}
	first := cs[0]
	bin := first.Binary
	if bin == "" {
		var err error
		if bin, err = Lookup(GoSwitchBinary); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "p4switch-"+name)
	if err == nil && len(filepath.Join(dir, longestName(cs)+".sock")) > maxSocketPath {
		os.Remove(dir)
		dir, err = os.MkdirTemp("/tmp", "p4switch-"+name)
	}
	if err != nil {
		return nil, fmt.Errorf("group %s: %w", name, err)
	}
	g := &Group{name: name, proc: &proc{done: make(chan struct{}), ctlDir: dir}}
	var file groupfile.File
	for _, c := range cs {
		if c.Control == "" {
			c.Control = filepath.Join(dir, c.Name+".sock")
		}
		if c.PcapDir != "" {
			if err := os.MkdirAll(c.PcapDir, 0o755); err != nil {
				os.RemoveAll(dir)
				return nil, fmt.Errorf("switch %s: %w", c.Name, err)
			}
		}
		if c.LogDir != "" {
			if err := os.MkdirAll(c.LogDir, 0o755); err != nil {
				os.RemoveAll(dir)
				return nil, fmt.Errorf("switch %s: %w", c.Name, err)
			}
		}
		g.switches = append(g.switches, &Switch{cfg: c, proc: g.proc})
		file.Switches = append(file.Switches, groupfile.Switch{Name: c.Name, Args: c.Args()})
	}
	b, err := json.MarshalIndent(file, "", " ")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "group.json"), b, 0o600)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("group %s: %w", name, err)
	}
	g.cmd = exec.Command(bin, append(slices.Clip(first.BinaryArgs), "--group", filepath.Join(dir, "group.json"))...)
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var tail bytes.Buffer
	outPath := ""
	if first.LogDir != "" {
		outPath = filepath.Join(first.LogDir, name+".out")
		if g.out, err = os.Create(outPath); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("group %s: %w", name, err)
		}
		g.cmd.Stdout, g.cmd.Stderr = g.out, g.out
	} else {
		g.cmd.Stdout, g.cmd.Stderr = &tail, &tail
	}
	if err = g.start(g.cmd, true, len(first.BinaryArgs), first.GoMaxProcs); err != nil {
		g.closeFiles()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("group %s: %w", name, err)
	}
	go func() {
		g.waitErr = g.cmd.Wait()
		g.closeFiles()
		os.RemoveAll(dir)
		close(g.done)
	}()
	for _, s := range g.switches {
		for {
			conn, err := net.DialTimeout("tcp", s.cfg.GRPCAddr, 100*time.Millisecond)
			if err == nil {
				conn.Close()
				break
			}
			select {
			case <-g.done:
				out := tail.String()
				if outPath != "" {
					b, _ := os.ReadFile(outPath)
					out = string(b)
				}
				return nil, fmt.Errorf("group %s: exited before switch %s's gRPC port %s opened (%v): %s", name, s.cfg.Name, s.cfg.GRPCAddr, g.waitErr, lastLines(out, 5))
			case <-ctx.Done():
				g.Stop()
				return nil, fmt.Errorf("group %s: switch %s's gRPC port %s not open: %w", name, s.cfg.Name, s.cfg.GRPCAddr, ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return g, nil
}

// longestName is the longest switch name of cs.
func longestName(cs []Config) string {
	n := ""
	for _, c := range cs {
		if len(c.Name) > len(n) {
			n = c.Name
		}
	}
	return n
}

// Switches are the group's switches, in the order StartGroup was given
// them; each takes the control commands a Switch does. Stopping one
// stops the group.
func (g *Group) Switches() []*Switch { return g.switches }

// PID is the group's process ID, which its switches share.
func (g *Group) PID() int { return g.cmd.Process.Pid }

// Process is the group's process, for measuring its CPU time: that of
// all its switches together.
func (g *Group) Process() *os.Process { return g.cmd.Process }

// Stop ends the group's process, as Switch.Stop ends a switch's; safe to
// call more than once.
func (g *Group) Stop() error { return g.proc.stop("group " + g.name) }
