// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
)

// allNSIDMappedSourceReportsNSID: two observers map S under different ids,
// 0 and 42. The LISTEN_ALL_NSID subscriber of each gets S's notification
// once, with the id its own namespace has for S in a control message
// (level SOL_NETLINK, type NETLINK_LISTEN_ALL_NSID, a 4-byte int; 0 is a
// valid id and is reported). Plain subscribers beside them get nothing.
//
// Kernel: do_one_broadcast(): NETLINK_CB(p->skb2).nsid =
// peernet2id(sock_net(sk), p->net), nsid_is_set unless
// NETNSA_NSID_NOT_ASSIGNED; netlink_recvmsg() ->
// netlink_cmsg_listen_all_nsid(): put_cmsg(msg, SOL_NETLINK,
// NETLINK_LISTEN_ALL_NSID, sizeof(int), &NETLINK_CB(skb).nsid).
func allNSIDMappedSourceReportsNSID(t selftests.T) {
	s, obs1, obs2 := selftests.NewNS(t, "S"), selftests.NewNS(t, "O1"), selftests.NewNS(t, "O2")
	obs1.Map(s, 0)
	obs2.Map(s, 42)
	allNSID := selftests.With(unix.NETLINK_LISTEN_ALL_NSID)
	ifaddr := selftests.Join(unix.RTNLGRP_IPV4_IFADDR)
	o1 := obs1.Socket("o1", allNSID, ifaddr)
	o2 := obs2.Socket("o2", allNSID, ifaddr)
	p1 := obs1.Socket("p1", ifaddr)
	p2 := obs2.Socket("p2", ifaddr)

	e1 := s.AddAddr()

	expectNSIDControl(t, o1, 0)
	expectNSIDControl(t, o2, 42)
	o1.Expect(e1.NewAddr().NSID(0))
	o2.Expect(e1.NewAddr().NSID(42))
	p1.Expect()
	p2.Expect()
}

// expectNSIDControl peeks at the datagram at the head of s's queue and
// checks its control data byte for byte: exactly one control message,
// level SOL_NETLINK, type NETLINK_LISTEN_ALL_NSID, a 4-byte int equal to
// want. MSG_PEEK leaves the datagram queued for the transcript.
func expectNSIDControl(t selftests.T, s *selftests.Sock, want int32) {
	t.Helper()
	cmsgs, err := s.PeekControl()
	if err != nil {
		t.Errorf("%v (expected a datagram with nsid %d)", err, want)
		return
	}
	if len(cmsgs) != 1 {
		t.Errorf("%s: %d control messages, want 1 (NETLINK_LISTEN_ALL_NSID)", s, len(cmsgs))
		return
	}
	c, data := cmsgs[0], cmsgs[0].Data
	if c.Level != unix.SOL_NETLINK || c.Type != unix.NETLINK_LISTEN_ALL_NSID ||
		c.Len != uint64(unix.CmsgLen(4)) || len(data) != 4 {
		t.Errorf("%s: control message level %d type %d cmsg_len %d (%d data bytes), want level %d (SOL_NETLINK) type %d (NETLINK_LISTEN_ALL_NSID) cmsg_len %d (a 4-byte int)",
			s, c.Level, c.Type, c.Len, len(data), unix.SOL_NETLINK, unix.NETLINK_LISTEN_ALL_NSID, unix.CmsgLen(4))
		return
	}
	if got := int32(binary.NativeEndian.Uint32(data)); got != want {
		t.Errorf("%s: NETLINK_LISTEN_ALL_NSID control message carries nsid %d, want %d", s, got, want)
	}
}
