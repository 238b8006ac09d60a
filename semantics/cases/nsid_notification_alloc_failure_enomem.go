// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// nsidNotificationAllocFailureENOMEM: when the kernel cannot build the
// RTM_NEWNSID that announces a new id, the RTNLGRP_NSID subscribers of the
// namespace that gave it are told with ENOMEM, once, and not with ENOBUFS:
// rtnl_net_notifyid() passes on the allocation's own error. Being no
// ENOBUFS, it reaches a NETLINK_NO_ENOBUFS subscriber too. The id is given
// all the same (the request is ACKed with errno 0 and RTM_GETNSID reports
// the id), and no subscriber in another netns is told anything.
//
// Kernel: rtnl_net_newid() -> alloc_netid(), then rtnl_net_notifyid(net,
// RTM_NEWNSID, id, portid, nlh, GFP_KERNEL): `int err = -ENOMEM;`, nlmsg_new()
// fails -> out: rtnl_set_sk_err(net, RTNLGRP_NSID, err) ->
// netlink_set_err(net->rtnl, 0, group, -ENOMEM) -> do_one_set_err(): only
// ENOBUFS is withheld from NETLINK_F_RECV_NO_ENOBUFS sockets; sk_err =
// ENOMEM, which recvmsg() returns once. rtnl_net_newid() returns 0 whatever
// the notification did. The same in 6.1 and 6.12.
//
// The search is notification_alloc_failure_enobufs's: fail-nth N = 1, 2,
// ... on a thread that sends one RTM_NEWNSID (the kernel to choose the id)
// until the probe reads ENOMEM. An id once given cannot be taken back, so
// each attempt asks for a peer of its own.
func nsidNotificationAllocFailureENOMEM(t selftests.T) {
	if before := openFailNth(t); selftests.Verbose() {
		t.Logf("failslab was %s; it is put back when the case ends", before)
	}
	o, f := selftests.NewNS(t, "O"), selftests.NewNS(t, "F")
	group := selftests.Join(unix.RTNLGRP_NSID)
	probe := o.Socket("probe", group)
	quiet := o.Socket("no_enobufs", selftests.With(unix.NETLINK_NO_ENOBUFS), group)
	foreign := f.Socket("foreign", group)
	requester := o.Socket("requester")

	// Without injection the id is announced to both subscribers in O, and
	// to no one in F.
	given := o.Map(selftests.NewNS(t, "P0"), -1)
	probe.Expect(given.NewNSID())
	quiet.Expect(given.NewNSID())
	foreign.Expect()

	var tried []string
	for n := 1; n <= maxFailNth; n++ {
		peer := selftests.NewNS(t, fmt.Sprintf("P%d", n))
		req := newArmedRequest(t, requester, rtnl.NewNSID(peer.FD(), -1))
		a := req.send(t, n)
		if !a.fired {
			t.Fatalf("fail-nth %d did not fire: the RTM_NEWNSID made fewer than %d injectable allocations, and failing each in turn never made %s fail with ENOMEM; tried: %s",
				n, n, probe, strings.Join(tried, "; "))
		}
		d, err := probe.Recv()
		switch {
		case errors.Is(err, unix.ENOMEM):
			if selftests.Verbose() {
				t.Logf("fail-nth %d failed rtnl_net_notifyid()'s allocation; before it: %s", n, strings.Join(tried, "; "))
			}
			if a.sendErr != nil || a.recvErr != nil || a.ackErrno != 0 {
				t.Errorf("RTM_NEWNSID for netns %s with fail-nth %d: %s; want an ACK with errno 0: the id is given though its notification failed", peer.Name, n, a)
			}
			if id := o.IDOf(peer); id == rtnl.NotAssigned {
				t.Errorf("netns O has no id for netns %s after the RTM_NEWNSID that was ACKed", peer.Name)
			}
			probe.Expect()
			quiet.Expect(selftests.RecvError(unix.ENOMEM))
			foreign.Expect()
			return
		case errors.Is(err, unix.ENOBUFS):
			// A broadcast clone's failure (netlink_overrun()): it comes
			// after rtnl_net_notifyid()'s allocation, whose failure an
			// earlier N made without telling the group.
			t.Fatalf("fail-nth %d: %s got ENOBUFS, an overrun (a failed broadcast clone); want ENOMEM, which rtnl_net_notifyid() reports when its allocation fails, and that allocation comes before any clone: an earlier fail-nth failed it without an error reaching the group; tried: %s", n, probe, strings.Join(tried, "; "))
		case errors.Is(err, nlsock.ErrEmpty):
			tried = append(tried, fmt.Sprintf("%d: %s, no notification", n, a))
		case err != nil:
			t.Fatalf("fail-nth %d: %s: %v", n, probe, err)
		case len(d.Msgs) == 0:
			t.Fatalf("fail-nth %d: %s: an empty datagram", n, probe)
		default:
			tried = append(tried, fmt.Sprintf("%d: %s, notification %s", n, a, rtnl.Describe(d.Msgs[0])))
		}
		// Before rtnl_net_notifyid()'s allocation a failure stops the
		// request or leaves the notification whole: no socket has an
		// error to show.
		for _, k := range []*selftests.Sock{quiet, foreign} {
			got, err := k.Transcript()
			if err != nil {
				t.Fatalf("after fail-nth %d: %v", n, err)
			}
			for _, l := range got {
				if l.Err != nil {
					t.Fatalf("after fail-nth %d (%s): %s got %s, before %s had any error", n, a, k, l, probe)
				}
			}
		}
	}
	t.Fatalf("no ENOMEM on %s with fail-nth 1 to %d; tried: %s", probe, maxFailNth, strings.Join(tried, "; "))
}
