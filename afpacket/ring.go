//go:build linux

package afpacket

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// IO is how a port moves frames between the kernel and the process.
type IO int

const (
	// Auto is Ring where the kernel sets the rings up, Mmsg where it
	// refuses them (Port.RingRefused says why).
	Auto IO = iota
	// Ring reads received frames from a ring the kernel shares with
	// the process (TPACKET_V2): the process reads the frames in the
	// slots the kernel has filled, with no system call, and hands the
	// slots back once done with them (a frame longer than a slot is
	// read whole from the socket, in its turn). A frame waits no longer
	// than with Mmsg: the kernel wakes the reader for each. It sends by
	// sendmmsg from a socket of its own that the runtime's poller does
	// not watch (a send ring costs more on veths: txRing).
	Ring
	// RingV3 is Ring with frames coming in through a TPACKET_V3 ring of
	// blocks, which the kernel hands over whole, when full or when its
	// oldest frame has waited a millisecond: one wake-up per block
	// rather than per frame, at the cost of up to a millisecond more
	// per frame when traffic is light.
	RingV3
	// Mmsg moves frames by recvmmsg and sendmmsg: a system call and a
	// copy per batch each way, on any Linux since 4.20.
	Mmsg
)

// ioNames are the IOs by name, as ParseIO and --port-io take them.
var ioNames = []string{Auto: "auto", Ring: "ring", RingV3: "ring-v3", Mmsg: "mmsg"}

func (m IO) String() string {
	if m >= 0 && int(m) < len(ioNames) {
		return ioNames[m]
	}
	return fmt.Sprintf("IO(%d)", int(m))
}

// ParseIO reads an IO by its name: "auto", "ring", "ring-v3" or "mmsg".
func ParseIO(s string) (IO, error) {
	for m, name := range ioNames {
		if s == name {
			return IO(m), nil
		}
	}
	return 0, fmt.Errorf("port IO %q: want %s", s, strings.Join(ioNames, ", "))
}

// An Option changes how Open opens a port.
type Option func(*options)

type options struct {
	io   IO
	ring ringSizes
	// sendRing has Ring and RingV3 ports send from a ring too.
	sendRing bool
}

// WithIO sets how the port moves frames (Auto by default). With Ring or
// RingV3, Open fails where the kernel refuses the rings.
func WithIO(m IO) Option { return func(o *options) { o.io = m } }

// ringSizes are the sizes of a port's rings; zero fields take
// defaultRing's.
type ringSizes struct {
	// rxSlots is how many frames Ring's receive ring holds, each in a
	// slot of rxSlot bytes.
	rxSlots int
	// rxBlock is RingV3's receive ring's block in bytes (a multiple of
	// the page size, and room for the longest frame with its headers);
	// rxBlocks how many there are. Ring's blocks are a page of slots.
	rxBlock, rxBlocks int
	// rxRetireMs is how long the kernel keeps a V3 block that is not
	// full before handing it over, in milliseconds: the most a frame
	// waits in the ring when traffic is light.
	rxRetireMs int
	// txSlots is how many frames the send ring holds (withSendRing).
	txSlots int
}

// defaultRing: 8 MiB in, 4,096 frames for Ring, some 26,000 frames of
// 64 bytes (400 of 9,216) in 4 MiB for RingV3; 256 frames out when a
// port sends from a ring (withSendRing), about 2.4 MiB. Mmsg's 8 MiB
// socket buffer holds some 10,000 frames of 64 bytes, each costing it a
// socket buffer's whole truesize. A Go target forwarding at a few
// hundred thousand frames a second on two cores shared with its
// traffic's senders loses frames with 2,048 slots: its goroutines wait
// their turn for longer than that many take to come in.
var defaultRing = ringSizes{rxSlots: 4096, rxBlock: 64 << 10, rxBlocks: 64, rxRetireMs: 1, txSlots: 256}

// rxSlot is the size of a slot of Ring's receive ring: a frame of up to
// 1,982 bytes with the kernel's headers. Longer ones, rare where
// frames are small and batches matter, come whole through the socket.
const rxSlot = 2048

// withRingSizes sets the rings' sizes (tests make the kernel refuse them).
func withRingSizes(s ringSizes) Option { return func(o *options) { o.ring = s } }

// withSendRing has a port on rings send from a TPACKET_V2 ring rather
// than by sendmmsg (txRing says why it does not by default).
func withSendRing() Option { return func(o *options) { o.sendRing = true } }

// Offsets in the rings' headers (linux/if_packet.h).
const (
	// blockStatusOff, blockPktsOff and blockFirstOff are
	// tpacket_block_desc's hdr.bh1.block_status, num_pkts and
	// offset_to_first_pkt.
	blockStatusOff = 8
	blockPktsOff   = 12
	blockFirstOff  = 16
	// tpacket2HdrLen and tpacket3HdrLen are TPACKET2_HDRLEN and
	// TPACKET3_HDRLEN: a received frame's header and the sockaddr_ll
	// after it, which the frame's data never overlaps.
	tpacket2HdrLen = txDataOff + int(unsafe.Sizeof(unix.RawSockaddrLinklayer{}))
	tpacket3HdrLen = (int(unsafe.Sizeof(unix.Tpacket3Hdr{}))+15)&^15 + int(unsafe.Sizeof(unix.RawSockaddrLinklayer{}))
	// txDataOff is where a send slot's frame starts: TPACKET2_HDRLEN
	// less the sockaddr_ll, as the kernel reads it without
	// PACKET_TX_HAS_OFF.
	txDataOff = (int(unsafe.Sizeof(unix.Tpacket2Hdr{})) + 15) &^ 15
	// txSlot is a send slot's size: a header and the longest frame,
	// 16-byte aligned (TPACKET_ALIGNMENT).
	txSlot = (txDataOff + MaxFrame + 15) &^ 15
	// txBlock holds whole slots: the kernel never lets one straddle two
	// blocks.
	txBlock = 64 << 10
)

// mapping is a ring's memory in the process, unmapped once.
type mapping struct {
	mu sync.Mutex
	b  []byte
}

func (m *mapping) unmap() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.b != nil {
		unix.Munmap(m.b)
		m.b = nil
	}
}

// rxRing is the state of a receive ring.
type rxRing struct {
	mem  *mapping
	base unsafe.Pointer
	v3   bool

	// Ring (V2): next is the slot to read next; the done slots before
	// it were read by the last Recv and go back to the kernel at the
	// next.
	slots, next, done int
	// copies are frames longer than a slot, read from the socket.
	copies [][]byte

	// RingV3: cur is the block being read, held (the process's, to hand
	// back) while held; left frames of it remain from offset off.
	block, blocks int
	cur           int
	held          bool
	left, off     int
}

// txRing is a send ring on the sending socket (a socket has one TPACKET
// version, and V3 has no send slots on older kernels). On veths it costs
// more CPU per frame than sendmmsg (BenchmarkSend: the kernel builds each
// frame's buffer from pages of the ring, which the receiving stack then
// pulls together), so ports send by sendmmsg; withSendRing keeps it,
// measured beside sendmmsg.
type txRing struct {
	mem      *mapping
	base     unsafe.Pointer
	slots    int
	perBlock int
	// head is the next slot to fill, where the kernel also looks next.
	head int
}

// openRing opens a port on a socket receiving into a TPACKET_V2 ring
// (TPACKET_V3 with v3) and one sending by sendmmsg, or with sendRing
// from a TPACKET_V2 ring.
func openRing(ifi *net.Interface, sz ringSizes, v3, sendRing bool) (p *Port, err error) {
	def := defaultRing
	if !v3 {
		// Blocks of a page: the kernel finds those however fragmented
		// its memory.
		def.rxBlock = pageSize
	}
	for _, f := range []struct{ v, d *int }{{&sz.rxSlots, &def.rxSlots}, {&sz.rxBlock, &def.rxBlock},
		{&sz.rxBlocks, &def.rxBlocks}, {&sz.rxRetireMs, &def.rxRetireMs}, {&sz.txSlots, &def.txSlots}} {
		if *f.v == 0 {
			*f.v = *f.d
		}
	}
	ifName := ifi.Name
	var cleanups []func()
	defer func() {
		if err != nil {
			for i := len(cleanups) - 1; i >= 0; i-- {
				cleanups[i]()
			}
			err = fmt.Errorf("port %s: ring: %w", ifName, err)
		}
	}()
	socket := func() (int, error) {
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			cleanups = append(cleanups, func() { unix.Close(fd) })
		}
		return fd, err
	}
	mmap := func(fd, size int) (*mapping, error) {
		b, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
		if err != nil {
			return nil, fmt.Errorf("mmap %d bytes: %w", size, err)
		}
		m := &mapping{b: b}
		cleanups = append(cleanups, m.unmap)
		return m, nil
	}

	// Receiving.
	rfd, err := socket()
	if err != nil {
		return nil, fmt.Errorf("AF_PACKET socket: %w", err)
	}
	version, versionName := unix.TPACKET_V2, "TPACKET_V2"
	if v3 {
		version, versionName = unix.TPACKET_V3, "TPACKET_V3"
	}
	if err := unix.SetsockoptInt(rfd, unix.SOL_PACKET, unix.PACKET_VERSION, version); err != nil {
		return nil, fmt.Errorf("%s: %w", versionName, err)
	}
	// As Mmsg's socket: our own transmissions are not receptions.
	if err := unix.SetsockoptInt(rfd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1); err != nil {
		return nil, fmt.Errorf("PACKET_IGNORE_OUTGOING (Linux 4.20 or later): %w", err)
	}
	rx := &rxRing{v3: v3}
	var rxBytes int
	if v3 {
		// V3 frames are as long as they are; tp_frame_size only has
		// to divide the block for the kernel's count of frames.
		const frameUnit = 2048
		req := unix.TpacketReq3{
			Block_size:     uint32(sz.rxBlock),
			Block_nr:       uint32(sz.rxBlocks),
			Frame_size:     frameUnit,
			Frame_nr:       uint32(sz.rxBlock / frameUnit * sz.rxBlocks),
			Retire_blk_tov: uint32(sz.rxRetireMs),
		}
		if err := unix.SetsockoptTpacketReq3(rfd, unix.SOL_PACKET, unix.PACKET_RX_RING, &req); err != nil {
			return nil, fmt.Errorf("PACKET_RX_RING (%d blocks of %d bytes): %w", sz.rxBlocks, sz.rxBlock, err)
		}
		rx.block, rx.blocks, rxBytes = sz.rxBlock, sz.rxBlocks, sz.rxBlock*sz.rxBlocks
	} else {
		// A frame longer than a slot is queued on the socket whole
		// as well (and flagged TP_STATUS_COPY in its slot), while
		// the socket buffer has room.
		if err := unix.SetsockoptInt(rfd, unix.SOL_PACKET, unix.PACKET_COPY_THRESH, 1); err != nil {
			return nil, fmt.Errorf("PACKET_COPY_THRESH: %w", err)
		}
		_ = unix.SetsockoptInt(rfd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20)
		perBlock := sz.rxBlock / rxSlot
		req := unix.TpacketReq{Block_size: uint32(sz.rxBlock), Block_nr: uint32(sz.rxSlots / perBlock), Frame_size: rxSlot, Frame_nr: uint32(sz.rxSlots / perBlock * perBlock)}
		if err := unix.SetsockoptTpacketReq(rfd, unix.SOL_PACKET, unix.PACKET_RX_RING, &req); err != nil {
			return nil, fmt.Errorf("PACKET_RX_RING (%d slots of %d bytes): %w", req.Frame_nr, rxSlot, err)
		}
		if perBlock*rxSlot != sz.rxBlock {
			// Slots are addressed as one array.
			return nil, fmt.Errorf("PACKET_RX_RING: blocks of %d bytes are not whole slots of %d", sz.rxBlock, rxSlot)
		}
		rx.slots, rxBytes = int(req.Frame_nr), int(req.Frame_nr)*rxSlot
	}
	rmem, err := mmap(rfd, rxBytes)
	if err != nil {
		return nil, err
	}
	rx.mem, rx.base = rmem, unsafe.Pointer(&rmem.b[0])
	mreq := unix.PacketMreq{Ifindex: int32(ifi.Index), Type: unix.PACKET_MR_PROMISC}
	if err := unix.SetsockoptPacketMreq(rfd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
		return nil, fmt.Errorf("promiscuous mode: %w", err)
	}

	// Sending: a socket of its own, kept off the runtime's poller. A
	// frame's buffer, freed once the far end has it, wakes the
	// socket's waiters (sock_def_write_space): on a socket the poller
	// watches, that is a wake-up of the poller per frame sent, which on
	// veths costs about as much as sending. Nothing waits on this one
	// but a Send finding the kernel's buffer full (poll(2)).
	sfd, err := socket()
	if err != nil {
		return nil, fmt.Errorf("AF_PACKET socket: %w", err)
	}
	// Frames in flight count against the send buffer; forcing needs
	// CAP_NET_ADMIN, and without it the default stays.
	_ = unix.SetsockoptInt(sfd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, 8<<20)
	var tx *txRing
	if sendRing {
		if err := unix.SetsockoptInt(sfd, unix.SOL_PACKET, unix.PACKET_VERSION, unix.TPACKET_V2); err != nil {
			return nil, fmt.Errorf("TPACKET_V2: %w", err)
		}
		// A frame the kernel will not send (longer than the interface's
		// MTU) is skipped; without this it stops the ring at its slot.
		if err := unix.SetsockoptInt(sfd, unix.SOL_PACKET, unix.PACKET_LOSS, 1); err != nil {
			return nil, fmt.Errorf("PACKET_LOSS: %w", err)
		}
		perBlock := txBlock / txSlot
		txBlocks := (sz.txSlots + perBlock - 1) / perBlock
		treq := unix.TpacketReq{Block_size: txBlock, Block_nr: uint32(txBlocks), Frame_size: uint32(txSlot), Frame_nr: uint32(perBlock * txBlocks)}
		if err := unix.SetsockoptTpacketReq(sfd, unix.SOL_PACKET, unix.PACKET_TX_RING, &treq); err != nil {
			return nil, fmt.Errorf("PACKET_TX_RING (%d slots of %d bytes): %w", treq.Frame_nr, txSlot, err)
		}
		tmem, err := mmap(sfd, txBlock*txBlocks)
		if err != nil {
			return nil, err
		}
		tx = &txRing{mem: tmem, base: unsafe.Pointer(&tmem.b[0]), slots: perBlock * txBlocks, perBlock: perBlock}
	}
	// Protocol 0: the sending socket receives nothing.
	if err := unix.Bind(sfd, &unix.SockaddrLinklayer{Ifindex: ifi.Index}); err != nil {
		return nil, fmt.Errorf("bind: %w", err)
	}
	// Bound last, so that no frame reaches the ring before the rest is
	// set up.
	if err := unix.Bind(rfd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi.Index}); err != nil {
		return nil, fmt.Errorf("bind: %w", err)
	}

	rf := os.NewFile(uintptr(rfd), "afpacket-ring:"+ifName)
	// From here the file owns the receiving descriptor.
	cleanups = []func(){func() { rf.Close() }, rmem.unmap, func() { unix.Close(sfd) }}
	if tx != nil {
		cleanups = append(cleanups, tx.mem.unmap)
	}
	rrc, err := rf.SyscallConn()
	if err != nil {
		return nil, err
	}
	io := Ring
	if v3 {
		io = RingV3
	}
	p = &Port{Name: ifName, Index: ifi.Index, f: rf, rc: rrc, io: io, rx: rx, sfd: sfd, tx: tx}
	// Close leaves the receive ring mapped (the last frames may be in
	// use); this unmaps it once the port is gone, if no Recv did.
	runtime.AddCleanup(p, func(m *mapping) { m.unmap() }, rmem)
	return p, nil
}

var pageSize = os.Getpagesize()

// u32 is the 32-bit word at off bytes past base.
func u32(base unsafe.Pointer, off int) *uint32 {
	return (*uint32)(unsafe.Add(base, off))
}

// recvRing is Recv on a receive ring.
func (p *Port) recvRing() ([][]byte, error) {
	for {
		if p.closed.Load() {
			// No frame of the ring is in use past this call.
			p.rx.mem.unmap()
			return nil, ErrClosed
		}
		var out [][]byte
		var err error
		if p.rx.v3 {
			out, err = p.recvBlock()
		} else {
			out, err = p.recvSlots()
		}
		if err != nil {
			if p.closed.Load() {
				p.rx.mem.unmap()
				return nil, ErrClosed
			}
			return nil, err
		}
		if len(out) > 0 {
			return out, nil
		}
	}
}

// await waits on the poller until the word status has TP_STATUS_USER
// set: the kernel writes a slot's or a block's frames, then its status,
// so that from then on the frames can be read.
func (p *Port) await(status *uint32) error {
	return p.rc.Read(func(uintptr) bool {
		for {
			if atomic.LoadUint32(status)&unix.TP_STATUS_USER != 0 {
				return true
			}
			if !p.BusyPoll || p.closed.Load() {
				// The poller wakes us when the kernel hands a frame
				// or block over (or the socket closes).
				return false
			}
		}
	})
}

// recvSlots reads Ring's receive ring: the frames in the slots the
// kernel has filled, up to Batch, after handing back those of the last
// Recv.
func (p *Port) recvSlots() ([][]byte, error) {
	r := p.rx
	for ; r.done > 0; r.done-- {
		i := (r.next - r.done + r.slots) % r.slots
		atomic.StoreUint32(u32(r.base, i*rxSlot), unix.TP_STATUS_KERNEL)
	}
	if err := p.await(u32(r.base, r.next*rxSlot)); err != nil {
		return nil, err
	}
	out := p.rout[:0]
	for len(out) < Batch {
		off := r.next * rxSlot
		h := (*unix.Tpacket2Hdr)(unsafe.Add(r.base, off))
		status := atomic.LoadUint32(&h.Status)
		if status&unix.TP_STATUS_USER == 0 {
			break
		}
		r.next = (r.next + 1) % r.slots
		r.done++
		var f []byte
		ok := true
		if status&unix.TP_STATUS_COPY != 0 {
			// Longer than a slot: the whole frame is next on the
			// socket's queue (only such frames go there).
			f, ok = p.recvCopy(len(out), int(h.Len))
		} else if h.Snaplen < h.Len || int(h.Len) > MaxFrame-4 {
			// Cut, and no whole copy: the socket buffer was full.
			ok = false
		} else {
			f = unsafe.Slice((*byte)(unsafe.Add(r.base, off+int(h.Mac))), h.Snaplen)
		}
		if !ok {
			p.truncated.Add(1)
			continue
		}
		if status&unix.TP_STATUS_VLAN_VALID != 0 {
			tpid := uint16(0x8100)
			if status&unix.TP_STATUS_VLAN_TPID_VALID != 0 {
				tpid = h.Vlan_tpid
			}
			room := status&unix.TP_STATUS_COPY != 0 || int(h.Mac) >= tpacket2HdrLen+4
			f = withTag(f, room, tpid, h.Vlan_tci)
		}
		out = append(out, f)
	}
	return out, nil
}

// recvCopy reads the frame of a slot flagged TP_STATUS_COPY, n bytes
// long, from the socket into a buffer of its own (the i-th of this
// Recv's), 4 bytes in so that a tag fits in front; false for a frame
// longer than a port takes.
func (p *Port) recvCopy(i, n int) ([]byte, bool) {
	r := p.rx
	if r.copies == nil {
		r.copies = make([][]byte, Batch)
	}
	if r.copies[i] == nil {
		r.copies[i] = make([]byte, MaxFrame)
	}
	b := r.copies[i]
	var got int
	var err error
	p.rc.Control(func(fd uintptr) {
		got, _, err = unix.Recvfrom(int(fd), b[4:], unix.MSG_DONTWAIT|unix.MSG_TRUNC)
	})
	if err != nil || got != n || n > MaxFrame-4 {
		return nil, false
	}
	return b[4 : 4+n], true
}

// withTag is frame f with a VLAN tag of tpid and tci put back after its
// addresses: in place, in the 4 bytes in front of f, when room says
// they are free (the padding the kernel leaves before the data), else
// in a new slice.
func withTag(f []byte, room bool, tpid, tci uint16) []byte {
	if len(f) < 12 {
		return f
	}
	var b []byte
	if room {
		b = unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(f)), -4)), len(f)+4)
		copy(b[0:12], b[4:16])
	} else {
		// Never so on the kernels we know (the data starts 14 or
		// more bytes past the headers); a copy if it ever is.
		b = make([]byte, len(f)+4)
		copy(b[0:12], f[0:12])
		copy(b[16:], f[12:])
	}
	binary.BigEndian.PutUint16(b[12:], tpid)
	binary.BigEndian.PutUint16(b[14:], tci)
	return b
}

// recvBlock reads RingV3's receive ring: the frames of the block the
// kernel handed over, up to Batch at a time; the block goes back to the
// kernel at the Recv after its last frame.
func (p *Port) recvBlock() ([][]byte, error) {
	r := p.rx
	if r.left == 0 {
		if r.held {
			// Hand the block back (its frames are done with) and
			// move to the next, which the kernel fills after.
			atomic.StoreUint32(u32(r.base, r.cur*r.block+blockStatusOff), unix.TP_STATUS_KERNEL)
			r.held = false
			r.cur = (r.cur + 1) % r.blocks
		}
		if err := p.await(u32(r.base, r.cur*r.block+blockStatusOff)); err != nil {
			return nil, err
		}
		blk := r.cur * r.block
		r.held = true
		r.left = int(*u32(r.base, blk+blockPktsOff))
		r.off = blk + int(*u32(r.base, blk+blockFirstOff))
	}
	out := p.rout[:0]
	for r.left > 0 && len(out) < Batch {
		h := (*unix.Tpacket3Hdr)(unsafe.Add(r.base, r.off))
		r.left--
		off := r.off
		r.off += int(h.Next_offset)
		// As Mmsg takes at most MaxFrame-4 bytes: what is longer
		// untagged is dropped either way.
		if int(h.Len) > MaxFrame-4 || h.Snaplen < h.Len {
			p.truncated.Add(1)
			continue
		}
		f := unsafe.Slice((*byte)(unsafe.Add(r.base, off+int(h.Mac))), h.Snaplen)
		if h.Status&unix.TP_STATUS_VLAN_VALID != 0 {
			tpid := uint16(0x8100)
			if h.Status&unix.TP_STATUS_VLAN_TPID_VALID != 0 {
				tpid = h.Hv1.Vlan_tpid
			}
			f = withTag(f, int(h.Mac) >= tpacket3HdrLen+4, tpid, uint16(h.Hv1.Vlan_tci))
		}
		out = append(out, f)
	}
	return out, nil
}

// txSlotAt is slot i's header and frame space.
func (t *txRing) txSlotAt(i int) (*unix.Tpacket2Hdr, []byte) {
	off := i/t.perBlock*txBlock + i%t.perBlock*txSlot
	h := (*unix.Tpacket2Hdr)(unsafe.Add(t.base, off))
	return h, unsafe.Slice((*byte)(unsafe.Add(t.base, off+txDataOff)), MaxFrame)
}

// free says whether the kernel is done with slot i's frame.
func (t *txRing) free(i int) bool {
	h, _ := t.txSlotAt(i)
	st := atomic.LoadUint32(&h.Status)
	return st&(unix.TP_STATUS_SEND_REQUEST|unix.TP_STATUS_SENDING) == 0
}

// kick has the kernel send every slot filled so far, without waiting.
func kick(fd int) syscall.Errno {
	// Raw, as recvmmsg: MSG_DONTWAIT does not block.
	_, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), 0, 0, unix.MSG_DONTWAIT, 0, 0)
	return e
}

// waitWritable waits until the sending socket can take more (poll(2):
// it is not on the runtime's poller), or the port is closed.
func (p *Port) waitWritable() error {
	fds := []unix.PollFd{{Fd: int32(p.sfd), Events: unix.POLLOUT}}
	for !p.closed.Load() {
		// A bounded wait, so that a Close is seen within it.
		if _, err := unix.Poll(fds, 20); err != nil && err != unix.EINTR {
			return fmt.Errorf("port %s: poll: %w", p.Name, err)
		}
		if fds[0].Revents&(unix.POLLOUT|unix.POLLERR) != 0 {
			return nil
		}
	}
	return ErrClosed
}

// sendSocket is Send on the sending socket of a port on rings: sendmmsg,
// as Mmsg, but off the poller.
func (p *Port) sendSocket(frames [][]byte) error {
	if p.closed.Load() {
		return ErrClosed
	}
	for len(frames) > 0 {
		k := p.fillHeaders(frames)
		if k < 0 {
			return fmt.Errorf("port %s: an empty frame", p.Name)
		}
		r, _, e := unix.RawSyscall6(unix.SYS_SENDMMSG, uintptr(p.sfd), uintptr(unsafe.Pointer(&p.whdr[0])), uintptr(k), unix.MSG_DONTWAIT, 0, 0)
		switch e {
		case 0:
			frames = frames[r:]
		case unix.EAGAIN, unix.ENOBUFS:
			if err := p.waitWritable(); err != nil {
				return err
			}
		default:
			return fmt.Errorf("port %s: sendmmsg: %w", p.Name, e)
		}
	}
	return nil
}

// sendRing is Send on the send ring: the frames copied into free slots,
// then one system call for the kernel to send them, per ring's worth.
func (p *Port) sendRing(frames [][]byte) error {
	t := p.tx
	if p.closed.Load() {
		return ErrClosed
	}
	for _, f := range frames {
		if len(f) == 0 {
			return fmt.Errorf("port %s: an empty frame", p.Name)
		}
		if len(f) > MaxFrame {
			return fmt.Errorf("port %s: a frame of %d bytes, longer than %d", p.Name, len(f), MaxFrame)
		}
	}
	for len(frames) > 0 {
		k := 0
		for k < len(frames) && t.free(t.head) {
			h, data := t.txSlotAt(t.head)
			h.Len = uint32(copy(data, frames[k]))
			// The frame is written before the kernel may read it.
			atomic.StoreUint32(&h.Status, unix.TP_STATUS_SEND_REQUEST)
			t.head = (t.head + 1) % t.slots
			k++
		}
		frames = frames[k:]
		for {
			switch e := kick(p.sfd); e {
			case 0:
			case unix.EAGAIN, unix.ENOBUFS:
				// The device or the send buffer is full: the frames
				// not sent stay requested, for when it can take
				// them.
				if err := p.waitWritable(); err != nil {
					return err
				}
				continue
			default:
				return fmt.Errorf("port %s: send ring: %w", p.Name, e)
			}
			if len(frames) == 0 || t.free(t.head) {
				break
			}
			// The ring is full: wait for the kernel to free the
			// next slot (poll says so when it has).
			if err := p.waitWritable(); err != nil {
				return err
			}
		}
	}
	return nil
}
