//go:build linux

package netlab

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// ErrClosed is returned by operations on a Lab (or its hosts) after Close.
var ErrClosed = errors.New("lab is closed")

// maxIfName is the longest interface name Linux accepts (IFNAMSIZ-1).
const maxIfName = 15

// validName restricts lab and host names to characters that are safe both
// in interface names and in file names under /run/netns.
var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// Lab is a set of emulated hosts and links. It owns every namespace and
// interface it creates and deletes them all in Close. A Lab is safe for
// concurrent use.
type Lab struct {
	name string
	id   string  // random hex suffix that makes the lab's names unique
	idb  [3]byte // the same suffix as bytes, used in derived MACs

	// root is the namespace the switch-side veth ends live in: the
	// namespace of the thread that called New, normally the process's.
	root   netns.NsHandle
	rootNL *netlink.Handle

	closeMu sync.Mutex // serialises Close calls

	mu       sync.Mutex // guards the fields below
	closed   bool
	hosts    []*Host
	links    []*Link
	sockets  map[*Socket]struct{}
	linkSeq  int
	released bool // root handles closed
}

// Host is an emulated end host: a network namespace with loopback up and
// IPv6 disabled, plus the lab links attached to it.
type Host struct {
	lab   *Lab
	name  string
	netns string
	ns    netns.NsHandle
	nl    *netlink.Handle // netlink handle bound to the host namespace
}

// Link describes one veth pair created by Lab.Link.
type Link struct {
	Host *Host
	// HostIf is the interface name inside the host's namespace.
	HostIf string
	// HostMAC is the MAC address of HostIf.
	HostMAC net.HardwareAddr
	// SwitchIf is the peer interface in the root namespace, where the
	// software switch attaches to it. It is unique across labs.
	SwitchIf string
	// SwitchMAC is the (kernel-assigned) MAC address of SwitchIf.
	SwitchMAC net.HardwareAddr

	// peer is a trunk's other end (Trunk), also in the root namespace.
	peer string
}

// New starts an empty lab. name is a short prefix (letters, digits, '-' and
// '_') that appears in every namespace and interface the lab creates, so a
// leaked object can be traced back to its owner; a random suffix keeps
// concurrent labs apart, including labs with the same name.
func New(name string) (*Lab, error) {
	if !validName.MatchString(name) {
		return nil, fmt.Errorf("invalid lab name %q (want 1-32 of [A-Za-z0-9_-])", name)
	}
	l := &Lab{name: name, sockets: make(map[*Socket]struct{})}
	if _, err := rand.Read(l.idb[:]); err != nil {
		return nil, fmt.Errorf("random suffix: %w", err)
	}
	l.id = hex.EncodeToString(l.idb[:])

	// netns.Get reads the calling thread's namespace; lock so the read
	// and the caller's idea of "current namespace" refer to one thread.
	runtime.LockOSThread()
	root, err := netns.Get()
	runtime.UnlockOSThread()
	if err != nil {
		return nil, fmt.Errorf("current network namespace: %w", err)
	}
	l.root = root
	// A handle bound to root keeps working whatever thread later uses it.
	l.rootNL, err = netlink.NewHandleAt(root)
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("netlink handle: %w", err)
	}
	return l, nil
}

// Name returns the lab's name prefix as given to New.
func (l *Lab) Name() string { return l.name }

// Host creates a host: a new network namespace named
// "<lab>-<pid>-<suffix>-<name>" (visible to `ip netns`), with loopback up and
// IPv6 disabled so the kernel sends nothing on its own on the host's links.
// name must be unique within the lab.
func (l *Lab) Host(name string) (*Host, error) {
	if !validName.MatchString(name) {
		return nil, fmt.Errorf("invalid host name %q (want 1-32 of [A-Za-z0-9_-])", name)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	for _, h := range l.hosts {
		if h.name == name {
			return nil, fmt.Errorf("host %q already exists", name)
		}
	}
	// The pid is there for humans hunting leaked namespaces; uniqueness
	// comes from the random suffix.
	nsName := fmt.Sprintf("%s-%d-%s-%s", l.name, os.Getpid(), l.id, name)
	ns, err := createNamedNetns(nsName)
	if err != nil {
		return nil, fmt.Errorf("host %s: create namespace %s: %w", name, nsName, err)
	}
	h := &Host{lab: l, name: name, netns: nsName, ns: ns}
	// Record the host before configuring it so Close cleans up even if
	// the rest fails.
	l.hosts = append(l.hosts, h)

	h.nl, err = netlink.NewHandleAt(ns)
	if err != nil {
		return nil, fmt.Errorf("host %s: netlink handle: %w", name, err)
	}
	lo, err := h.nl.LinkByName("lo")
	if err == nil {
		err = h.nl.LinkSetUp(lo)
	}
	if err != nil {
		return nil, fmt.Errorf("host %s: bring up lo: %w", name, err)
	}
	return h, nil
}

// Name returns the host's name within the lab.
func (h *Host) Name() string { return h.name }

// Netns returns the name of the host's network namespace, for use with
// `ip netns exec` or netns.GetFromName.
func (h *Host) Netns() string { return h.netns }

// Link connects host h to the root namespace with a veth pair. The host end
// is named hostIf (at most 15 characters) and gets MAC address mac, or, if
// mac is nil, a locally administered address derived from the lab suffix and
// a per-lab link counter. The root end gets a unique name, returned in
// Link.SwitchIf, for the software switch to use as a port. Both ends are up
// and carry frames when Link returns (waitUp), with IPv6 off and transmit
// checksum offload turned off (best effort: if the ethtool ioctl fails the
// link is still usable, only frames the kernel itself generates may carry
// unfinished checksums).
func (l *Lab) Link(h *Host, hostIf string, mac net.HardwareAddr) (*Link, error) {
	if len(hostIf) == 0 || len(hostIf) > maxIfName {
		return nil, fmt.Errorf("invalid interface name %q (1-%d characters)", hostIf, maxIfName)
	}
	if mac != nil && len(mac) != 6 {
		return nil, fmt.Errorf("invalid Ethernet address %v", mac)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	if h == nil || h.lab != l {
		return nil, errors.New("host does not belong to this lab")
	}
	l.linkSeq++
	n := l.linkSeq
	if mac == nil {
		// 0x02: locally administered, unicast.
		mac = net.HardwareAddr{0x02, l.idb[0], l.idb[1], l.idb[2], byte(n >> 8), byte(n)}
	}
	switchIf := l.switchIfName(n)

	// Create the pair from the root side with the peer placed directly
	// into the host namespace, so hostIf never exists in the root
	// namespace, where it could clash with real interfaces (e.g. "eth0").
	veth := &netlink.Veth{
		LinkAttrs:        netlink.LinkAttrs{Name: switchIf},
		PeerName:         hostIf,
		PeerHardwareAddr: mac,
		PeerNamespace:    netlink.NsFd(h.ns),
	}
	if err := l.rootNL.LinkAdd(veth); err != nil {
		return nil, fmt.Errorf("link %s: create veth %s<->%s: %w", h.name, switchIf, hostIf, err)
	}
	lk := &Link{Host: h, HostIf: hostIf, HostMAC: mac, SwitchIf: switchIf}
	if err := l.setupLink(lk); err != nil {
		// Deleting one end deletes the pair.
		if derr := l.deleteSwitchIf(switchIf); derr != nil {
			l.links = append(l.links, lk) // leave it for Close
			err = errors.Join(err, derr)
		}
		return nil, fmt.Errorf("link %s: %w", h.name, err)
	}
	l.links = append(l.links, lk)
	return lk, nil
}

// Trunk connects two switches: a veth pair with both ends in the root
// namespace, named like Link's switch ends, up, with IPv6 off and
// transmit checksum offload off. Close deletes it.
func (l *Lab) Trunk() (a, b string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return "", "", ErrClosed
	}
	l.linkSeq += 2
	a, b = l.switchIfName(l.linkSeq-1), l.switchIfName(l.linkSeq)
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: a}, PeerName: b}
	if err := l.rootNL.LinkAdd(veth); err != nil {
		return "", "", fmt.Errorf("trunk: create veth %s<->%s: %w", a, b, err)
	}
	setup := func() error {
		for _, name := range []string{a, b} {
			err := inNetns(l.root, func() error {
				if err := writeSysctl("net/ipv6/conf/"+name+"/disable_ipv6", "1"); err != nil {
					return err
				}
				_ = disableTxChecksum(name) // best effort, as in Link
				return nil
			})
			if err != nil {
				return err
			}
			link, err := l.rootNL.LinkByName(name)
			if err != nil {
				return err
			}
			if err := l.rootNL.LinkSetUp(link); err != nil {
				return fmt.Errorf("set %s up: %w", name, err)
			}
		}
		for _, name := range []string{a, b} {
			if err := waitUp(l.rootNL, name); err != nil {
				return err
			}
		}
		return nil
	}
	// A trunk is kept as a Link without a host, so that Close deletes it.
	lk := &Link{SwitchIf: a, peer: b}
	if err := setup(); err != nil {
		if derr := l.deleteSwitchIf(a); derr != nil {
			l.links = append(l.links, lk)
			err = errors.Join(err, derr)
		}
		return "", "", fmt.Errorf("trunk %s<->%s: %w", a, b, err)
	}
	l.links = append(l.links, lk)
	return a, b, nil
}

// switchIfName returns "<prefix>-<suffix>-<n>", truncating the lab name so
// the result fits IFNAMSIZ. The suffix and n make it unique; the prefix only
// helps humans.
func (l *Lab) switchIfName(n int) string {
	tail := "-" + l.id + "-" + strconv.Itoa(n)
	prefix := l.name
	if room := maxIfName - len(tail); len(prefix) > room {
		prefix = prefix[:max(room, 0)]
	}
	name := prefix + tail
	if len(name) > maxIfName { // only with absurd link counts
		name = name[len(name)-maxIfName:]
	}
	return name
}

// setupLink configures a freshly created, still down, veth pair.
func (l *Lab) setupLink(lk *Link) error {
	// Disable IPv6 on the root end before it comes up; otherwise the root
	// namespace's stack sends duplicate-address probes and MLD reports
	// into the host's socket. The host end already inherited the host
	// namespace's default (disabled).
	err := inNetns(l.root, func() error {
		if err := writeSysctl("net/ipv6/conf/"+lk.SwitchIf+"/disable_ipv6", "1"); err != nil {
			return err
		}
		// Offload is best effort, see Link.
		_ = disableTxChecksum(lk.SwitchIf)
		return nil
	})
	if err != nil {
		return err
	}
	_ = inNetns(lk.Host.ns, func() error { return disableTxChecksum(lk.HostIf) })

	sw, err := l.rootNL.LinkByName(lk.SwitchIf)
	if err != nil {
		return err
	}
	lk.SwitchMAC = sw.Attrs().HardwareAddr
	if err := l.rootNL.LinkSetUp(sw); err != nil {
		return fmt.Errorf("set %s up: %w", lk.SwitchIf, err)
	}
	hl, err := lk.Host.nl.LinkByName(lk.HostIf)
	if err != nil {
		return err
	}
	if err := lk.Host.nl.LinkSetUp(hl); err != nil {
		return fmt.Errorf("set %s up: %w", lk.HostIf, err)
	}
	if err := waitUp(l.rootNL, lk.SwitchIf); err != nil {
		return err
	}
	return waitUp(lk.Host.nl, lk.HostIf)
}

// upTimeout is how long waitUp waits for an end to come up: the kernel's
// link-watch work is normally done within a millisecond, but it runs on a
// shared worker under the RTNL lock, which a busy machine (namespaces
// being made and deleted by other tests) can hold for a long time.
const upTimeout = 10 * time.Second

// waitUp returns when the interface ifName can carry frames. Setting a
// veth end up is not enough: the end brought up first gets its carrier
// only when its peer comes up, and the kernel attaches its transmit queue
// discipline in the link-watch work that this schedules; until that work
// has run, every frame sent on the end is dropped (counted in its TX
// dropped). Under load the agents' tests lost their first dozens of frames
// that way. The same work sets the operational state up, so an end that
// reads as up is ready (reading the link also runs its pending work at
// once on recent kernels, 6.18 here).
func waitUp(h *netlink.Handle, ifName string) error {
	deadline := time.Now().Add(upTimeout)
	for {
		link, err := h.LinkByName(ifName)
		if err != nil {
			return fmt.Errorf("read %s: %w", ifName, err)
		}
		if link.Attrs().OperState == netlink.OperUp {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s is %v %v after being set up", ifName, link.Attrs().OperState, upTimeout)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// deleteSwitchIf deletes a switch-side veth end created by this lab (which
// deletes its peer too). An interface that no longer exists is fine: the
// switch or the kernel may have removed it.
func (l *Lab) deleteSwitchIf(name string) error {
	link, err := l.rootNL.LinkByName(name)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return nil
		}
		return fmt.Errorf("look up %s: %w", name, err)
	}
	// Belt and braces: the name carries our random suffix, but never
	// delete something that is not a veth.
	if link.Type() != "veth" {
		return fmt.Errorf("refusing to delete %s: type %s, not veth", name, link.Type())
	}
	if err := l.rootNL.LinkDel(link); err != nil {
		return fmt.Errorf("delete %s: %w", name, err)
	}
	return nil
}

// Socket opens an AF_PACKET socket on interface ifName inside the host's
// namespace. The lab closes it in Close if the caller has not.
func (h *Host) Socket(ifName string) (*Socket, error) {
	l := h.lab
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	s, err := openSocket(h.ns, h.nl, ifName)
	if err != nil {
		return nil, fmt.Errorf("host %s: %w", h.name, err)
	}
	l.track(s)
	return s, nil
}

// RootSocket opens an AF_PACKET socket on the root-namespace end of one of
// this lab's links, i.e. where a switch would sit. It lets tests play the
// switch, or watch what a host sends. Only interfaces this lab created are
// accepted, so a lab never sends on the machine's real interfaces.
func (l *Lab) RootSocket(switchIf string) (*Socket, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	ours := false
	for _, lk := range l.links {
		ours = ours || lk.SwitchIf == switchIf || lk.peer == switchIf
	}
	if !ours {
		return nil, fmt.Errorf("%q is not a switch-side interface of this lab", switchIf)
	}
	s, err := openSocket(l.root, l.rootNL, switchIf)
	if err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	l.track(s)
	return s, nil
}

// track registers s for closing in Close; l.mu must be held.
func (l *Lab) track(s *Socket) {
	l.sockets[s] = struct{}{}
	s.onClose = func() {
		l.mu.Lock()
		delete(l.sockets, s)
		l.mu.Unlock()
	}
}

// Close deletes everything the lab created: its sockets, veth pairs and
// namespaces, and nothing else. It attempts every step and returns all
// errors joined; calling it again retries only what failed, and returns nil
// once everything is gone.
func (l *Lab) Close() error {
	l.closeMu.Lock()
	defer l.closeMu.Unlock()

	l.mu.Lock()
	l.closed = true
	sockets := make([]*Socket, 0, len(l.sockets))
	for s := range l.sockets {
		sockets = append(sockets, s)
	}
	links, hosts := l.links, l.hosts
	l.mu.Unlock()
	// From here on nothing else touches links and hosts: creation is
	// refused once closed is set, and Close calls are serialised.

	var errs []error
	// Sockets first: each holds a reference to its namespace, which would
	// otherwise outlive the unmount.
	for _, s := range sockets {
		if err := s.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	// Delete the veths explicitly rather than relying on namespace
	// teardown: that is asynchronous, and the root ends would survive for
	// as long as anything (a stray socket, a child process) keeps a host
	// namespace alive.
	var keepLinks []*Link
	for _, lk := range links {
		if err := l.deleteSwitchIf(lk.SwitchIf); err != nil {
			errs = append(errs, err)
			keepLinks = append(keepLinks, lk)
		}
	}
	var keepHosts []*Host
	for _, h := range hosts {
		if h.nl != nil {
			h.nl.Close()
			h.nl = nil
		}
		if h.ns.IsOpen() {
			h.ns.Close()
			h.ns = netns.None()
		}
		if err := deleteNamedNetns(h.netns); err != nil {
			errs = append(errs, fmt.Errorf("delete namespace %s: %w", h.netns, err))
			keepHosts = append(keepHosts, h)
		}
	}

	l.mu.Lock()
	l.links, l.hosts = keepLinks, keepHosts
	if len(keepLinks) == 0 && !l.released {
		// The root handles are needed only to delete links.
		l.rootNL.Close()
		l.root.Close()
		l.released = true
	}
	l.mu.Unlock()
	if len(errs) > 0 {
		return fmt.Errorf("close lab %s-%s: %w", l.name, l.id, errors.Join(errs...))
	}
	return nil
}

// Do runs fn on a throwaway OS thread inside the host's network
// namespace: sockets fn opens (packet sockets of a sender or a receiver)
// stay in the namespace and can be used from any goroutine afterwards.
func (h *Host) Do(fn func() error) error {
	return inNetns(h.ns, fn)
}
