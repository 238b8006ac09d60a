// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/nlsock"
)

// membershipAllocFailureENOMEM: a socket's first subscription allocates
// its group bitmap; when that allocation fails, bind() and
// setsockopt(NETLINK_ADD_MEMBERSHIP) fail with ENOMEM and change nothing:
// bind() leaves the socket unbound (portid 0) and in no group, the option
// leaves it in no group. Asked again without a failure, each subscribes.
// Each try n arms fail-nth at n for one call on a fresh socket of S, until
// a try no longer fires; at least one must have been ENOMEM.
//
// Kernel: netlink_bind() and netlink_setsockopt() call
// netlink_realloc_groups() before anything else that changes the socket:
// new_groups = krealloc(nlk->groups, NLGRPSZ(groups), GFP_ATOMIC); if
// (new_groups == NULL) { err = -ENOMEM; goto out_unlock; }; their callers
// return err at once.
func membershipAllocFailureENOMEM(t selftests.T) {
	openFailNth(t)
	s := selftests.NewNS(t, "S")
	const group = unix.RTNLGRP_IPV4_IFADDR
	mask := uint32(1) << (group - 1)
	calls := []struct {
		name string
		// fresh opens the try's socket (not subscribed), unarmed.
		fresh func(n int) *selftests.Sock
		call  func(b nlsock.Bare) error
		// unbound: a failed call leaves the socket without a portid.
		unbound bool
	}{
		{name: fmt.Sprintf("bind(nl_groups %#x)", mask), unbound: true,
			fresh: func(n int) *selftests.Sock { return unboundSocket(t, s, fmt.Sprintf("bind%d", n)) },
			call:  func(b nlsock.Bare) error { return b.Bind(0, mask) }},
		{name: fmt.Sprintf("setsockopt(NETLINK_ADD_MEMBERSHIP, %d)", group),
			fresh: func(n int) *selftests.Sock { return s.Socket(fmt.Sprintf("opt%d", n)) },
			call:  func(b nlsock.Bare) error { return b.Join(group) }},
	}
	for _, c := range calls {
		failEachAllocation(t, "netns S: "+c.name, "the group bitmap's krealloc()", func(n int) attempt {
			k := c.fresh(n)
			bare := k.Bare()
			fired, err := failNthCall(t, n, func() error { return c.call(bare) })
			what := fmt.Sprintf("%s: %s with fail-nth %d", k, c.name, n)
			switch {
			case !fired || err == nil:
				if err != nil {
					t.Errorf("%s: %v, want success: no allocation failed", what, err)
				}
				expectSubscribed(t, k, what, group)
			case errors.Is(err, unix.ENOMEM):
				pid, groups, aerr := k.Address()
				ms, merr := k.Memberships()
				if aerr != nil || merr != nil {
					t.Fatalf("%s: %v %v", what, aerr, merr)
				}
				if len(ms) != 0 || groups != 0 || (c.unbound && pid != 0) {
					t.Errorf("%s: ENOMEM, yet the socket has portid %d, nl_groups %#x, memberships %v; want no change: %s",
						what, pid, groups, ms, map[bool]string{true: "portid 0, no group", false: "no group"}[c.unbound])
				}
				// The same call, unarmed, subscribes.
				if err := c.call(k.Bare()); err != nil {
					t.Errorf("%s: again without fail-nth after the ENOMEM: %v", what, err)
				}
				expectSubscribed(t, k, what+", then again", group)
			default:
				t.Errorf("%s: %v, want ENOMEM: the allocation that failed is the group bitmap's", what, err)
			}
			return attempt{n: n, fired: fired, call: true, callErr: err}
		})
	}
}

// unboundSocket opens a socket in s that is not bound: its bind() is the
// one the case makes.
func unboundSocket(t selftests.T, s *selftests.NS, name string) *selftests.Sock {
	t.Helper()
	k, err := nlsock.Open(s.NS, unix.NETLINK_ROUTE, name)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return s.Adopt(k)
}

// expectSubscribed checks that k is a member of group, and of nothing else,
// and that a multicast to it reaches k.
func expectSubscribed(t selftests.T, k *selftests.Sock, what string, group uint32) {
	t.Helper()
	ms, err := k.Memberships()
	if err != nil {
		t.Fatalf("%v", err)
	}
	if !slices.Equal(ms, []uint32{group}) {
		t.Errorf("%s: memberships %v, want [%d]", what, ms, group)
		return
	}
	sender := k.NS().Socket(k.Name + "-sender")
	k.Expect(sender.MustMulticast(0, group))
}
