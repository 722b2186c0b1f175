//go:build linux

package afpacket

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"runtime"
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
	// Ring maps two rings the kernel shares with the process: frames
	// come in through a TPACKET_V3 ring of blocks, which the kernel
	// hands over whole (one wake-up and no system call for a block of
	// frames), and go out through a TPACKET_V2 ring of slots, with one
	// system call per batch to have the kernel send what they hold.
	Ring
	// Mmsg moves frames by recvmmsg and sendmmsg: a system call and a
	// copy per batch each way, on any Linux since 4.20.
	Mmsg
)

func (m IO) String() string {
	switch m {
	case Auto:
		return "auto"
	case Ring:
		return "ring"
	case Mmsg:
		return "mmsg"
	}
	return fmt.Sprintf("IO(%d)", int(m))
}

// ParseIO reads an IO by its name: "auto", "ring" or "mmsg".
func ParseIO(s string) (IO, error) {
	for _, m := range []IO{Auto, Ring, Mmsg} {
		if s == m.String() {
			return m, nil
		}
	}
	return 0, fmt.Errorf("port IO %q: want auto, ring or mmsg", s)
}

// An Option changes how Open opens a port.
type Option func(*options)

type options struct {
	io   IO
	ring ringSizes
}

// WithIO sets how the port moves frames (Auto by default). With Ring,
// Open fails where the kernel refuses the rings.
func WithIO(m IO) Option { return func(o *options) { o.io = m } }

// ringSizes are the sizes of a port's rings; zero fields take
// defaultRing's.
type ringSizes struct {
	// rxBlock is the receive ring's block in bytes (a multiple of the
	// page size, and room for the longest frame with its headers);
	// rxBlocks how many there are.
	rxBlock, rxBlocks int
	// rxRetireMs is how long the kernel keeps a block that is not full
	// before handing it over, in milliseconds: the most a frame waits
	// in the ring when traffic is light.
	rxRetireMs int
	// txSlots is how many frames the send ring holds.
	txSlots int
}

// defaultRing: 2 MiB in (some 13,000 frames of 64 bytes, 200 of 9,216),
// and 256 frames out (four batches), about 2.4 MiB. The receive ring
// holds as many small frames as the 8 MiB socket buffer of Mmsg does
// (each of those costs the buffer a whole socket buffer's truesize).
var defaultRing = ringSizes{rxBlock: 64 << 10, rxBlocks: 32, rxRetireMs: 1, txSlots: 256}

// withRingSizes sets the rings' sizes (tests make the kernel refuse them).
func withRingSizes(s ringSizes) Option { return func(o *options) { o.ring = s } }

// Offsets in the rings' headers (linux/if_packet.h).
const (
	// blockStatusOff, blockPktsOff and blockFirstOff are
	// tpacket_block_desc's hdr.bh1.block_status, num_pkts and
	// offset_to_first_pkt.
	blockStatusOff = 8
	blockPktsOff   = 12
	blockFirstOff  = 16
	// tpacket3HdrLen is TPACKET3_HDRLEN: the frame header and the
	// sockaddr_ll after it, where received frame data may not start.
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

// rxRing is the state of a receive ring: the block being read and the
// next frame in it.
type rxRing struct {
	mem    *mapping
	base   unsafe.Pointer
	block  int // bytes
	blocks int
	// cur is the block being read, held (owned by the process, to hand
	// back) while held; left frames of it remain from offset off.
	cur  int
	held bool
	left int
	off  int
}

// txRing is a send ring on a socket of its own (a socket has one
// TPACKET version, and the receive ring's V3 slots do not suit sending).
type txRing struct {
	f        *os.File
	rc       syscall.RawConn
	mem      *mapping
	base     unsafe.Pointer
	slots    int
	perBlock int
	// head is the next slot to fill, where the kernel also looks next.
	head int
}

// openRing opens a port on rings: a socket receiving into a TPACKET_V3
// ring and one sending from a TPACKET_V2 ring.
func openRing(ifi *net.Interface, sz ringSizes) (p *Port, err error) {
	def := defaultRing
	if sz.rxBlock == 0 {
		sz.rxBlock = def.rxBlock
	}
	if sz.rxBlocks == 0 {
		sz.rxBlocks = def.rxBlocks
	}
	if sz.rxRetireMs == 0 {
		sz.rxRetireMs = def.rxRetireMs
	}
	if sz.txSlots == 0 {
		sz.txSlots = def.txSlots
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
	if err := unix.SetsockoptInt(rfd, unix.SOL_PACKET, unix.PACKET_VERSION, unix.TPACKET_V3); err != nil {
		return nil, fmt.Errorf("TPACKET_V3: %w", err)
	}
	// As Mmsg's socket: our own transmissions are not receptions.
	if err := unix.SetsockoptInt(rfd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1); err != nil {
		return nil, fmt.Errorf("PACKET_IGNORE_OUTGOING (Linux 4.20 or later): %w", err)
	}
	// V3 frames are as long as they are; tp_frame_size only has to
	// divide the block for the kernel's count of frames.
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
	rmem, err := mmap(rfd, sz.rxBlock*sz.rxBlocks)
	if err != nil {
		return nil, err
	}
	mreq := unix.PacketMreq{Ifindex: int32(ifi.Index), Type: unix.PACKET_MR_PROMISC}
	if err := unix.SetsockoptPacketMreq(rfd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
		return nil, fmt.Errorf("promiscuous mode: %w", err)
	}

	// Sending.
	tfd, err := socket()
	if err != nil {
		return nil, fmt.Errorf("AF_PACKET socket: %w", err)
	}
	if err := unix.SetsockoptInt(tfd, unix.SOL_PACKET, unix.PACKET_VERSION, unix.TPACKET_V2); err != nil {
		return nil, fmt.Errorf("TPACKET_V2: %w", err)
	}
	// A frame the kernel will not send (longer than the interface's
	// MTU) is skipped; without this it stops the ring at its slot.
	if err := unix.SetsockoptInt(tfd, unix.SOL_PACKET, unix.PACKET_LOSS, 1); err != nil {
		return nil, fmt.Errorf("PACKET_LOSS: %w", err)
	}
	// Frames in flight count against the send buffer; forcing needs
	// CAP_NET_ADMIN, and without it the default stays.
	_ = unix.SetsockoptInt(tfd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, 8<<20)
	perBlock := txBlock / txSlot
	txBlocks := (sz.txSlots + perBlock - 1) / perBlock
	treq := unix.TpacketReq{Block_size: txBlock, Block_nr: uint32(txBlocks), Frame_size: uint32(txSlot), Frame_nr: uint32(perBlock * txBlocks)}
	if err := unix.SetsockoptTpacketReq(tfd, unix.SOL_PACKET, unix.PACKET_TX_RING, &treq); err != nil {
		return nil, fmt.Errorf("PACKET_TX_RING (%d slots of %d bytes): %w", treq.Frame_nr, txSlot, err)
	}
	tmem, err := mmap(tfd, txBlock*txBlocks)
	if err != nil {
		return nil, err
	}
	// Protocol 0: the sending socket receives nothing.
	if err := unix.Bind(tfd, &unix.SockaddrLinklayer{Ifindex: ifi.Index}); err != nil {
		return nil, fmt.Errorf("bind: %w", err)
	}
	// Bound last, so that no frame reaches the ring before the rest is
	// set up.
	if err := unix.Bind(rfd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi.Index}); err != nil {
		return nil, fmt.Errorf("bind: %w", err)
	}

	rf := os.NewFile(uintptr(rfd), "afpacket-ring:"+ifName)
	tf := os.NewFile(uintptr(tfd), "afpacket-ring-tx:"+ifName)
	// From here the files own the descriptors.
	cleanups = []func(){func() { rf.Close() }, func() { tf.Close() }, rmem.unmap, tmem.unmap}
	rrc, err := rf.SyscallConn()
	if err != nil {
		return nil, err
	}
	trc, err := tf.SyscallConn()
	if err != nil {
		return nil, err
	}
	p = &Port{Name: ifName, Index: ifi.Index, f: rf, rc: rrc, io: Ring,
		rx: &rxRing{mem: rmem, base: unsafe.Pointer(&rmem.b[0]), block: sz.rxBlock, blocks: sz.rxBlocks},
		tx: &txRing{f: tf, rc: trc, mem: tmem, base: unsafe.Pointer(&tmem.b[0]), slots: perBlock * txBlocks, perBlock: perBlock}}
	// Close leaves the receive ring mapped (the last frames may be in
	// use); this unmaps it once the port is gone, if no Recv did.
	runtime.AddCleanup(p, func(m *mapping) { m.unmap() }, rmem)
	return p, nil
}

// u32 is the 32-bit word at off bytes past base.
func u32(base unsafe.Pointer, off int) *uint32 {
	return (*uint32)(unsafe.Add(base, off))
}

// recvRing is Recv on the receive ring: the frames of the block the
// kernel handed over, up to Batch at a time; the block goes back to the
// kernel at the Recv after its last frame.
func (p *Port) recvRing() ([][]byte, error) {
	r := p.rx
	for {
		if p.closed.Load() {
			// No frame of the ring is in use past this call.
			r.mem.unmap()
			return nil, ErrClosed
		}
		if r.left == 0 {
			if r.held {
				// Hand the block back (its frames are done with)
				// and move to the next, which the kernel fills after.
				atomic.StoreUint32(u32(r.base, r.cur*r.block+blockStatusOff), unix.TP_STATUS_KERNEL)
				r.held = false
				r.cur = (r.cur + 1) % r.blocks
			}
			status := u32(r.base, r.cur*r.block+blockStatusOff)
			err := p.rc.Read(func(uintptr) bool {
				for {
					// The kernel writes a block's frames, then its
					// status: this load sees them all.
					if atomic.LoadUint32(status)&unix.TP_STATUS_USER != 0 {
						return true
					}
					if !p.BusyPoll || p.closed.Load() {
						// The poller wakes us when the kernel hands
						// a block over (or the socket closes).
						return false
					}
				}
			})
			if err != nil {
				if p.closed.Load() {
					r.mem.unmap()
					return nil, ErrClosed
				}
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
			if f, ok := p.ringFrame(h, r.off); ok {
				out = append(out, f)
			}
			r.off += int(h.Next_offset)
		}
		if len(out) > 0 {
			return out, nil
		}
	}
}

// ringFrame is the frame of header h (at off in the ring), its VLAN tag
// put back, or false for a frame too long to take (counted).
func (p *Port) ringFrame(h *unix.Tpacket3Hdr, off int) ([]byte, bool) {
	r := p.rx
	n := int(h.Snaplen)
	// As Mmsg takes at most MaxFrame-4 bytes: what is longer untagged
	// is dropped either way.
	if int(h.Len) > MaxFrame-4 || n < int(h.Len) {
		p.truncated.Add(1)
		return nil, false
	}
	mac := off + int(h.Mac)
	if h.Status&unix.TP_STATUS_VLAN_VALID == 0 || n < 12 {
		return unsafe.Slice((*byte)(unsafe.Add(r.base, mac)), n), true
	}
	tpid := uint16(0x8100)
	if h.Status&unix.TP_STATUS_VLAN_TPID_VALID != 0 {
		tpid = h.Hv1.Vlan_tpid
	}
	var b []byte
	if int(h.Mac) >= tpacket3HdrLen+4 {
		// The tag goes back in place: the addresses move 4 bytes
		// into the padding in front of the frame, which the kernel
		// left between its headers and the data.
		b = unsafe.Slice((*byte)(unsafe.Add(r.base, mac-4)), n+4)
		copy(b[0:12], b[4:16])
	} else {
		// Never so on the kernels we know (the data starts 14 or
		// more bytes past the headers); a copy if it ever is.
		b = make([]byte, n+4)
		src := unsafe.Slice((*byte)(unsafe.Add(r.base, mac)), n)
		copy(b[0:12], src[0:12])
		copy(b[16:], src[12:])
	}
	binary.BigEndian.PutUint16(b[12:], tpid)
	binary.BigEndian.PutUint16(b[14:], uint16(h.Hv1.Vlan_tci))
	return b, true
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
func kick(fd uintptr) syscall.Errno {
	// Raw, as recvmmsg: MSG_DONTWAIT does not block.
	_, _, e := unix.RawSyscall6(unix.SYS_SENDTO, fd, 0, 0, unix.MSG_DONTWAIT, 0, 0)
	return e
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
		var errno syscall.Errno
		err := t.rc.Write(func(fd uintptr) bool {
			e := kick(fd)
			if e == unix.EAGAIN || e == unix.ENOBUFS {
				// The device or the send buffer is full: the
				// frames not sent stay requested, for when the
				// socket can write again.
				return false
			}
			if e != 0 {
				errno = e
				return true
			}
			// With a ring full, wait for the kernel to free the
			// next slot (the poller wakes us as it frees frames).
			return len(frames) == 0 || t.free(t.head)
		})
		if err != nil {
			if p.closed.Load() {
				return ErrClosed
			}
			return err
		}
		if errno != 0 {
			return fmt.Errorf("port %s: send ring: %w", p.Name, errno)
		}
	}
	return nil
}
