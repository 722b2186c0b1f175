//go:build linux

package netlab

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// ErrTimeout is returned (wrapped) by Recv and RecvMatching when no frame
// arrived in time. The same errors also match os.ErrDeadlineExceeded.
var ErrTimeout = errors.New("no frame before timeout")

// sizeofTpacketAuxdata is sizeof(struct tpacket_auxdata).
const sizeofTpacketAuxdata = int(unsafe.Sizeof(unix.TpacketAuxdata{}))

// maxFrame bounds received frames: far above the veth MTU, so a frame is
// never silently cut, with room for a re-inserted VLAN tag.
const maxFrame = 1 << 16

// Socket is an AF_PACKET raw socket bound to one interface. It sends and
// receives whole Ethernet frames (without FCS). Send and Recv may be called
// from different goroutines; Close unblocks a pending Recv.
type Socket struct {
	ifName string
	f      *os.File // owns the fd; gives us the runtime poller and deadlines
	rc     syscall.RawConn

	recvMu sync.Mutex // guards buf and oob, and serialises deadlines
	buf    []byte
	oob    []byte

	closeOnce sync.Once
	closeErr  error
	onClose   func()
}

// openSocket creates a packet socket in namespace ns, bound to ifName, which
// is looked up through nl (a netlink handle bound to the same namespace).
func openSocket(ns netns.NsHandle, nl *netlink.Handle, ifName string) (*Socket, error) {
	link, err := nl.LinkByName(ifName)
	if err != nil {
		return nil, fmt.Errorf("interface %s: %w", ifName, err)
	}
	// Only socket() has to run inside the namespace: a socket belongs to
	// the namespace it was created in for its whole life, and bind
	// resolves the ifindex there, whatever thread calls it.
	//
	// Protocol 0 means the socket receives nothing until bind sets
	// ETH_P_ALL together with the interface; opening it with ETH_P_ALL
	// directly would queue frames from every interface in the namespace
	// in between.
	fd := -1
	err = inNetns(ns, func() error {
		var err error
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("AF_PACKET socket on %s: %w", ifName, err)
	}
	fail := func(what string, err error) (*Socket, error) {
		unix.Close(fd)
		return nil, fmt.Errorf("%s on %s: %w", what, ifName, err)
	}
	// The kernel strips a VLAN tag from received frames into metadata
	// before packet sockets see them (even without hardware offload);
	// PACKET_AUXDATA returns it so Recv can put it back, as libpcap does.
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_AUXDATA, 1); err != nil {
		return fail("PACKET_AUXDATA", err)
	}
	// Skip our own and other sockets' transmissions in the kernel where
	// supported (Linux 4.20+); Recv filters PACKET_OUTGOING as well.
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1); err != nil && err != unix.ENOPROTOOPT {
		return fail("PACKET_IGNORE_OUTGOING", err)
	}
	sa := &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: link.Attrs().Index}
	if err := unix.Bind(fd, sa); err != nil {
		return fail("bind", err)
	}
	// A non-blocking fd makes os.NewFile register it with the runtime
	// poller, which gives Recv deadlines without parking a thread.
	f := os.NewFile(uintptr(fd), "packet:"+ifName)
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Socket{
		ifName: ifName,
		f:      f,
		rc:     rc,
		buf:    make([]byte, maxFrame),
		oob:    make([]byte, unix.CmsgSpace(sizeofTpacketAuxdata)),
	}, nil
}

// htons converts to network byte order, which sockaddr_ll.sll_protocol
// expects, independent of the host's byte order.
func htons(v uint16) uint16 {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], v)
	return binary.NativeEndian.Uint16(b[:])
}

// Interface returns the name of the interface the socket is bound to.
func (s *Socket) Interface() string { return s.ifName }

// Send transmits one complete Ethernet frame (destination MAC first, no FCS)
// on the socket's interface, unchanged.
func (s *Socket) Send(frame []byte) error {
	var n int
	var werr error
	err := s.rc.Write(func(fd uintptr) bool {
		n, werr = unix.Write(int(fd), frame)
		return werr != unix.EAGAIN // EAGAIN: wait until writable
	})
	if err == nil {
		err = werr
	}
	if err != nil {
		return fmt.Errorf("send on %s: %w", s.ifName, err)
	}
	if n != len(frame) {
		return fmt.Errorf("send on %s: short write %d of %d bytes", s.ifName, n, len(frame))
	}
	return nil
}

// Recv returns the next frame that arrived on the interface, waiting at most
// timeout. Frames sent from this host's side (PACKET_OUTGOING) are never
// returned. If nothing arrives, the error matches ErrTimeout (and
// os.ErrDeadlineExceeded). A timeout <= 0 only returns an already queued
// frame and never waits.
func (s *Socket) Recv(timeout time.Duration) ([]byte, error) {
	return s.RecvMatching(timeout, nil)
}

// RecvMatching is Recv that discards frames for which match returns false,
// so a test can wait for its frame despite unrelated traffic. timeout bounds
// the whole wait, not each frame. A nil match accepts every frame. The
// returned slice is the caller's to keep.
func (s *Socket) RecvMatching(timeout time.Duration, match func(frame []byte) bool) ([]byte, error) {
	s.recvMu.Lock()
	defer s.recvMu.Unlock()
	wait := timeout > 0
	var deadline time.Time
	if wait {
		deadline = time.Now().Add(timeout)
	}
	if err := s.f.SetReadDeadline(deadline); err != nil {
		return nil, fmt.Errorf("recv on %s: %w", s.ifName, err)
	}
	for {
		frame, err := s.recvOne(wait)
		if err != nil {
			return nil, err
		}
		if frame != nil && (match == nil || match(frame)) {
			return frame, nil
		}
	}
}

// Drain discards every frame already queued on the socket, without waiting,
// and returns how many it discarded. Tests call it to start from a clean
// slate after setup traffic.
func (s *Socket) Drain() (int, error) {
	s.recvMu.Lock()
	defer s.recvMu.Unlock()
	// Clear a deadline left by an earlier Recv: once it has passed, the
	// poller would refuse to read at all and Drain would discard nothing.
	if err := s.f.SetReadDeadline(time.Time{}); err != nil {
		return 0, fmt.Errorf("drain on %s: %w", s.ifName, err)
	}
	n := 0
	for {
		frame, err := s.recvOne(false)
		if errors.Is(err, ErrTimeout) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if frame != nil {
			n++
		}
	}
}

// recvOne reads one frame; s.recvMu must be held. It returns a nil frame
// without error for outgoing frames, which callers skip. Without wait it
// reports ErrTimeout when nothing is queued.
func (s *Socket) recvOne(wait bool) ([]byte, error) {
	var (
		n, oobn, flags int
		from           unix.Sockaddr
		rerr           error
	)
	err := s.rc.Read(func(fd uintptr) bool {
		n, oobn, flags, from, rerr = unix.Recvmsg(int(fd), s.buf, s.oob, 0)
		// Returning false parks until readable (or the deadline).
		return !wait || (rerr != unix.EAGAIN && rerr != unix.EINTR)
	})
	if err == nil {
		err = rerr
	}
	switch {
	case err == nil:
	case errors.Is(err, os.ErrDeadlineExceeded), err == unix.EAGAIN, err == unix.EINTR:
		return nil, fmt.Errorf("%w on %s: %w", ErrTimeout, s.ifName, os.ErrDeadlineExceeded)
	default:
		return nil, fmt.Errorf("recv on %s: %w", s.ifName, err)
	}
	if flags&unix.MSG_TRUNC != 0 {
		return nil, fmt.Errorf("recv on %s: frame longer than %d bytes", s.ifName, len(s.buf))
	}
	if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
		return nil, nil
	}
	return withVLANTag(s.buf[:n], s.oob[:oobn]), nil
}

// withVLANTag returns a copy of frame with the 802.1Q tag that the kernel
// moved into the auxiliary data (if any) re-inserted after the MAC
// addresses, so callers see the frame as it was on the wire.
func withVLANTag(frame, oob []byte) []byte {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err == nil && len(frame) >= 12 {
		for _, m := range msgs {
			if m.Header.Level != unix.SOL_PACKET || m.Header.Type != unix.PACKET_AUXDATA || len(m.Data) < sizeofTpacketAuxdata {
				continue
			}
			// struct tpacket_auxdata: status u32, len u32, snaplen u32,
			// mac u16, net u16, vlan_tci u16, vlan_tpid u16.
			status := binary.NativeEndian.Uint32(m.Data[0:])
			if status&unix.TP_STATUS_VLAN_VALID == 0 {
				continue
			}
			tci := binary.NativeEndian.Uint16(m.Data[16:])
			tpid := uint16(unix.ETH_P_8021Q)
			if status&unix.TP_STATUS_VLAN_TPID_VALID != 0 {
				tpid = binary.NativeEndian.Uint16(m.Data[18:])
			}
			out := make([]byte, len(frame)+4)
			copy(out, frame[:12])
			binary.BigEndian.PutUint16(out[12:], tpid)
			binary.BigEndian.PutUint16(out[14:], tci)
			copy(out[16:], frame[12:])
			return out
		}
	}
	return bytes.Clone(frame)
}

// Close closes the socket. It is safe to call more than once; later calls
// return the result of the first.
func (s *Socket) Close() error {
	s.closeOnce.Do(func() {
		s.closeErr = s.f.Close()
		if s.onClose != nil {
			s.onClose()
		}
	})
	return s.closeErr
}
