// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// failslabSleeplessOnly has fail-nth count only the slab allocations that
// cannot sleep (no __GFP_DIRECT_RECLAIM): GFP_KERNEL ones pass untouched.
var failslabSleeplessOnly = [][2]string{
	{"ignore-gfp-wait", "Y"},
	{"cache-filter", "N"},
	{"verbose", "0"},
}

// broadcastCopiesMaySleep: the copies of a multicast are allocated with
// the allocation flags of its sender; a NETLINK_USERSOCK multicast sent
// by a process is netlink_broadcast(..., GFP_KERNEL), so its copies may
// sleep. With failslab counting only the allocations that cannot sleep
// (ignore-gfp-wait), fail-nth N = 1, 2, ... on the sending thread finds how
// many one multicast makes: as many with four subscribers as with one, the
// copies adding none. On the try that fails nothing, every subscriber gets
// the message once, and the unicast destination too.
//
// Kernel: netlink_sendmsg(): netlink_broadcast(sk, skb, dst_portid,
// dst_group, GFP_KERNEL); netlink_broadcast_filtered(): info.allocation
// = allocation; do_one_broadcast(): skb2 = skb_clone(p->skb,
// p->allocation) for each subscriber, the skb being shared (the sender
// holds it for the unicast); __should_failslab(): if
// (failslab.ignore_gfp_reclaim && (gfpflags & __GFP_DIRECT_RECLAIM))
// return false, before should_fail() counts fail-nth.
func broadcastCopiesMaySleep(t selftests.T) {
	openFailNthWith(t, failslabSleeplessOnly)
	s := selftests.NewNS(t, "S")
	usersock := selftests.Proto(unix.NETLINK_USERSOCK)
	const group = 1
	u := s.Socket("u", usersock)
	sink := s.Socket("sink", usersock)
	subs := []*selftests.Sock{
		s.Socket("s0", usersock, selftests.Join(group)),
		s.Socket("s1", usersock), s.Socket("s2", usersock), s.Socket("s3", usersock),
	}
	one := countSleeplessAllocs(t, u, sink, subs[:1], group)
	for _, k := range subs[1:] {
		if err := k.Join(group); err != nil {
			t.Fatalf("%s: join group %d: %v", k, group, err)
		}
	}
	four := countSleeplessAllocs(t, u, sink, subs, group)
	if one != four {
		t.Errorf("%s: a NETLINK_USERSOCK multicast made %d allocations that cannot sleep with 1 subscriber and %d with %d: the copies were not made with the sender's GFP_KERNEL",
			u, one, four, len(subs))
	}
	t.Logf("a multicast from a process: %d allocations that cannot sleep, with 1 subscriber and with %d", one, len(subs))
}

// countSleeplessAllocs sends u's multicast to group (and unicast to sink)
// with fail-nth 1, 2, ... until a try fails nothing, and returns how many
// allocations the tries before it failed. After each try every socket is
// read empty; after the last, each of subs and sink must have the message
// once.
func countSleeplessAllocs(t selftests.T, u, sink *selftests.Sock, subs []*selftests.Sock, group uint32) int {
	t.Helper()
	addr := &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Pid: sink.Portid(), Groups: nlsock.GroupMask(group)}
	for n := 1; n <= maxFailNth; n++ {
		seq := rtnl.NextSeq()
		m := netlink.Message{Header: netlink.Header{Type: netlink.Noop, Sequence: seq, PID: u.Portid(), Length: unix.NLMSG_HDRLEN}}
		b, err := m.MarshalBinary()
		if err != nil {
			t.Fatalf("%v", err)
		}
		bare := u.Bare()
		fired, err := failNthCall(t, n, func() error { return bare.SendTo(b, 0, addr) })
		if fired {
			for _, k := range append([]*selftests.Sock{sink}, subs...) {
				drainAll(t, k)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: sendto(group %d, pid %d) with nothing failed: %v", u, group, sink.Portid(), err)
		}
		for _, k := range append([]*selftests.Sock{sink}, subs...) {
			if got := noopsWithSeq(t, k, seq); got != "1" {
				t.Errorf("%s: %s copies of the message (seq %d) from %s, on the try that failed nothing (fail-nth %d); want 1", k, got, seq, u, n)
			}
		}
		return n - 1
	}
	t.Fatalf("%s: every fail-nth from 1 to %d failed an allocation of one multicast", u, maxFailNth)
	return 0
}

// drainAll reads k until it is empty, whatever it holds (the failures of
// a try: ENOBUFS for a copy that was not made).
func drainAll(t selftests.T, k *selftests.Sock) {
	t.Helper()
	for i := 0; i <= selftests.BurstSize; i++ {
		_, err := k.Recv()
		if errors.Is(err, nlsock.ErrEmpty) {
			return
		}
		if err != nil && !errors.Is(err, unix.ENOBUFS) {
			t.Fatalf("%s: reading after a failed try: %v", k, err)
		}
	}
	t.Fatalf("%s: still not empty after %d reads", k, selftests.BurstSize)
}

// noopsWithSeq reads k empty and says how many NLMSG_NOOPs with seq it
// held, or what else it held.
func noopsWithSeq(t selftests.T, k *selftests.Sock, seq uint32) string {
	t.Helper()
	n := 0
	var other []string
	for {
		dg, err := k.Recv()
		if errors.Is(err, nlsock.ErrEmpty) {
			break
		}
		if err != nil {
			other = append(other, err.Error())
			continue
		}
		for _, m := range dg.Msgs {
			if m.Header.Type == netlink.Noop && m.Header.Sequence == seq {
				n++
			} else {
				other = append(other, headers([]netlink.Message{m}))
			}
		}
	}
	if len(other) > 0 {
		return fmt.Sprintf("%d (and %s)", n, strings.Join(other, ", "))
	}
	return fmt.Sprint(n)
}
