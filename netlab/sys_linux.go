//go:build linux

package netlab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// netnsDir is where named network namespaces are bind-mounted; it is the
// directory `ip netns` uses, so lab namespaces can be inspected with
// `ip netns exec NAME ...` while a test is paused.
const netnsDir = "/run/netns"

// onFreshThread runs fn on a new goroutine locked to its own OS thread and
// waits for it. The goroutine exits without calling runtime.UnlockOSThread,
// so the runtime terminates the thread rather than returning it to the pool:
// whatever fn did to the thread's namespaces can never leak into unrelated
// goroutines, even if fn fails halfway or cannot switch back.
func onFreshThread(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// Deliberately no UnlockOSThread: see above.
		errc <- fn()
	}()
	return <-errc
}

// inNetns runs fn on a throwaway thread that has joined the network
// namespace ns.
func inNetns(ns netns.NsHandle, fn func() error) error {
	return onFreshThread(func() error {
		if err := netns.Set(ns); err != nil {
			return fmt.Errorf("setns: %w", err)
		}
		return fn()
	})
}

// createNamedNetns creates a fresh network namespace, applies the sysctls
// hosts need before any link exists in it, and bind-mounts it as
// /run/netns/name. The name must not exist yet; an existing namespace is
// never reused or overmounted.
func createNamedNetns(name string) (netns.NsHandle, error) {
	if err := os.MkdirAll(netnsDir, 0o755); err != nil {
		return netns.None(), err
	}
	path := filepath.Join(netnsDir, name)
	// O_EXCL: we only ever mount onto (and later remove) a file we created.
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return netns.None(), err
	}
	f.Close()
	err = onFreshThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
		}
		// Without IPv6 the kernel sends no router solicitations, MLD
		// reports or duplicate-address probes on the host's links, so
		// the only frames there are the ones the test sends. "default"
		// covers links created later, "all" covers lo.
		for _, key := range []string{"net/ipv6/conf/all/disable_ipv6", "net/ipv6/conf/default/disable_ipv6"} {
			if err := writeSysctl(key, "1"); err != nil {
				return err
			}
		}
		self := fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid())
		if err := unix.Mount(self, path, "none", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind mount %s: %w", path, err)
		}
		return nil
	})
	if err != nil {
		// The namespace itself dies with the thread; remove our file.
		os.Remove(path)
		return netns.None(), err
	}
	ns, err := netns.GetFromPath(path)
	if err != nil {
		deleteNamedNetns(name)
		return netns.None(), err
	}
	return ns, nil
}

// deleteNamedNetns unmounts and removes /run/netns/name. A namespace that is
// already gone is not an error, which keeps Lab.Close idempotent.
func deleteNamedNetns(name string) error {
	path := filepath.Join(netnsDir, name)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	// EINVAL means "not a mount point": a half-created namespace whose
	// mount failed; the file still has to go.
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && err != unix.EINVAL && err != unix.ENOENT {
		return fmt.Errorf("unmount %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// writeSysctl writes a value under /proc/sys. /proc/sys/net resolves to the
// network namespace of the calling thread, so callers run it via inNetns or
// onFreshThread. A missing key (kernel without IPv6) is ignored: there is
// nothing to disable then.
func writeSysctl(key, value string) error {
	err := os.WriteFile(filepath.Join("/proc/sys", key), []byte(value), 0o644)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("sysctl %s=%s: %w", key, value, err)
	}
	return nil
}

// readSysctl reads a value under /proc/sys in the calling thread's network
// namespace.
func readSysctl(key string) (string, error) {
	b, err := os.ReadFile(filepath.Join("/proc/sys", key))
	return strings.TrimSpace(string(b)), err
}

// ethtoolValue is struct ethtool_value from <linux/ethtool.h>.
type ethtoolValue struct {
	cmd  uint32
	data uint32
}

// ifreqData is struct ifreq with ifr_data set. data is an unsafe.Pointer,
// not a uintptr, so the garbage collector keeps the ethtoolValue alive and
// in place during the ioctl.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte // rest of the ifreq union
}

// ethtool issues one SIOCETHTOOL request for the interface ifName in the
// calling thread's network namespace.
func ethtool(ifName string, v *ethtoolValue) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var ifr ifreqData
	copy(ifr.name[:unix.IFNAMSIZ-1], ifName)
	ifr.data = unsafe.Pointer(v)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(v)
	if errno != 0 {
		return errno
	}
	return nil
}

// disableTxChecksum turns off transmit checksum offload (`ethtool -K IF tx
// off`) on ifName in the calling thread's namespace. With offload on, a veth
// hands frames the kernel built itself (UDP/TCP from a host's stack) to its
// peer with the checksum left for "hardware" to fill in; a software switch
// that reads the peer with a packet socket then sees, and forwards, frames
// with wrong checksums. Frames written to AF_PACKET sockets are sent as is,
// so this matters only for kernel-generated traffic.
func disableTxChecksum(ifName string) error {
	return ethtool(ifName, &ethtoolValue{cmd: unix.ETHTOOL_STXCSUM, data: 0})
}

// txChecksumEnabled reports the transmit checksum offload setting of ifName
// in the calling thread's namespace.
func txChecksumEnabled(ifName string) (bool, error) {
	v := ethtoolValue{cmd: unix.ETHTOOL_GTXCSUM}
	if err := ethtool(ifName, &v); err != nil {
		return false, err
	}
	return v.data != 0, nil
}

// Capability bits from <linux/capability.h>.
const (
	capNetAdmin = 12
	capNetRaw   = 13
	capSysAdmin = 21
)

var availableResult = sync.OnceValue(probe)

// Available reports whether labs can be built in this process, and if not,
// why (missing privileges, no namespace, veth or packet socket support).
// Tests call it first and skip with its message:
//
//	if err := netlab.Available(); err != nil {
//		t.Skip(err)
//	}
//
// The probe runs once per process, in a throwaway namespace that disappears
// with its thread, so it leaves nothing behind.
func Available() error {
	return availableResult()
}

func probe() error {
	if err := checkCapabilities(); err != nil {
		return err
	}
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		return fmt.Errorf("kernel has no network namespace support: %w", err)
	}
	err := onFreshThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("cannot create a network namespace: %w", err)
		}
		// The package-level netlink functions open their socket on the
		// calling thread, i.e. inside the throwaway namespace.
		veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "probe0"}, PeerName: "probe1"}
		if err := netlink.LinkAdd(veth); err != nil {
			return fmt.Errorf("cannot create a veth pair: %w", err)
		}
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("cannot open an AF_PACKET socket: %w", err)
		}
		unix.Close(fd)
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w", err)
	}
	return nil
}

// checkCapabilities reads the effective capability set rather than testing
// for uid 0, so a non-root process with the right capabilities qualifies and
// a root process in a restricted container gets a precise message.
func checkCapabilities() error {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return fmt.Errorf("cannot read capabilities: %w", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		hex, ok := strings.CutPrefix(line, "CapEff:")
		if !ok {
			continue
		}
		eff, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
		if err != nil {
			return fmt.Errorf("cannot parse %q: %w", line, err)
		}
		var missing []string
		for _, c := range []struct {
			bit  uint
			name string
		}{{capSysAdmin, "CAP_SYS_ADMIN"}, {capNetAdmin, "CAP_NET_ADMIN"}, {capNetRaw, "CAP_NET_RAW"}} {
			if eff&(1<<c.bit) == 0 {
				missing = append(missing, c.name)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("needs %s (run as root; uid %d)", strings.Join(missing, ", "), os.Geteuid())
		}
		return nil
	}
	return errors.New("no CapEff line in /proc/self/status")
}
