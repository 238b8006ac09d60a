// SPDX-License-Identifier: GPL-2.0

package nlsock

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"nlmcast/selftests/netns"
)

// getsockopt reads a variable-size option into buf and returns the length
// the kernel reported, which can exceed len(buf).
func getsockopt(fd, level, opt int, buf []byte) (int, error) {
	var p unsafe.Pointer // NULL for an empty buffer: optlen 0
	if len(buf) > 0 {
		p = unsafe.Pointer(&buf[0])
	}
	return getsockoptAt(fd, level, opt, uintptr(p), len(buf))
}

// getsockoptAt is getsockopt(2) with optval the address optval (which
// may be one the process cannot write) and optlen size. Like any system
// call here it must return 0 or fail.
func getsockoptAt(fd, level, opt int, optval uintptr, size int) (int, error) {
	l := uint32(size)
	if err := getsockoptRaw(fd, level, opt, optval, uintptr(unsafe.Pointer(&l))); err != nil {
		return 0, err
	}
	return int(l), nil
}

// getsockoptRaw is getsockopt(2) with both optval and optlen addresses as
// given, so that either can be one the process cannot write.
func getsockoptRaw(fd, level, opt int, optval, optlen uintptr) error {
	return syscallResult(unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt),
		optval, optlen, 0))
}

// setsockoptRaw is setsockopt(2) with optval an address and optlen a
// length, held to the system call's contract: 0 on success.
func setsockoptRaw(fd, level, opt int, optval, optlen uintptr) error {
	return syscallResult(unix.Syscall6(unix.SYS_SETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt),
		optval, optlen, 0))
}

// setsockoptInt is setsockopt(2) of an int option, held to the system
// call's contract: 0 on success.
func setsockoptInt(fd, level, opt, val int) error {
	v := int32(val)
	return syscallResult(unix.Syscall6(unix.SYS_SETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt),
		uintptr(unsafe.Pointer(&v)), unsafe.Sizeof(v), 0))
}

// syscallResult turns a raw system call's result into an error. A call
// that did not fail must return exactly 0: the kernel passes a protocol
// handler's return value through, so a handler that returns a positive
// "error" would otherwise look like success (unix.Bind and
// unix.SetsockoptInt see only errno).
func syscallResult(r, _ uintptr, errno unix.Errno) error {
	if errno != 0 {
		return errno
	}
	if r != 0 {
		return fmt.Errorf("returned %d, want 0 (or -1 with errno)", int(r))
	}
	return nil
}

// Row is a socket's line of /proc/net/netlink: sk Eth Pid Groups Rmem
// Wmem Dump Locks Drops Inode.
type Row struct {
	Rmem, Wmem uint64 // the bytes its queued skbs charge (sk_rmem_alloc, sk_wmem_alloc)
	Dump       bool   // a dump is running on it (cb_running)
	Drops      uint64
}

// ReadRow reads, from inside ns, the line of the socket with protocol
// proto and portid portid: portid 0 is the protocol's kernel socket.
func ReadRow(ns *netns.NS, proto int, portid uint32) (Row, error) {
	var r Row
	err := ns.Do(func() error {
		var err error
		r, err = readRow(proto, portid)
		return err
	})
	if err != nil {
		return r, fmt.Errorf("netns %s: /proc/net/netlink: %w", ns.Name, err)
	}
	return r, nil
}

// rowRereads bounds the reads of /proc/net/netlink that look for a row:
// the file is no snapshot. Its reads walk the socket hash table a page at
// a time, each read resuming at its position in a table other threads
// change meanwhile, and a walk that meets a resize starts over
// (rhashtable_walk_next()'s -EAGAIN): a socket that exists all along may
// be missing from one reading, never from all of them.
const rowRereads = 100

// readRow parses /proc/thread-self/net/netlink of the calling thread's
// namespace, reading it again while the row is missing.
func readRow(proto int, portid uint32) (Row, error) {
	var err error
	for range rowRereads {
		var r Row
		if r, err = readRowOnce(proto, portid); !errors.Is(err, errNoRow) {
			return r, err
		}
		time.Sleep(time.Millisecond)
	}
	return Row{}, fmt.Errorf("%w (%d readings)", err, rowRereads)
}

func readRowOnce(proto int, portid uint32) (Row, error) {
	f, err := os.Open("/proc/thread-self/net/netlink")
	if err != nil {
		return Row{}, err
	}
	defer f.Close()
	return parseRow(f, proto, portid)
}

// errNoRow is parseRow's error for a row it did not find.
var errNoRow = errors.New("no netlink socket")

// parseRow finds the line of protocol proto and portid portid in the text
// of /proc/net/netlink.
func parseRow(text io.Reader, proto int, portid uint32) (Row, error) {
	sc := bufio.NewScanner(text)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[1] != strconv.Itoa(proto) || fields[2] != strconv.FormatUint(uint64(portid), 10) {
			continue
		}
		var r Row
		var errRmem, errWmem, errDrops, errDump error
		r.Rmem, errRmem = strconv.ParseUint(fields[4], 10, 64)
		r.Wmem, errWmem = strconv.ParseUint(fields[5], 10, 64)
		r.Drops, errDrops = strconv.ParseUint(fields[8], 10, 64)
		switch fields[6] {
		case "0":
		case "1":
			r.Dump = true
		default:
			errDump = fmt.Errorf("Dump column %q", fields[6])
		}
		return r, errors.Join(errRmem, errWmem, errDrops, errDump)
	}
	if err := sc.Err(); err != nil {
		return Row{}, err
	}
	return Row{}, fmt.Errorf("%w with protocol %d and portid %d", errNoRow, proto, portid)
}

// InUse returns the NETLINK row's "sockets" column of
// /proc/thread-self/net/protocols read from inside ns: the netlink sockets
// open in ns, as the kernel counts them (sock_prot_inuse_add(): +1 in
// netlink_create(), -1 in netlink_release(); kernel sockets are not
// counted when created). An unreadable file is returned as an error that
// wraps the open's (os.ErrNotExist without CONFIG_PROC_FS).
func InUse(ns *netns.NS) (int, error) {
	var n int
	err := ns.Do(func() error {
		b, err := os.ReadFile("/proc/thread-self/net/protocols")
		if err != nil {
			return err
		}
		n, err = parseInUse(string(b))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("netns %s: netlink sockets in use: %w", ns.Name, err)
	}
	return n, nil
}

// parseInUse finds the NETLINK row of /proc/net/protocols ("protocol size
// sockets memory ...") and returns its sockets column.
func parseInUse(text string) (int, error) {
	lines := strings.Split(text, "\n")
	head := strings.Fields(lines[0])
	if len(head) < 3 || head[0] != "protocol" || head[2] != "sockets" {
		return 0, fmt.Errorf("/proc/net/protocols: header %q, want \"protocol size sockets ...\"", lines[0])
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) >= 3 && f[0] == "NETLINK" {
			n, err := strconv.Atoi(f[2])
			if err != nil {
				return 0, fmt.Errorf("/proc/net/protocols: NETLINK sockets %q: %w", f[2], err)
			}
			return n, nil
		}
	}
	return 0, errors.New("/proc/net/protocols has no NETLINK row")
}

var optionNames = map[int]string{
	unix.NETLINK_ADD_MEMBERSHIP:   "NETLINK_ADD_MEMBERSHIP",
	unix.NETLINK_DROP_MEMBERSHIP:  "NETLINK_DROP_MEMBERSHIP",
	unix.NETLINK_PKTINFO:          "NETLINK_PKTINFO",
	unix.NETLINK_BROADCAST_ERROR:  "NETLINK_BROADCAST_ERROR",
	unix.NETLINK_NO_ENOBUFS:       "NETLINK_NO_ENOBUFS",
	unix.NETLINK_LISTEN_ALL_NSID:  "NETLINK_LISTEN_ALL_NSID",
	unix.NETLINK_LIST_MEMBERSHIPS: "NETLINK_LIST_MEMBERSHIPS",
	unix.NETLINK_CAP_ACK:          "NETLINK_CAP_ACK",
	unix.NETLINK_EXT_ACK:          "NETLINK_EXT_ACK",
	unix.NETLINK_GET_STRICT_CHK:   "NETLINK_GET_STRICT_CHK",
}

// OptionName names a SOL_NETLINK option for diagnostics.
func OptionName(opt int) string {
	if n, ok := optionNames[opt]; ok {
		return n
	}
	return fmt.Sprintf("SOL_NETLINK option %d", opt)
}
