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

// failNthSearch finds, for a request that is always the same, the
// allocation whose failure the kernel reports to a group: it sends the
// request with fail-nth N = 1, 2, ... until probe's next read fails with
// want. Which N that is depends on the build (KASAN and kmemleak add
// allocations of their own), so it is searched for, never assumed.
type failNthSearch struct {
	request string          // "RTM_NEWADDR", for the failures
	alloc   string          // whose allocation it is: "rtmsg_ifa()'s"
	probe   *selftests.Sock // a member of the group, read after each try
	want    unix.Errno
	// send makes try n: whatever the try needs beforehand, then the
	// request with fail-nth at n.
	send func(n int) attempt
	// tidy, when set, puts things back after a try that missed (before
	// clean is checked).
	tidy func(n int)
	// clean are the sockets that must hold no error after a try that
	// missed: before the allocation, a failure stops the request or
	// leaves the notification whole.
	clean []*selftests.Sock
}

// failNthSweeps is how many times run goes through the request's
// allocations before it fails the case. The allocations a task makes
// for one request need not be the same from one request to the next:
// some depend on timing (kvfree_rcu(), for one, takes a page for its
// batch or not depending on the grace periods), and one extra allocation
// in try N and none in try N+1 pass the one searched for. Seen on the
// emulated 6.1 fault build: rtnl_offload_xstats_notify()'s skb is failed
// by try 7 in most runs, by try 9 in one, and in one run on a loaded
// host by none of tries 1 to 14.
const failNthSweeps = 3

// run returns the try that made probe read want, and what the tries
// before it did. Any other error on probe fails the case; so does a
// request that runs out of allocations (fail-nth N does not fire) without
// one, failNthSweeps times in a row.
func (s failNthSearch) run(t selftests.T) (_ attempt, tried []string) {
	t.Helper()
	var sweeps []string
	for sweep := 1; sweep <= failNthSweeps; sweep++ {
		a, tried, found := s.sweep(t)
		if found {
			if sweep > 1 && selftests.Verbose() {
				t.Logf("sweep %d found it; the ones before: %s", sweep, strings.Join(sweeps, " | "))
			}
			return a, tried
		}
		sweeps = append(sweeps, fmt.Sprintf("sweep %d: %s", sweep, strings.Join(tried, "; ")))
	}
	t.Fatalf("%d times over, fail-nth N did not fire before some try made %s fail with %s: the %s ran out of injectable allocations first (%s is the allocation searched for); tried: %s",
		failNthSweeps, s.probe, unix.ErrnoName(s.want), s.request, s.alloc, strings.Join(sweeps, " | "))
	return attempt{}, nil
}

// sweep sends the request with fail-nth N = 1, 2, ... until probe reads
// want (found), or a try's fail-nth does not fire: the request made fewer
// than N allocations, and the one searched for was passed (then the state
// is put back as after a miss).
func (s failNthSearch) sweep(t selftests.T) (_ attempt, tried []string, found bool) {
	t.Helper()
	for n := 1; n <= maxFailNth; n++ {
		a := s.send(n)
		if !a.fired {
			tried = append(tried, fmt.Sprintf("%d: did not fire", n))
			if s.tidy != nil {
				s.tidy(n)
			}
			if _, err := s.probe.Transcript(); err != nil {
				t.Fatalf("after fail-nth %d: %v", n, err)
			}
			return a, tried, false
		}
		d, err := s.probe.Recv()
		switch {
		case errors.Is(err, s.want):
			if selftests.Verbose() {
				t.Logf("fail-nth %d failed %s allocation; before it: %s", n, s.alloc, strings.Join(tried, "; "))
			}
			return a, tried, true
		case errors.Is(err, unix.ENOBUFS):
			// want is not ENOBUFS: this is an overrun, a failed
			// broadcast clone, which comes after the allocation.
			t.Fatalf("fail-nth %d: %s got ENOBUFS, an overrun (a failed broadcast clone); want %s, which the kernel reports when %s allocation fails, and that allocation comes before any clone: an earlier fail-nth failed it without an error reaching the group; tried: %s",
				n, s.probe, unix.ErrnoName(s.want), s.alloc, strings.Join(tried, "; "))
		case errors.Is(err, nlsock.ErrEmpty):
			tried = append(tried, fmt.Sprintf("%d: %s, no notification", n, a))
		case err != nil:
			t.Fatalf("fail-nth %d: %s: %v", n, s.probe, err)
		case len(d.Msgs) == 0:
			t.Fatalf("fail-nth %d: %s: an empty datagram", n, s.probe)
		default:
			tried = append(tried, fmt.Sprintf("%d: %s, notification %s", n, a, rtnl.Describe(d.Msgs[0])))
		}
		if s.tidy != nil {
			s.tidy(n)
		}
		for _, k := range s.clean {
			got, err := k.Transcript()
			if err != nil {
				t.Fatalf("after fail-nth %d: %v", n, err)
			}
			for _, l := range got {
				if l.Err != nil {
					t.Fatalf("after fail-nth %d (%s): %s got %s, before %s had any error", n, a, k, l, s.probe)
				}
			}
		}
	}
	t.Fatalf("no %s on %s with fail-nth 1 to %d; tried: %s", unix.ErrnoName(s.want), s.probe, maxFailNth, strings.Join(tried, "; "))
	return attempt{}, nil, false
}
