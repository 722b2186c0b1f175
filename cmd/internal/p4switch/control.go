package p4switch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/p4rcm/p4rcm/v1model"
)

// control serves simple_switch_CLI's traffic-manager commands on a Unix
// socket, one per line, answering "ok" or "error: ..." per line:
//
//	set_queue_rate <pps> [<port> [<priority>]]
//	set_queue_depth <packets> [<port> [<priority>]]
//	mirroring_add <session> <port>
//
// so that rates and depths change while the switch runs, as on BMv2 with
// its CLI (p4switch serves no Thrift), and two of the Go target's own:
//
//	set_port_rate <bits per second> [<port>]
//	set_port_delay <duration> [<port>]
//	set_recirculation_rate <pps>
//	port_stats (a line per port: frames in, out, dropped at full
//	queues and as longer than a port takes; then ok)
type control struct {
	dp  *datapath
	ln  net.Listener
	log *slog.Logger
	// stats gives port_stats its lines, one per port.
	stats func() []string
}

func listenControl(path string, dp *datapath, log *slog.Logger) (*control, error) {
	if st, err := os.Lstat(path); err == nil {
		if st.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket", path)
		}
		// A socket left by a switch that died: it no longer answers.
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return nil, fmt.Errorf("%s: another switch answers there", path)
		}
		os.Remove(path)
	}
	ln, err := listenPrivate(path)
	if err != nil {
		return nil, err
	}
	return &control{dp: dp, ln: ln, log: log}, nil
}

// listenPrivate listens on a Unix socket at path that only this
// process's user (and root) can connect to, whatever the umask: the
// socket is made in a directory of its own that no one else may enter,
// given mode 0600 there, and only then moved to path. Listening at path
// itself would leave it, for a moment or for good (umask 000: mode
// 0777), open to every local user, who could then change the switch's
// rates.
func listenPrivate(path string) (net.Listener, error) {
	dir, err := os.MkdirTemp(filepath.Dir(path), ".p4sw")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "s")
	if len(tmp) > maxSocketPath {
		return nil, fmt.Errorf("%s: the directory's path is too long for a Unix socket (p4switch stages it in %s): give a shorter one", path, dir)
	}
	ln, err := net.Listen("unix", tmp)
	if err != nil {
		return nil, err
	}
	// Closing must not remove the staged name, long gone, nor anything
	// that has since taken it; path is removed where the switch stops.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// maxSocketPath is the longest path a Unix socket takes on Linux.
const maxSocketPath = 107

func (c *control) serve(ctx context.Context) {
	go func() {
		<-ctx.Done()
		c.ln.Close()
	}()
	for {
		conn, err := c.ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				c.log.Warn("control socket", "err", err)
			}
			return
		}
		go c.session(conn)
	}
}

// maxLine is the longest command line the socket takes: a longer one
// is answered with an error, and skipped.
const maxLine = 64 << 10

func (c *control) session(conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReaderSize(conn, maxLine)
	for {
		raw, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Skip to the end of the line; answer once.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			fmt.Fprintf(conn, "error: a line of more than %d bytes: one command a line\n", maxLine)
			if err != nil {
				return
			}
			continue
		}
		if err != nil && len(raw) == 0 {
			return
		}
		line := strings.TrimSpace(string(raw))
		if line == "" || strings.HasPrefix(line, "#") {
			if err != nil {
				return
			}
			continue
		}
		if out, err := c.run(line); err != nil {
			fmt.Fprintf(conn, "error: %v\n", err)
		} else {
			for _, l := range out {
				fmt.Fprintln(conn, l)
			}
			fmt.Fprintln(conn, "ok")
		}
		if err != nil {
			return
		}
	}
}

// valueAndPort reads "<command> <value> [<port>]": the value, and the
// port (-1, every port, when there is none).
func valueAndPort(f []string, usage string) (string, int, error) {
	if len(f) < 2 || len(f) > 3 {
		return "", 0, errors.New(usage)
	}
	if len(f) == 2 {
		return f[1], -1, nil
	}
	port, err := strconv.Atoi(f[2])
	if err != nil || port < 0 {
		return "", 0, fmt.Errorf("%q is not a whole number", f[2])
	}
	return f[1], port, nil
}

// run carries out one command and returns the lines it answers before
// "ok".
func (c *control) run(line string) ([]string, error) {
	f := strings.Fields(line)
	if f[0] == "port_stats" {
		// One line per port.
		if len(f) > 1 {
			return nil, errors.New("usage: port_stats (no arguments: a line for every port)")
		}
		if c.stats == nil {
			return nil, nil
		}
		return c.stats(), nil
	}
	return nil, c.set(f)
}

// set carries out a command that changes a setting.
func (c *control) set(f []string) error {
	ints := func(args []string) ([]int, error) {
		var out []int
		for _, a := range args {
			n, err := strconv.Atoi(a)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%q is not a whole number", a)
			}
			out = append(out, n)
		}
		return out, nil
	}
	switch f[0] {
	case "set_queue_rate", "set_queue_depth":
		if len(f) < 2 || len(f) > 4 {
			return fmt.Errorf("usage: %s <value> [<port> [<priority>]]", f[0])
		}
		port, prio := -1, -1
		rest, err := ints(f[2:])
		if err != nil {
			return err
		}
		if len(rest) > 0 {
			port = rest[0]
		}
		if len(rest) > 1 {
			prio = rest[1]
		}
		if f[0] == "set_queue_rate" {
			pps, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return fmt.Errorf("%q is not a rate in packets per second", f[1])
			}
			if err := inRange("queue rate", pps); err != nil {
				return err
			}
			return c.dp.setting(func(sw *v1model.Switch) error { return sw.SetQueueRate(port, prio, pps) })
		}
		depth, err := ints(f[1:2])
		if err != nil {
			return err
		}
		if err := inRange("queue depth", float64(depth[0])); err != nil {
			return err
		}
		return c.dp.setting(func(sw *v1model.Switch) error { return sw.SetQueueDepth(port, prio, depth[0]) })
	case "set_port_rate":
		val, port, err := valueAndPort(f, "usage: set_port_rate <bits per second> [<port>]")
		if err != nil {
			return err
		}
		bps, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return fmt.Errorf("%q is not a rate in bits per second", val)
		}
		if err := inRange("port rate", bps); err != nil {
			return err
		}
		return c.dp.setting(func(sw *v1model.Switch) error { return sw.SetPortRate(port, bps) })
	case "set_port_delay":
		val, port, err := valueAndPort(f, "usage: set_port_delay <duration, e.g. 5ms> [<port>]")
		if err != nil {
			return err
		}
		d, err := time.ParseDuration(val)
		if err != nil {
			return fmt.Errorf("%q is not a duration such as 5ms", val)
		}
		if err := inRange("port delay", d.Seconds()); err != nil {
			return err
		}
		return c.dp.setting(func(sw *v1model.Switch) error { return sw.SetPortDelay(port, d) })
	case "set_recirculation_rate":
		if len(f) != 2 {
			return fmt.Errorf("usage: set_recirculation_rate <pps>")
		}
		pps, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return fmt.Errorf("%q is not a rate in packets per second", f[1])
		}
		if err := inRange("recirculation rate", pps); err != nil {
			return err
		}
		return c.dp.setting(func(sw *v1model.Switch) error { return sw.SetRecirculationRate(pps) })
	case "mirroring_add":
		n, err := ints(f[1:])
		if err != nil || len(n) != 2 {
			return fmt.Errorf("usage: mirroring_add <session> <port>")
		}
		sw := c.dp.current()
		if sw == nil {
			return errors.New("no program loaded")
		}
		return sw.SetMirror(n[0], n[1])
	}
	return fmt.Errorf("unknown command %q: this socket takes set_queue_rate, set_queue_depth, set_port_rate, set_port_delay, set_recirculation_rate, mirroring_add and port_stats", f[0])
}
