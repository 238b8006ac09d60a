// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// dumpContinuationENOBUFS: a subscriber that is also dumping reads the
// dump's first part while a notification waits behind it, and its receive
// buffer cannot hold that notification and the dump's next part together.
// The kernel then makes no next part: the read that would have produced it
// sets ENOBUFS on the socket and wakes the socket's error waiters. The
// reader gets the error on its next read (before the queued notification:
// a pending socket error comes first), then the notification; that read
// empties the queue and the dump goes on where it stopped: every address
// once, in order, then NLMSG_DONE.
//
// Every step is synchronous, and the sizes are the kernel's own, read back
// with SO_MEMINFO. The first part (allocated before the socket ever read,
// so NLMSG_GOODSIZE) and a 1 KiB user multicast (tN) are queued under the
// default buffer; then the buffer is lowered to exactly 2*tN. Once the
// first part is read the queue holds exactly half the buffer, which still
// counts as room (<= rcvbuf/2), so the read calls netlink_dump(); its skb
// is at least as large as the first part's (the reader's 64 KiB buffer
// raised max_recvmsg_len), larger than tN, so the two reach the buffer.
// Whether the error woke anybody is read with epoll waiting for EPOLLERR
// alone: only a wake-up with EPOLLERR puts the socket on the ready list,
// so epoll_wait() with no timeout right after the read says whether
// sk_error_report() ran.
//
// Kernel: netlink_recvmsg(): if (cb_running && sk_rmem_alloc <= sk_rcvbuf
// / 2) { ret = netlink_dump(sk, false); if (ret) { sk->sk_err = -ret;
// sk_error_report(sk); } }; netlink_dump(): rmem = atomic_add_return(
// skb->truesize, &sk->sk_rmem_alloc); if (rmem != skb->truesize && rmem >=
// rcvbuf) -> -ENOBUFS, the skb freed before the dump callback ran;
// __skb_try_recv_datagram(): sock_error() before the queue;
// sock_def_error_report(): wake_up_interruptible_poll(EPOLLERR);
// sock_setsockopt(SO_RCVBUF): sk_rcvbuf = max(val * 2, SOCK_MIN_RCVBUF).
func dumpContinuationENOBUFS(t selftests.T) {
	s := selftests.NewNS(t, "S")
	n, want := addressesForTwoParts(t, s)

	d := s.Socket("d", selftests.Join(burstGroup))
	sender := s.Socket("sender")
	req := startDump(t, d)
	t1 := receiveMemory(t, d)
	// A notification with 1 KiB of payload: twice its charge is above
	// the kernel's smallest buffer (SOCK_MIN_RCVBUF, about 2.3 KiB).
	const payload = 1024
	note := sender.MustMulticastPayload(burstGroup, payload)
	queued := receiveMemory(t, d)
	if queued <= t1 {
		t.Fatalf("%s: sk_rmem_alloc %d after the multicast, %d before: the notification was not queued under a 1 MiB buffer", d, queued, t1)
	}
	tN := queued - t1
	if t1 <= tN {
		t.Fatalf("%s: setup: the dump's first part charges %d bytes and the notification %d; want the part larger", d, t1, tN)
	}
	setReceiveBuffer(t, d, 2*tN)
	t.Logf("%s: the dump's first part charges %d bytes, the notification %d; sk_rcvbuf lowered to %d", d, t1, tN, 2*tN)
	epfd := epollForErrors(t, d)

	// The first part: addresses only, no NLMSG_DONE.
	first, err := d.Recv()
	if err != nil {
		t.Fatalf("%s: reading the dump's first part: %v", d, err)
	}
	got, done := dumpPart(t, d, "first part", first, req.Header.Sequence)
	if done {
		t.Skipf("the dump of %d addresses, complete, came in one datagram of %d bytes: this kernel's first dump skb holds them all, so no continuation was needed", n, t1)
	}
	woken := epollErrors(t, epfd)

	// The error, then the notification, then the rest of the dump.
	var trail []string
	if dg, err := d.Recv(); !errors.Is(err, unix.ENOBUFS) {
		trail = append(trail, fmt.Sprintf("read after the first part: %s, want ENOBUFS", datagramString(dg, err)))
	}
	if dg, err := d.Recv(); err != nil || len(dg.Msgs) != 1 || dg.Msgs[0].Header.Type != netlink.Noop ||
		dg.Msgs[0].Header.Sequence != note.Seq || !bytes.Equal(dg.Msgs[0].Data, make([]byte, payload)) ||
		dg.FromPid != note.FromPid || dg.FromMask != nlsock.GroupMask(burstGroup) {
		trail = append(trail, fmt.Sprintf("next read: %s, want the multicast NLMSG_NOOP seq %d with %d bytes of payload from pid %d on group %d",
			datagramString(dg, err), note.Seq, payload, note.FromPid, burstGroup))
	}
	for part := 2; !done; part++ {
		dg, err := d.Recv()
		if err != nil {
			trail = append(trail, fmt.Sprintf("dump part %d: %v, want the dump to go on after the notification's read", part, err))
			break
		}
		var more []rtnl.Addr
		more, done = dumpPart(t, d, fmt.Sprintf("part %d", part), dg, req.Header.Sequence)
		got = append(got, more...)
	}
	if !woken {
		t.Errorf("%s: epoll for EPOLLERR had no event right after the read that could not continue the dump: sk_error_report() did not wake the socket's waiters", d)
	}
	if len(trail) > 0 {
		t.Errorf("%s: after the dump's first part (%d bytes charged) with a multicast (%d bytes) queued behind it and sk_rcvbuf %d:\n\t%s",
			d, t1, tN, 2*tN, strings.Join(trail, "\n\t"))
	}
	if !slices.EqualFunc(got, want, rtnl.Addr.Equal) {
		t.Errorf("%s: the dump across the ENOBUFS listed %d addresses:\n\t%v\nwant the reference dump's %d:\n\t%v", d, len(got), got, len(want), want)
	}
	if dg, err := d.Recv(); !errors.Is(err, nlsock.ErrEmpty) {
		t.Errorf("%s: after NLMSG_DONE: %s, want nothing queued", d, datagramString(dg, err))
	}
}

// receiveMemory is s's sk_rmem_alloc.
func receiveMemory(t selftests.T, s *selftests.Sock) uint32 {
	t.Helper()
	rmem, _, err := s.ReceiveMemory()
	if err != nil {
		t.Fatalf("%v", err)
	}
	return rmem
}

// setReceiveBuffer sets s's sk_rcvbuf to exactly size bytes, an even
// number (SO_RCVBUF doubles the value it is given), and checks that the
// kernel took it as it is: not capped at rmem_max, not raised to
// SOCK_MIN_RCVBUF.
func setReceiveBuffer(t selftests.T, s *selftests.Sock, size uint32) {
	t.Helper()
	if err := s.SetReceiveBuffer(int(size / 2)); err != nil {
		t.Fatalf("%v", err)
	}
	if _, rcvbuf, err := s.ReceiveMemory(); err != nil || rcvbuf != size {
		t.Fatalf("%s: setup: SO_RCVBUF %d gave sk_rcvbuf %d (%v), want %d", s, size/2, rcvbuf, err, size)
	}
}

// epollForErrors registers s with a new epoll instance for EPOLLERR
// alone (the kernel adds EPOLLHUP), closed when the case ends.
func epollForErrors(t selftests.T, s *selftests.Sock) int {
	t.Helper()
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatalf("epoll_create1: %v", err)
	}
	t.Cleanup(func() { unix.Close(epfd) })
	ev := unix.EpollEvent{Events: unix.EPOLLERR, Fd: int32(s.FD())}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, s.FD(), &ev); err != nil {
		t.Fatalf("%s: epoll_ctl(EPOLL_CTL_ADD, EPOLLERR): %v", s, err)
	}
	return epfd
}

// epollErrors says whether epfd reports EPOLLERR now, without waiting.
func epollErrors(t selftests.T, epfd int) bool {
	t.Helper()
	evs := make([]unix.EpollEvent, 2)
	for {
		k, err := unix.EpollWait(epfd, evs, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatalf("epoll_wait: %v", err)
		}
		return k == 1 && evs[0].Events&unix.EPOLLERR != 0
	}
}

// dumpPart checks one datagram of d's RTM_GETADDR dump with sequence seq:
// RTM_NEWADDR messages with NLM_F_MULTI, then possibly NLMSG_DONE with no
// error, which must come last. It returns the addresses and whether the
// datagram ended the dump.
func dumpPart(t selftests.T, d *selftests.Sock, what string, dg nlsock.Datagram, seq uint32) (addrs []rtnl.Addr, done bool) {
	t.Helper()
	checkDumpPart(t, d, "dump "+what, dg, seq)
	for i, m := range dg.Msgs {
		if m.Header.Type == netlink.Done {
			if i != len(dg.Msgs)-1 {
				t.Fatalf("%s: dump %s: NLMSG_DONE is message %d of %d", d, what, i+1, len(dg.Msgs))
			}
			if err := rtnl.DoneError("RTM_GETADDR dump", m); err != nil {
				t.Fatalf("%s: dump %s: %v", d, what, err)
			}
			return addrs, true
		}
		a, err := rtnl.ParseAddr(m)
		if err != nil {
			t.Fatalf("%s: dump %s, message %d: %v", d, what, i, err)
		}
		addrs = append(addrs, a)
	}
	return addrs, false
}

// checkDumpPart fails the case unless dg, read on d, is a part of the
// dump with seq: a unicast from the kernel of messages with seq, d's
// portid and NLM_F_MULTI.
func checkDumpPart(t selftests.T, d *selftests.Sock, what string, dg nlsock.Datagram, seq uint32) {
	t.Helper()
	if dg.FromPid != 0 || dg.FromMask != 0 || len(dg.Msgs) == 0 {
		t.Fatalf("%s: %s: %s, want a unicast from the kernel", d, what, datagramString(dg, nil))
	}
	for i, m := range dg.Msgs {
		if m.Header.Sequence != seq || m.Header.PID != d.Portid() || m.Header.Flags&netlink.Multi == 0 {
			t.Fatalf("%s: %s, message %d: %s, want seq %d pid %d with NLM_F_MULTI", d, what, i, headers(dg.Msgs[i:i+1]), seq, d.Portid())
		}
	}
}

// datagramString renders a read's result for a diagnostic.
func datagramString(dg nlsock.Datagram, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("from pid %d groups %#x: %s", dg.FromPid, dg.FromMask, headers(dg.Msgs))
}

// addressesForTwoParts adds to s's lo more IPv4 addresses than the first
// part of a dump holds (an address record is over 64 bytes, the part
// NLMSG_GOODSIZE, under min(page size, 8 KiB)) and returns how many, and
// the addresses as a dump lists them.
func addressesForTwoParts(t selftests.T, s *selftests.NS) (int, []rtnl.Addr) {
	t.Helper()
	n := min(unix.Getpagesize(), 8192)/64 + 16
	for i := range n {
		s.Do(rtnl.NewAddr(rtnl.LoopbackIndex, netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 77, byte(i >> 8), byte(i)}), 32)))
	}
	want, err := dumpAddrs(t, dumpConn(t, s, false), nil)
	if err != nil {
		t.Fatalf("netns %s: reference dump: %v", s.Name, err)
	}
	if len(want) < n {
		t.Fatalf("netns %s: the reference dump lists %d addresses, want the %d added and lo's own", s.Name, len(want), n)
	}
	return n, want
}

// startDump sends an RTM_GETADDR dump request from d and returns it.
func startDump(t selftests.T, d *selftests.Sock) netlink.Message {
	t.Helper()
	req := rtnl.GetAddrs(nil).Msg
	req.Header.Flags |= netlink.Request | netlink.Dump
	req.Header.Sequence = rtnl.NextSeq()
	if err := d.SendTo(req, 0, 0); err != nil {
		t.Fatalf("%v", err)
	}
	return req
}
