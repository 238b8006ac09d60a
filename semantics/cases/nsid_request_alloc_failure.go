// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// nsidRequestAllocFailureENOMEM: an RTM_NEWNSID or RTM_GETNSID that the
// kernel cannot allocate for fails with ENOMEM and does nothing else,
// whichever of its allocations fails: no id is given (and a requested id
// is not reported as taken, EEXIST, which would send `ip netns set` to
// look for another one), and a lookup answers with its reply or with
// ENOMEM, never with a bare ACK. A failure of the request's own skb fails
// the write; of the ACK, the read (ENOBUFS).
//
// Each try n arms fail-nth at n for one request from a socket of O, until
// a try no longer fires. RTM_NEWNSID asks for the id n<<12 for a peer of
// its own: a leaf of O's idr of its own, so that idr_alloc() allocates
// a node each time. RTM_GETNSID asks for a peer O gave the id 1.
//
// Kernel: rtnl_net_newid(): alloc_netid() -> idr_alloc(..., GFP_ATOMIC)
// returns -ENOMEM, passed on (only -ENOSPC for a requested id becomes
// -EEXIST); rtnl_net_getid(): msg = nlmsg_new(); if (!msg) { err =
// -ENOMEM; goto out; }.
func nsidRequestAllocFailureENOMEM(t selftests.T) {
	openFailNth(t)
	o := selftests.NewNS(t, "O")
	requester := o.Socket("requester")

	failEachAllocation(t, "netns O: RTM_NEWNSID", "idr_alloc()'s node", func(n int) attempt {
		peer := selftests.NewNS(t, fmt.Sprintf("P%d", n))
		id := int32(n) << 12
		a := newArmedRequest(t, requester, rtnl.NewNSID(peer.FD(), id)).send(t, n)
		got := o.IDOf(peer)
		what := fmt.Sprintf("netns O: RTM_NEWNSID for netns %s with nsid %d, fail-nth %d: %s", peer.Name, id, n, a)
		switch {
		case !a.fired || a.ackErrno == 0:
			if a.ackErrno != 0 || got != id {
				t.Errorf("%s; O's id for it is %d: want an ACK with errno 0 and the id %d", what, got, id)
			}
		case a.sendErr != nil, a.ackErrno == int(unix.ENOMEM):
			if got != rtnl.NotAssigned {
				t.Errorf("%s, yet O gave it the id %d: a failed request must give none", what, got)
			}
		case a.recvErr != nil:
			// The ACK was not allocated: the id may be given or not.
		default:
			t.Errorf("%s; want 0 or ENOMEM: an allocation that failed is not %s", what, unix.ErrnoName(unix.Errno(a.ackErrno)))
		}
		return a
	})

	peer := selftests.NewNS(t, "Q")
	o.Map(peer, 1)
	failEachAllocation(t, "netns O: RTM_GETNSID", "the reply's nlmsg_new()", func(n int) attempt {
		// A fresh seq each try: a reply left from an earlier one is seen.
		a := newArmedRequest(t, requester, rtnl.NSIDRequest(unix.RTM_GETNSID, rtnl.ByFD(peer.FD()))).send(t, n)
		what := fmt.Sprintf("netns O: RTM_GETNSID for netns Q, fail-nth %d: %s", n, a)
		switch {
		case !a.fired || a.ackErrno == 0:
			if a.ackErrno != 0 || len(a.replies) != 1 {
				t.Errorf("%s; want the reply (nsid 1), then an ACK with errno 0", what)
			} else if r, err := rtnl.ParseNSIDReply(a.replies[0]); err != nil || r.NSID != 1 {
				t.Errorf("%s: reply %v (%v), want nsid 1", what, r, err)
			}
		case a.ackErrno == int(unix.ENOMEM):
			if len(a.replies) != 0 {
				t.Errorf("%s; want no reply before the ENOMEM", what)
			}
		case a.sendErr != nil, a.recvErr != nil:
			// The request's skb or the ACK was not allocated.
		default:
			t.Errorf("%s; want 0 or ENOMEM", what)
		}
		return a
	})
}

// failEachAllocation runs try(n) for fail-nth n = 1, 2, ... until a try
// no longer fires: each allocation of the request (or system call) fails
// once. try checks its own outcome; at least one must have been ENOMEM
// (alloc is the allocation expected to give it), or the failures the rule
// is about were never made.
func failEachAllocation(t selftests.T, request, alloc string, try func(n int) attempt) {
	t.Helper()
	var tried []string
	enomem := false
	for n := 1; ; n++ {
		if n > maxFailNth {
			t.Fatalf("%s: fail-nth still fires at %d; tried: %s", request, n, strings.Join(tried, "; "))
		}
		a := try(n)
		tried = append(tried, fmt.Sprintf("%d: %s", n, a))
		enomem = enomem || a.ackErrno == int(unix.ENOMEM) || errors.Is(a.callErr, unix.ENOMEM)
		if !a.fired {
			break
		}
	}
	if selftests.Verbose() {
		t.Logf("%s tries: %s", request, strings.Join(tried, "; "))
	}
	if !enomem {
		t.Errorf("%s: no fail-nth made it fail with ENOMEM: %s never failed; tried: %s", request, alloc, strings.Join(tried, "; "))
	}
}
