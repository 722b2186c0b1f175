package p4rt

import (
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// tcpTimesWork says tcpTimes answers here.
const tcpTimesWork = true

// tcpTimes is how long ago the kernel last received data on the TCP
// connection c and last sent some (TCP_INFO); ok is false if c is no
// TCP socket.
func tcpTimes(c net.Conn) (sinceRecv, sinceSent time.Duration, ok bool) {
	sc, isSys := c.(syscall.Conn)
	if !isSys {
		return 0, 0, false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, 0, false
	}
	var info *unix.TCPInfo
	var getErr error
	err = raw.Control(func(fd uintptr) {
		info, getErr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	})
	if err != nil || getErr != nil {
		return 0, 0, false
	}
	return time.Duration(info.Last_data_recv) * time.Millisecond, time.Duration(info.Last_data_sent) * time.Millisecond, true
}
