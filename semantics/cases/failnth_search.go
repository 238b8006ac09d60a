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

// run returns the try that made probe read want, and what the tries
// before it did. Any other error on probe, or no such try, fails the
// case.
func (s failNthSearch) run(t selftests.T) (_ attempt, tried []string) {
	t.Helper()
	for n := 1; n <= maxFailNth; n++ {
		a := s.send(n)
		if !a.fired {
			t.Fatalf("fail-nth %d did not fire: the %s made fewer than %d injectable allocations, and failing each in turn never made %s fail with %s; tried: %s",
				n, s.request, n, s.probe, unix.ErrnoName(s.want), strings.Join(tried, "; "))
		}
		d, err := s.probe.Recv()
		switch {
		case errors.Is(err, s.want):
			if selftests.Verbose() {
				t.Logf("fail-nth %d failed %s allocation; before it: %s", n, s.alloc, strings.Join(tried, "; "))
			}
			return a, tried
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
	return attempt{}, nil
}
