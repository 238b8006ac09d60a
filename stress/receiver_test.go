// SPDX-License-Identifier: GPL-2.0

package main

import (
	"strings"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests/netns"
	"nlmcast/selftests/nlsock"
	"nlmcast/stress/internal/verify"
)

// userPair opens NETLINK_USERSOCK sockets in a fresh namespace: a
// receiver on group 1, a sender and (for a multicast, which user space
// sends together with a unicast) a sink.
func userPair(t *testing.T) (ns *netns.NS, rx, tx, sink *nlsock.Socket) {
	t.Helper()
	requireRoot(t)
	ns, err := netns.New("receiver-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Close() })
	socks, err := openMany(ns, unix.NETLINK_USERSOCK, 3, "s")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeAll(socks) })
	if err := socks[0].Bind(0, nlsock.GroupMask(groupUser)); err != nil {
		t.Fatal(err)
	}
	for _, s := range socks[1:] {
		if err := s.Bind(0, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := socks[2].ForceReceiveBuffer(1 << 20); err != nil {
		t.Fatal(err)
	}
	return ns, socks[0], socks[1], socks[2]
}

// A stable receiver that overran records the ENOBUFS, and the checker,
// with no allocation made to fail, fails it.
func TestStableReceiverOverrunFails(t *testing.T) {
	ns, rx, tx, sink := userPair(t)
	st, err := newStable("test", ns, rx, verify.Receiver{Groups: []uint32{groupUser}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rx.ForceReceiveBuffer(1); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 64; i++ {
		m := netlink.Message{Header: netlink.Header{Type: netlink.Noop, Sequence: uint32(i)}}
		if err := tx.SendTo(m, sink.Portid(), nlsock.GroupMask(groupUser)); err != nil {
			t.Fatal(err)
		}
	}
	st.stop.Store(true)
	st.drain()
	rep := st.judge([]string{"S0"}, [][]verify.Msg{nil}, nil)
	if rep.Overruns == 0 || !strings.Contains(verify.Join(rep.Problems), "ENOBUFS at #") {
		t.Fatalf("overruns %d, problems %q; want the overrun reported", rep.Overruns, rep.Problems)
	}
}

// An idle subscriber holding anything, even an empty datagram, fails the
// emptiness check.
func TestExpectEmptyReportsWhatIsQueued(t *testing.T) {
	_, rx, tx, _ := userPair(t)
	if p := expectEmpty(rx); p != "" {
		t.Fatalf("empty socket: %s", p)
	}
	m := netlink.Message{Header: netlink.Header{Type: netlink.Noop, Sequence: 7}}
	if err := tx.SendTo(m, rx.Portid(), 0); err != nil {
		t.Fatal(err)
	}
	if p := expectEmpty(rx); !strings.Contains(p, "must receive nothing, but holds type 1 seq 7") {
		t.Fatalf("expectEmpty = %q", p)
	}
	// A datagram too short for a message header holds no message: said,
	// not indexed. (The kernel refuses to send one of no bytes: ENODATA.)
	if err := unix.Sendto(tx.FD(), []byte{1, 2, 3, 4}, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Pid: rx.Portid()}); err != nil {
		t.Fatal(err)
	}
	if p := expectEmpty(rx); !strings.Contains(p, "must receive nothing, but recvmsg says") || !strings.Contains(p, "4 trailing bytes") {
		t.Fatalf("a 4-byte datagram: expectEmpty = %q", p)
	}
}
