// SPDX-License-Identifier: GPL-2.0

package nlsock

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// openBound opens a NETLINK_ROUTE socket in the test's own namespace,
// bound to a portid the kernel picks, and closes it when the test ends.
func openBound(t *testing.T, name string) *Socket {
	t.Helper()
	s, err := OpenHere(unix.NETLINK_ROUTE, name, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Bind(0, 0); err != nil {
		t.Fatal(err)
	}
	return s
}

func noop(seq, pid uint32) netlink.Message {
	return netlink.Message{Header: netlink.Header{Type: netlink.Noop, Sequence: seq, PID: pid}}
}

func TestTimeouts(t *testing.T) {
	s := openBound(t, "s")
	if err := s.SetReceiveTimeout(1500 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := s.SetSendTimeout(250 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// The kernel keeps a timeout in jiffies, rounded up.
	for opt, want := range map[int]time.Duration{unix.SO_RCVTIMEO: 1500 * time.Millisecond, unix.SO_SNDTIMEO: 250 * time.Millisecond} {
		tv, err := unix.GetsockoptTimeval(s.FD(), unix.SOL_SOCKET, opt)
		if err != nil {
			t.Fatal(err)
		}
		if got := time.Duration(tv.Nano()); got < want || got > want+10*time.Millisecond {
			t.Errorf("option %d reads back %v, want %v (up to a jiffy more)", opt, got, want)
		}
	}
	// Blocking, an empty socket's recvfrom() waits out the timeout.
	if err := s.SetBlocking(true); err != nil {
		t.Fatal(err)
	}
	if err := s.SetReceiveTimeout(20 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := s.Bare().RecvFrom(make([]byte, 64), 0); !errors.Is(err, unix.EAGAIN) {
		t.Errorf("recvfrom on an empty blocking socket: %v, want EAGAIN after the timeout", err)
	}
	if d := time.Since(start); d < 15*time.Millisecond {
		t.Errorf("recvfrom returned after %v: the socket did not block", d)
	}
	if err := s.SetBlocking(false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); !errors.Is(err, ErrEmpty) {
		t.Errorf("non-blocking again: %v, want ErrEmpty", err)
	}
}

func TestFilter(t *testing.T) {
	rx, tx := openBound(t, "rx"), openBound(t, "tx")
	if err := rx.AttachFilter(nil); err == nil {
		t.Error("an empty filter program was taken")
	}
	if err := rx.AttachFilter([]unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: 0}}); err != nil {
		t.Fatal(err)
	}
	if err := tx.SendTo(noop(1, tx.Portid()), rx.Portid(), 0); err != nil {
		t.Fatal(err)
	}
	if d, err := rx.Recv(); !errors.Is(err, ErrEmpty) {
		t.Errorf("through a drop-all filter: %+v, %v; want nothing queued", d, err)
	}
	if err := rx.DetachFilter(); err != nil {
		t.Fatal(err)
	}
	if err := tx.SendTo(noop(2, tx.Portid()), rx.Portid(), 0); err != nil {
		t.Fatal(err)
	}
	if d, err := rx.Recv(); err != nil || len(d.Msgs) != 1 || d.Msgs[0].Header.Sequence != 2 {
		t.Errorf("after SO_DETACH_FILTER: %+v, %v; want the NLMSG_NOOP of seq 2", d, err)
	}
}

func TestBare(t *testing.T) {
	rx, err := OpenHere(unix.NETLINK_ROUTE, "rx", "test")
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	if err := rx.Bare().Bind(0, GroupMask(unix.RTNLGRP_IPV4_IFADDR)); err != nil {
		t.Fatal(err)
	}
	if err := rx.Bare().Join(unix.RTNLGRP_IPV6_IFADDR); err != nil {
		t.Fatal(err)
	}
	if ms, err := rx.Memberships(); err != nil || !slices.Equal(ms, []uint32{unix.RTNLGRP_IPV4_IFADDR, unix.RTNLGRP_IPV6_IFADDR}) {
		t.Errorf("memberships %v, %v; want the bind's group and the joined one", ms, err)
	}
	tx := openBound(t, "tx")
	m := noop(3, tx.Portid())
	m.Header.Length = unix.NLMSG_HDRLEN
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Bare().SendTo(b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Pid: rx.Portid()}); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 64)
	if n, err := rx.Bare().RecvFrom(p, unix.MSG_DONTWAIT); err != nil || string(p[:n]) != string(b) {
		t.Errorf("recvfrom: %x, %v; want %x", p[:n], err, b)
	}
	if _, err := rx.Bare().RecvFrom(p, unix.MSG_DONTWAIT); !errors.Is(err, unix.EAGAIN) {
		t.Errorf("recvfrom of an empty socket: %v, want EAGAIN bare", err)
	}
}
