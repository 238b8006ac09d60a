//go:build ignore

// SPDX-License-Identifier: GPL-2.0

// Command diag_skb_boundary shows a netlink socket monitoring dump that
// spans several skbs leaving out a socket at each boundary: in a new
// netns it binds N NETLINK_ROUTE sockets, dumps them through
// NETLINK_SOCK_DIAG with a receive buffer of B bytes, and counts which
// of its sockets the dump missed or repeated. Needs root (unshare).
//
//	go run evidence/kernel-fixes/diag_skb_boundary.go N B
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// must stops the program on an error: nothing here can go on without it.
func must(err error) {
	if err != nil {
		panic(err)
	}
}

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	bufsz, _ := strconv.Atoi(os.Args[2])
	runtime.LockOSThread()
	must(unix.Unshare(unix.CLONE_NEWNET))
	want := map[uint32]bool{}
	for i := 0; i < n; i++ {
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE)
		must(err)
		must(unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}))
		var st unix.Stat_t
		must(unix.Fstat(fd, &st))
		want[uint32(st.Ino)] = true
	}
	d, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_SOCK_DIAG)
	must(err)
	req := make([]byte, 16+20)
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(req[8:], 1)
	req[16], req[17] = unix.AF_NETLINK, unix.NETLINK_ROUTE
	must(unix.Sendto(d, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}))
	seen := map[uint32]int{}
	parts, entries := 0, 0
	buf := make([]byte, bufsz)
	for done := false; !done; {
		k, _, err := unix.Recvfrom(d, buf, 0)
		must(err)
		parts++
		msgs, err := syscall.ParseNetlinkMessage(buf[:k])
		must(err)
		for _, m := range msgs {
			if m.Header.Type == unix.NLMSG_DONE {
				done = true
				break
			}
			entries++
			seen[binary.NativeEndian.Uint32(m.Data[16:])]++
		}
	}
	missing, dup := 0, 0
	for ino := range want {
		if seen[ino] == 0 {
			missing++
		}
		if seen[ino] > 1 {
			dup++
		}
	}
	fmt.Printf("sockets %d, dump: %d parts, %d entries; of mine missing %d, repeated %d\n", n, parts, entries, missing, dup)
}
