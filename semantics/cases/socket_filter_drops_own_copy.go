// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
)

// socketFilterDropsOwnCopy: a socket filter (SO_ATTACH_FILTER, classic
// BPF) that drops everything takes the filtered socket's copy of a
// notification and no one else's: the subscribers walked before and
// after it get theirs, whole. Once the filter is detached the socket
// holds nothing from the filtered time and gets the next notification.
// The filtered socket subscribes between the two others, so that the walk
// (newest subscriber first, or oldest: either way) meets it between them:
// the copy it drops must not be the one the next socket gets.
//
// Kernel: do_one_broadcast(): if (sk_filter(sk, p->skb2)) {
// kfree_skb(p->skb2); p->skb2 = NULL; goto out; }: the next socket
// clones (or takes) the notification anew.
func socketFilterDropsOwnCopy(t selftests.T) {
	s := selftests.NewNS(t, "S")
	group := selftests.Join(unix.RTNLGRP_IPV4_IFADDR)
	before := s.Socket("before", group)
	filtered := s.Socket("filtered", group)
	after := s.Socket("after", group)
	dropAll := []unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: 0}}
	if err := filtered.AttachFilter(dropAll); err != nil {
		t.Fatalf("%v (ret #0)", err)
	}
	e := s.AddAddr()
	before.Expect(e.NewAddr())
	after.Expect(e.NewAddr())
	// The filter drops the sentinel too: the socket's transcript is read
	// once it is gone.
	if err := filtered.DetachFilter(); err != nil {
		t.Fatalf("%v", err)
	}
	filtered.Expect()
	e = s.AddAddr()
	for _, k := range []*selftests.Sock{before, filtered, after} {
		k.Expect(e.NewAddr())
	}
}
