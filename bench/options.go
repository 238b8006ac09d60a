// SPDX-License-Identifier: GPL-2.0

package main

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"nlmcast/selftests/nlsock"
)

// optionUnit is C7's work unit on the foreign pool: per socket
// NETLINK_DROP_MEMBERSHIP and NETLINK_ADD_MEMBERSHIP of RTNLGRP_IPV4_ROUTE,
// then NETLINK_LISTEN_ALL_NSID on and off, each checked; then every socket's
// NETLINK_LIST_MEMBERSHIPS must be exactly that group again.
func optionUnit(pool []*nlsock.Socket) error {
	var mem [8]byte
	for _, s := range pool {
		fd := s.FD()
		for _, op := range [...]struct {
			opt, val int
		}{
			{unix.NETLINK_DROP_MEMBERSHIP, groupIPv4Route},
			{unix.NETLINK_ADD_MEMBERSHIP, groupIPv4Route},
			{unix.NETLINK_LISTEN_ALL_NSID, 1},
			{unix.NETLINK_LISTEN_ALL_NSID, 0},
		} {
			if err := unix.SetsockoptInt(fd, unix.SOL_NETLINK, op.opt, op.val); err != nil {
				return fmt.Errorf("%s: setsockopt(%s, %d): %w", s, nlsock.OptionName(op.opt), op.val, err)
			}
		}
	}
	for _, s := range pool {
		l := uint32(len(mem))
		_, _, errno := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(s.FD()), unix.SOL_NETLINK,
			unix.NETLINK_LIST_MEMBERSHIPS, uintptr(unsafe.Pointer(&mem[0])), uintptr(unsafe.Pointer(&l)), 0)
		if errno != 0 {
			return fmt.Errorf("%s: NETLINK_LIST_MEMBERSHIPS: %w", s, errno)
		}
		if w := binary.NativeEndian.Uint32(mem[:]); w != nlsock.GroupMask(groupIPv4Route) {
			return fmt.Errorf("%s: groups %#x after leave+join, want %#x", s, w, nlsock.GroupMask(groupIPv4Route))
		}
	}
	return nil
}

// optionOps is the number of option changes in one C7 unit.
func optionOps(pool int) int { return 4 * pool }
