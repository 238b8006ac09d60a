// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"slices"

	"nlmcast/selftests"
	"nlmcast/selftests/nlsock"
)

// expectMemberships checks that s is in exactly the groups want (ascending)
// by both views the kernel offers: getsockopt(NETLINK_LIST_MEMBERSHIPS),
// which covers every group, and getsockname() nl_groups, which shows
// groups 1..32 as a bitmask (netlink_getname copies the low 32 bits of
// nlk->groups[0]).
func expectMemberships(t selftests.T, s *selftests.Sock, want ...uint32) {
	t.Helper()
	got, err := s.Memberships()
	if err != nil {
		t.Fatalf("%v", err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: NETLINK_LIST_MEMBERSHIPS = %v, want %v", s, got, want)
	}
	wantMask := nlsock.GroupMask(want...)
	_, mask, err := s.Address()
	if err != nil {
		t.Fatalf("%v", err)
	}
	if mask != wantMask {
		t.Errorf("%s: getsockname() nl_groups = %#x, want %#x", s, mask, wantMask)
	}
}

// mustJoin adds s to group with NETLINK_ADD_MEMBERSHIP or stops the case.
func mustJoin(t selftests.T, s *selftests.Sock, group uint32) {
	t.Helper()
	if err := s.Join(group); err != nil {
		t.Fatalf("%v", err)
	}
}

// mustLeave drops group with NETLINK_DROP_MEMBERSHIP or stops the case.
func mustLeave(t selftests.T, s *selftests.Sock, group uint32) {
	t.Helper()
	if err := s.Leave(group); err != nil {
		t.Fatalf("%v", err)
	}
}
