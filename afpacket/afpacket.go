//go:build linux

// Package afpacket gives a software switch its ports: AF_PACKET raw
// sockets on an interface, receiving and sending whole Ethernet frames in
// batches, with VLAN tags kept. A port reads the frames it receives from
// a ring it shares with the kernel, with no system call (Ring), where the
// kernel sets the ring up, and otherwise by recvmmsg (Mmsg); it sends by
// sendmmsg (IO says more). The receiving sockets sit on the runtime's
// poller, so a blocked receive costs no thread and Close ends it.
package afpacket

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// MaxFrame is the largest frame a port receives whole (jumbo frames and
// a re-inserted VLAN tag fit).
const MaxFrame = 9216 + 4

// Batch is how many frames one receive or send system call moves at most.
const Batch = 64

const auxSize = int(unsafe.Sizeof(unix.TpacketAuxdata{}))

// mmsghdr is struct mmsghdr of recvmmsg(2) and sendmmsg(2).
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
	_   [4]byte
}

// Port is one interface's sockets.
type Port struct {
	Name   string
	Index  int
	f      *os.File
	rc     syscall.RawConn
	closed atomic.Bool

	// io is how frames move: Ring or RingV3 (rx set, and tx with a
	// send ring), or Mmsg.
	io IO
	// ringErr is why Auto fell back to Mmsg; nil otherwise.
	ringErr error
	rx      *rxRing
	// sfd is the sending socket of a port on rings (-1 on Mmsg), and
	// tx its send ring, if it has one.
	sfd int
	tx  *txRing

	rmu   sync.Mutex
	rbufs [Batch][]byte
	riov  [Batch]unix.Iovec
	roob  [Batch][]byte
	rhdr  [Batch]mmsghdr
	rout  [Batch][]byte

	// BusyPoll makes Recv poll the socket without ever sleeping: a core
	// spent for the lowest latency, as DPDK-style switches do.
	BusyPoll bool

	wmu  sync.Mutex
	wiov [Batch]unix.Iovec
	whdr [Batch]mmsghdr

	truncated atomic.Uint64
}

// Truncated counts the frames Recv dropped because they were longer
// than MaxFrame (the kernel cut them: MSG_TRUNC).
func (p *Port) Truncated() uint64 { return p.truncated.Load() }

// Open opens a port on the interface ifName of the calling thread's
// network namespace, in promiscuous mode, with room in the kernel for
// bursts to wait rather than be lost: its rings, or large socket buffers.
// Without options it moves frames through rings where the kernel sets
// them up and falls back to recvmmsg and sendmmsg where it does not
// (WithIO forces either).
func Open(ifName string, opts ...Option) (*Port, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	ifi, err := net.InterfaceByName(ifName)
	if err != nil {
		return nil, fmt.Errorf("no interface %q in this network namespace", ifName)
	}
	var ringErr error
	if o.io != Mmsg {
		p, err := openRing(ifi, o.ring, o.io == RingV3, o.sendRing)
		if err == nil {
			return p, nil
		}
		if o.io != Auto {
			return nil, err
		}
		ringErr = err
	}
	p, err := openMmsg(ifi)
	if p != nil {
		p.ringErr = ringErr
	}
	return p, err
}

// openMmsg opens a port that moves frames by recvmmsg and sendmmsg on
// one socket.
func openMmsg(ifi *net.Interface) (*Port, error) {
	ifName := ifi.Name
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("port %s: AF_PACKET socket: %w", ifName, err)
	}
	fail := func(what string, err error) (*Port, error) {
		unix.Close(fd)
		return nil, fmt.Errorf("port %s: %s: %w", ifName, what, err)
	}
	// The kernel moves a received VLAN tag into metadata; auxdata gives
	// it back so that the program sees the frame as it was on the wire.
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_AUXDATA, 1); err != nil {
		return fail("PACKET_AUXDATA", err)
	}
	// Our own transmissions must not come back as receptions.
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1); err != nil {
		return fail("PACKET_IGNORE_OUTGOING (Linux 4.20 or later)", err)
	}
	for _, opt := range []int{unix.SO_RCVBUFFORCE, unix.SO_SNDBUFFORCE} {
		// Forcing needs CAP_NET_ADMIN; without it the default stays.
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, opt, 8<<20)
	}
	mreq := unix.PacketMreq{Ifindex: int32(ifi.Index), Type: unix.PACKET_MR_PROMISC}
	if err := unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
		return fail("promiscuous mode", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi.Index}); err != nil {
		return fail("bind", err)
	}
	f := os.NewFile(uintptr(fd), "afpacket:"+ifName)
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	p := &Port{Name: ifName, Index: ifi.Index, f: f, rc: rc, io: Mmsg, sfd: -1}
	for i := range p.rbufs {
		p.rbufs[i] = make([]byte, MaxFrame)
		p.roob[i] = make([]byte, unix.CmsgSpace(auxSize))
	}
	return p, nil
}

func htons(v uint16) uint16 {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], v)
	return binary.NativeEndian.Uint16(b[:])
}

// ErrClosed is returned by Recv and Send on a closed port.
var ErrClosed = errors.New("port closed")

// IO is how the port moves frames: Ring, RingV3 or Mmsg, never Auto.
func (p *Port) IO() IO { return p.io }

// RingRefused is why a port opened with Auto moves frames by Mmsg: the
// error setting up its rings. It is nil for a port on rings, and for
// one that was asked for Mmsg.
func (p *Port) RingRefused() error { return p.ringErr }

// Recv waits for frames and returns up to Batch of them. The frames are
// valid until the next Recv (on rings they are the ring's memory, handed
// back to the kernel then); the caller may write to them meanwhile. A
// frame longer than MaxFrame is never returned, cut to the buffer's
// length as the kernel hands it over: it is dropped and counted
// (Truncated), since a switch that forwarded it would send a different
// frame than it received.
func (p *Port) Recv() ([][]byte, error) {
	p.rmu.Lock()
	defer p.rmu.Unlock()
	if p.rx != nil {
		return p.recvRing()
	}
	for {
		frames, err := p.recv()
		if err != nil || len(frames) > 0 {
			return frames, err
		}
	}
}

func (p *Port) recv() ([][]byte, error) {
	for i := range Batch {
		// Leave room in front of the frame for a VLAN tag to go back in.
		p.riov[i] = unix.Iovec{Base: &p.rbufs[i][4]}
		p.riov[i].SetLen(MaxFrame - 4)
		h := &p.rhdr[i].hdr
		*h = unix.Msghdr{Iov: &p.riov[i], Iovlen: 1, Control: &p.roob[i][0]}
		h.SetControllen(len(p.roob[i]))
	}
	var n int
	var errno syscall.Errno
	err := p.rc.Read(func(fd uintptr) bool {
		for {
			// A raw system call: MSG_DONTWAIT never blocks, so the
			// runtime need not hand this thread's P on (entersyscall),
			// nor its monitor thread watch for a long call: on this
			// class of machine that bookkeeping and the wake-ups it
			// causes cost a packet socket more than the call itself.
			r, _, e := unix.RawSyscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&p.rhdr[0])), Batch, unix.MSG_DONTWAIT, 0, 0)
			if e != unix.EAGAIN {
				n, errno = int(r), e
				return true
			}
			if !p.BusyPoll || p.closed.Load() {
				return false
			}
		}
	})
	if err != nil {
		if p.closed.Load() {
			return nil, ErrClosed
		}
		return nil, err
	}
	if errno != 0 {
		return nil, fmt.Errorf("port %s: recvmmsg: %w", p.Name, errno)
	}
	out := p.rout[:0]
	for i := range n {
		if p.rhdr[i].hdr.Flags&unix.MSG_TRUNC != 0 {
			p.truncated.Add(1)
			continue
		}
		out = append(out, p.frame(i))
	}
	return out, nil
}

// frame returns message i, its VLAN tag put back where auxdata has one.
func (p *Port) frame(i int) []byte {
	b := p.rbufs[i]
	n := int(p.rhdr[i].len)
	h := &p.rhdr[i].hdr
	if int(h.Controllen) >= unix.CmsgSpace(auxSize) {
		cm := (*unix.Cmsghdr)(unsafe.Pointer(&p.roob[i][0]))
		if cm.Level == unix.SOL_PACKET && cm.Type == unix.PACKET_AUXDATA {
			aux := (*unix.TpacketAuxdata)(unsafe.Pointer(&p.roob[i][unix.CmsgLen(0)]))
			if aux.Status&unix.TP_STATUS_VLAN_VALID != 0 && n >= 12 {
				tpid := uint16(0x8100)
				if aux.Status&unix.TP_STATUS_VLAN_TPID_VALID != 0 {
					tpid = aux.Vlan_tpid
				}
				copy(b[0:12], b[4:16])
				binary.BigEndian.PutUint16(b[12:], tpid)
				binary.BigEndian.PutUint16(b[14:], aux.Vlan_tci)
				return b[:n+4]
			}
		}
	}
	return b[4 : 4+n]
}

// Send transmits frames, as many per system call as Batch allows, and
// returns when the kernel has taken them all.
func (p *Port) Send(frames ...[]byte) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	switch {
	case p.tx != nil:
		return p.sendRing(frames)
	case p.sfd >= 0:
		return p.sendSocket(frames)
	}
	for len(frames) > 0 {
		k := p.fillHeaders(frames)
		if k < 0 {
			return fmt.Errorf("port %s: an empty frame", p.Name)
		}
		var sent int
		var errno syscall.Errno
		err := p.rc.Write(func(fd uintptr) bool {
			// Raw, as in recv: it does not block.
			r, _, e := unix.RawSyscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&p.whdr[0])), uintptr(k), unix.MSG_DONTWAIT, 0, 0)
			if e == unix.EAGAIN || e == unix.ENOBUFS {
				return false
			}
			sent, errno = int(r), e
			return true
		})
		if err != nil {
			if p.closed.Load() {
				return ErrClosed
			}
			return err
		}
		if errno != 0 {
			return fmt.Errorf("port %s: sendmmsg: %w", p.Name, errno)
		}
		frames = frames[sent:]
	}
	return nil
}

// fillHeaders points sendmmsg's headers at the first Batch frames and
// returns how many; -1 for an empty frame among them.
func (p *Port) fillHeaders(frames [][]byte) int {
	k := min(len(frames), Batch)
	for i := range k {
		if len(frames[i]) == 0 {
			return -1
		}
		p.wiov[i] = unix.Iovec{Base: &frames[i][0]}
		p.wiov[i].SetLen(len(frames[i]))
		p.whdr[i] = mmsghdr{hdr: unix.Msghdr{Iov: &p.wiov[i], Iovlen: 1}}
	}
	return k
}

// Close closes the sockets; a pending Recv or Send returns ErrClosed.
func (p *Port) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	err := p.f.Close()
	if p.sfd >= 0 {
		// A Send waiting sees the port closed within its poll's
		// bound and leaves; none can start.
		p.wmu.Lock()
		if e := unix.Close(p.sfd); err == nil {
			err = e
		}
		if p.tx != nil {
			p.tx.mem.unmap()
		}
		p.wmu.Unlock()
	}
	// The receive ring stays mapped: the frames of the last Recv may be
	// in use elsewhere (sent on another port) until their goroutine
	// calls Recv again, which then unmaps it (or the port's cleanup, if
	// none does).
	return err
}
