// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/nlsock"
)

// shortBufferMsgTrunc: a notification read into a buffer of exactly its
// size comes whole: recvmsg returns its length and msg_flags has no
// MSG_TRUNC. One byte shorter, recvmsg returns the buffer's length, the
// bytes are the notification's prefix and msg_flags has MSG_TRUNC; the
// rest is gone with the datagram, nothing more is queued. With MSG_TRUNC
// in the recv flags, recvmsg returns the notification's full length
// whatever the buffer: the MSG_PEEK|MSG_TRUNC size probe (an empty buffer)
// that clients such as iproute2 make before they read. The first
// notification is only peeked at, then read whole by the transcript; the
// next three are each read once, exactly, short, and short with MSG_TRUNC.
//
// Kernel: netlink_recvmsg(): copied = data_skb->len; if (len < copied) {
// msg->msg_flags |= MSG_TRUNC; copied = len; } ...; if (flags & MSG_TRUNC)
// copied = data_skb->len; the skb is freed (unless MSG_PEEK) whatever was
// copied.
func shortBufferMsgTrunc(t selftests.T) {
	s := selftests.NewNS(t, "S")
	a := s.Socket("a", selftests.Join(unix.RTNLGRP_IPV4_IFADDR))

	e := s.AddAddr()
	full := peekWhole(t, a, e)
	size := len(full)
	expectRecv(t, a, "size probe", 0, unix.MSG_PEEK|unix.MSG_TRUNC, size, true, nil)
	expectRecv(t, a, "exact buffer", size, unix.MSG_PEEK, size, false, full)
	expectRecv(t, a, "one byte short", size-1, unix.MSG_PEEK, size-1, true, full[:size-1])
	expectRecv(t, a, "one byte short", size-1, unix.MSG_PEEK|unix.MSG_TRUNC, size, true, full[:size-1])
	a.Expect(e.NewAddr())

	e = s.AddAddr()
	full = peekWhole(t, a, e)
	size = len(full)
	expectRecv(t, a, "exact buffer", size, 0, size, false, full)
	a.Expect()

	e = s.AddAddr()
	full = peekWhole(t, a, e)
	size = len(full)
	expectRecv(t, a, "one byte short", size-1, 0, size-1, true, full[:size-1])
	a.Expect()

	e = s.AddAddr()
	full = peekWhole(t, a, e)
	size = len(full)
	expectRecv(t, a, "one byte short", size-1, unix.MSG_TRUNC, size, true, full[:size-1])
	a.Expect()
}

// peekWhole peeks with a 64 KiB buffer at the datagram at the head of a's
// queue, which must be e's RTM_NEWADDR and nothing else, whole, and
// returns its bytes. The ACK of e's request has come, so it is queued.
func peekWhole(t selftests.T, a *selftests.Sock, e selftests.AddrEvent) []byte {
	t.Helper()
	buf := make([]byte, 64<<10)
	n, msgFlags, err := a.RecvInto(buf, unix.MSG_PEEK)
	switch {
	case errors.Is(err, unix.EAGAIN):
		t.Fatalf("%s: nothing queued after the ACK of RTM_NEWADDR seq %d, want its notification", a, e.Seq)
	case err != nil:
		t.Fatalf("%v", err)
	case msgFlags&unix.MSG_TRUNC != 0:
		t.Fatalf("%s: recvmsg(%d-byte buffer, MSG_PEEK) = %d with MSG_TRUNC, want a whole datagram", a, len(buf), n)
	}
	full := bytes.Clone(buf[:n])
	msgs, err := nlsock.ParseMessages(full)
	if err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if len(msgs) != 1 || msgs[0].Header.Type != unix.RTM_NEWADDR || msgs[0].Header.Sequence != e.Seq ||
		msgs[0].Header.PID != e.Pid || int(msgs[0].Header.Length) != n {
		t.Fatalf("%s: head datagram of %d bytes holds %s, want one RTM_NEWADDR (type %d) seq %d pid %d of %d bytes",
			a, n, headers(msgs), unix.RTM_NEWADDR, e.Seq, e.Pid, n)
	}
	return full
}

// expectRecv makes one recvmsg of a's head datagram into a buffer of size
// bytes with flags and checks what it returns (n), whether msg_flags has
// MSG_TRUNC, and the bytes it wrote (data).
func expectRecv(t selftests.T, a *selftests.Sock, what string, size, flags, n int, trunc bool, data []byte) {
	t.Helper()
	buf := make([]byte, size)
	got, msgFlags, err := a.RecvInto(buf, flags)
	call := fmt.Sprintf("%s: %s: recvmsg(%d-byte buffer, %s)", a, what, size, recvFlags(flags))
	if err != nil {
		t.Errorf("%s: %v, want %d", call, err, n)
		return
	}
	gotTrunc := msgFlags&unix.MSG_TRUNC != 0
	if got != n || gotTrunc != trunc {
		t.Errorf("%s = %d, msg_flags %s; want %d, msg_flags %s",
			call, got, truncFlag(gotTrunc), n, truncFlag(trunc))
	}
	if written := buf[:min(got, size)]; !bytes.Equal(written, data) {
		t.Errorf("%s wrote\n\t% x\nwant the notification's first %d bytes\n\t% x", call, written, len(data), data)
	}
}

func recvFlags(flags int) string {
	var names []string
	for _, f := range []struct {
		bit  int
		name string
	}{{unix.MSG_PEEK, "MSG_PEEK"}, {unix.MSG_TRUNC, "MSG_TRUNC"}} {
		if flags&f.bit != 0 {
			names = append(names, f.name)
		}
	}
	if len(names) == 0 {
		return "0"
	}
	return strings.Join(names, "|")
}

func truncFlag(on bool) string {
	if on {
		return "with MSG_TRUNC"
	}
	return "without MSG_TRUNC"
}

// headers renders the messages' headers for a diagnostic.
func headers(msgs []netlink.Message) string {
	var parts []string
	for _, m := range msgs {
		parts = append(parts, fmt.Sprintf("{type %d len %d seq %d pid %d}", m.Header.Type, m.Header.Length, m.Header.Sequence, m.Header.PID))
	}
	return fmt.Sprintf("%d message(s) %s", len(msgs), strings.Join(parts, " "))
}
