// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
)

// sendAboveSndbufEMSGSIZE: a datagram longer than the sender's send
// buffer less 32 bytes is refused whole with EMSGSIZE, before anything
// is delivered; one of exactly that length goes out. In S, `x` sends
// NLMSG_NOOPs to the group RTNLGRP_IPV4_IFADDR, whose member is `r1`, and
// to `r2`'s portid, with SO_SNDBUF set to 4096 (the unicast, above a
// page, is the kind of skb netlink_sendmsg() puts in vmalloc memory).
//
//  1. sk_sndbuf - 28 bytes (the next whole netlink length after the
//     limit): EMSGSIZE; r1, r2 and x get nothing.
//  2. sk_sndbuf - 32 bytes (rounded down to a whole netlink length): sent;
//     r1 gets the multicast and r2 the unicast, once each.
//
// Kernel: netlink_sendmsg(): err = -EMSGSIZE; if (len > sk->sk_sndbuf -
// 32) goto out.
func sendAboveSndbufEMSGSIZE(t selftests.T) {
	s := selftests.NewNS(t, "S")
	const group = unix.RTNLGRP_IPV4_IFADDR
	x := s.Socket("x")
	r1 := s.Socket("r1", selftests.Join(group))
	r2 := s.Socket("r2")
	// A small send buffer keeps the datagrams readable whole (about 8 KiB:
	// the kernel doubles what is asked, within wmem_max and its minimum).
	if err := x.SetSendBuffer(4096); err != nil {
		t.Fatalf("%v", err)
	}
	sndbuf, err := x.SendBuffer()
	if err != nil {
		t.Fatalf("%v", err)
	}
	// The longest whole netlink message within sk_sndbuf - 32, and the
	// next one: sk_sndbuf is even, so with any usual value fit is the
	// limit itself.
	fit := (sndbuf - 32) &^ 3
	if fit < unix.NLMSG_HDRLEN {
		t.Fatalf("%s: sk_sndbuf %d after SO_SNDBUF 4096: below any message", x, sndbuf)
	}
	send := func(length int) (selftests.Msg, error) {
		return x.MulticastPayload(r2.Portid(), group, length-unix.NLMSG_HDRLEN)
	}

	// 1.
	if _, err := send(fit + 4); !errors.Is(err, unix.EMSGSIZE) {
		t.Errorf("%s: a %d-byte datagram with sk_sndbuf %d: got %v, want EMSGSIZE (longer than sk_sndbuf - 32)", x, fit+4, sndbuf, err)
	}
	x.Expect()
	r1.Expect()
	r2.Expect()

	// 2.
	m, err := send(fit)
	if err != nil {
		t.Fatalf("%s: a %d-byte datagram with sk_sndbuf %d: %v, want it sent (up to sk_sndbuf - 32 is allowed)", x, fit, sndbuf, err)
	}
	x.Expect()
	r1.Expect(m)
	r2.Expect(m)
}
