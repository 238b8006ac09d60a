// SPDX-License-Identifier: GPL-2.0

package main

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawRead and rawWrite are read(2) and write(2) without the Go scheduler's
// system-call bookkeeping: every socket here is non-blocking, so no call
// can park the thread, and the bookkeeping would otherwise be a visible
// share of the tool's own instructions (the work unit makes about three
// system calls per route).
func rawRead(fd int, b []byte) (int, error) {
	n, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

func rawWrite(fd int, b []byte) (int, error) {
	n, _, errno := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// rawRecvmsg is a non-blocking recvmsg(2) that, unlike unix.Recvmsg,
// allocates nothing: no source address is asked for, and the drain calls
// it once per notification. It returns the data and control lengths.
func rawRecvmsg(fd int, p, oob []byte) (n, oobn int, err error) {
	iov := unix.Iovec{Base: &p[0]}
	iov.SetLen(len(p))
	msg := unix.Msghdr{Iov: &iov, Control: &oob[0]}
	msg.SetIovlen(1)
	msg.SetControllen(len(oob))
	r, _, errno := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&msg)), unix.MSG_DONTWAIT)
	if errno != 0 {
		return 0, 0, errno
	}
	return int(r), int(msg.Controllen), nil
}
