// SPDX-License-Identifier: GPL-2.0

package nlsock

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// getsockopt reads a variable-size option into buf and returns the length
// the kernel reported, which can exceed len(buf).
func getsockopt(fd, level, opt int, buf []byte) (int, error) {
	l := uint32(len(buf))
	_, _, errno := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt),
		uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&l)), 0)
	if errno != 0 {
		return 0, errno
	}
	return int(l), nil
}

// readDrops parses /proc/thread-self/net/netlink of the calling thread's
// namespace: sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode.
func readDrops(proto int, portid uint32) (uint64, error) {
	f, err := os.Open("/proc/thread-self/net/netlink")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[1] != strconv.Itoa(proto) || fields[2] != strconv.FormatUint(uint64(portid), 10) {
			continue
		}
		return strconv.ParseUint(fields[8], 10, 64)
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no netlink socket with protocol %d and portid %d", proto, portid)
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
