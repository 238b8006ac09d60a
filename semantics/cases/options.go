// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/nlsock"
)

// expectOption checks that getsockopt(SOL_NETLINK, opt) on s reads want.
// getsockopt(NETLINK_LISTEN_ALL_NSID) came years after the option itself:
// netlink_getsockopt() has a case for it since commit 8b6d307f4391
// ("net/netlink: Add getsockopt support for NETLINK_LISTEN_ALL_NSID",
// Linux 6.9). Before 6.9 (6.1 answers ENOPROTOOPT) that answer alone is
// accepted and logged, and the case checks the flag by delivery; from 6.9
// on it fails like any other error or wrong value.
func expectOption(t selftests.T, s *selftests.Sock, opt int, want int) {
	t.Helper()
	v, err := s.Option(opt)
	switch {
	case opt == unix.NETLINK_LISTEN_ALL_NSID && errors.Is(err, unix.ENOPROTOOPT) && !selftests.Kernel(t).AtLeast(6, 9):
		t.Logf("%s: getsockopt(NETLINK_LISTEN_ALL_NSID) is ENOPROTOOPT on Linux %s (added in 6.9); the flag (%d) is checked by delivery only",
			s, selftests.Kernel(t), want)
	case err != nil:
		t.Errorf("%v (want %d)", err, want)
	case v != want:
		t.Errorf("%s: getsockopt(%s) = %d, want %d", s, nlsock.OptionName(opt), v, want)
	}
}

// flagValue is the int a flag option is set with.
func flagValue(on bool) int {
	if on {
		return 1
	}
	return 0
}
