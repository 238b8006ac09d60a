// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"net/netip"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// neighbourResolvedNotified: a neighbour that ARP resolves is notified
// from the packet receive softirq, where netlink_broadcast() runs in
// atomic context, and the delivery rules hold there as everywhere: a
// datagram from S to P over a veth pair makes S resolve P's address, and
// S's RTNLGRP_NEIGH subscriber gets one RTM_NEWNEIGH for it, reachable,
// as does the LISTEN_ALL_NSID subscriber in O that maps S (with its id);
// P's subscriber gets one for S's address, stale: P learnt it from the
// ARP request. The plain subscriber in O gets nothing. All are the
// kernel's own (seq 0, pid 0, flags 0), and they come when the softirq
// has run, so they are awaited. The datagram goes to a UDP socket bound
// in P, so that no ICMP error makes P use its entry for S (and change
// it) while the case runs.
//
// A broadcast that may not sleep must not yield, not even for a receiver
// it left more than half full ("congested"): a kernel that did would print
// "BUG: scheduling while atomic", which the kernel watch fails the run on.
// S's subscriber "half" is made such a receiver: a 1 KiB multicast queued
// first charges it F bytes (SO_MEMINFO), and its buffer is set to exactly
// 2F, so the notification fits and leaves it above half.
//
// Kernel: S: udp_sendmsg() -> neigh_resolve_output() ->
// __neigh_event_send(): NUD_INCOMPLETE (not notified), arp_solicit().
// P: arp_rcv() -> arp_process() (NET_RX softirq) -> neigh_event_ns() ->
// neigh_update(NUD_STALE) -> neigh_update_notify() -> __neigh_notify(n,
// RTM_NEWNEIGH, 0, 0) -> rtnl_notify(..., RTNLGRP_NEIGH, NULL,
// GFP_ATOMIC); netlink_broadcast_deliver() returns rmem > rcvbuf / 2,
// do_one_broadcast() adds it to info.congested, and netlink_broadcast()
// yields only if (info.congested && gfpflags_allow_blocking(allocation)).
// S: arp_process() of the reply -> neigh_update(
// NUD_REACHABLE) -> the same notification.
func neighbourResolvedNotified(t selftests.T) {
	s, p, o := selftests.NewNS(t, "S"), selftests.NewNS(t, "P"), selftests.NewNS(t, "O")
	id := o.Map(s, 4).ID
	sAddr, pAddr := netip.MustParsePrefix("192.0.2.1/24"), netip.MustParsePrefix("192.0.2.2/24")
	s.Do(rtnl.NewVeth("va", "vb", p.FD()))
	va, vb := s.LinkIndex("va"), p.LinkIndex("vb")
	s.Do(rtnl.NewAddr(va, sAddr))
	p.Do(rtnl.NewAddr(vb, pAddr))
	s.Do(rtnl.SetUp(va, true))
	p.Do(rtnl.SetUp(vb, true))
	sink := p.BindUDP(netip.AddrPortFrom(pAddr.Addr(), neighPort))

	group := selftests.Join(unix.RTNLGRP_NEIGH)
	local := s.Socket("local", group)
	peer := p.Socket("peer", group)
	allNSID := o.Socket("all_nsid", selftests.With(unix.NETLINK_LISTEN_ALL_NSID), group)
	foreign := o.Socket("foreign", group)
	half, filler := halfFull(t, s, unix.RTNLGRP_NEIGH)

	if err := s.SendUDP(netip.AddrPortFrom(pAddr.Addr(), neighPort), []byte(udpPayload)); err != nil {
		t.Fatalf("%v", err)
	}
	resolved := selftests.Notification(unix.RTM_NEWNEIGH, unix.RTNLGRP_NEIGH, rtnl.NeighDetail(pAddr.Addr(), va, "reachable"))
	learnt := selftests.Notification(unix.RTM_NEWNEIGH, unix.RTNLGRP_NEIGH, rtnl.NeighDetail(sAddr.Addr(), vb, "stale"))
	local.ExpectEventually(neighDeadline, resolved)
	half.ExpectEventually(neighDeadline, filler, resolved)
	allNSID.ExpectEventually(neighDeadline, resolved.NSID(id))
	peer.ExpectEventually(neighDeadline, learnt)
	foreign.Expect()
	expectDatagram(t, sink)
}

// neighDeadline bounds the wait for the softirq that carries the ARP
// exchange and the datagram: far more than a loaded machine needs.
const neighDeadline = 10 * time.Second

// expectDatagram checks that the one datagram the case sent is queued on
// u: the ARP exchange completed and the packet went through.
func expectDatagram(t selftests.T, u *selftests.UDP) {
	t.Helper()
	buf := make([]byte, 64)
	n, err := u.Recv(buf)
	switch {
	case err != nil:
		t.Errorf("%s: recvfrom: %v, want the datagram sent from S", u, err)
	case string(buf[:n]) != udpPayload:
		t.Errorf("%s: got %q, want %q", u, buf[:n], udpPayload)
	}
}

const (
	neighPort  = 9 // discard
	udpPayload = "nlmc"
)

// halfFull opens a subscriber of group in n that the next notification
// on group leaves more than half full: a 1 KiB multicast on another group
// is queued first, and the receive buffer set to exactly twice what it
// charges, which that notification, smaller, fits beside. It returns the
// socket and the multicast as it sees it.
func halfFull(t selftests.T, n *selftests.NS, group uint32) (*selftests.Sock, selftests.Msg) {
	t.Helper()
	half := n.Socket("half", selftests.Join(group, burstGroup))
	m := n.Socket("half-filler").MustMulticastPayload(burstGroup, 1024)
	setReceiveBuffer(t, half, 2*receiveMemory(t, half))
	return half, m
}
