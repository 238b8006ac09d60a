// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"testing"

	"golang.org/x/sys/unix"

	"nlmcast/selftests/nlsock"
)

func delNSID(detail string) Line {
	return Line{Type: unix.RTM_DELNSID, FromMask: nlsock.GroupMask(unix.RTNLGRP_NSID), Detail: detail}
}

func TestInOrderOf(t *testing.T) {
	want := []Msg{
		Notification(unix.RTM_DELNSID, unix.RTNLGRP_NSID, "nsid 1"),
		Notification(unix.RTM_DELNSID, unix.RTNLGRP_NSID, "nsid 2"),
		Notification(unix.RTM_DELNSID, unix.RTNLGRP_NSID, "nsid 3"),
	}
	wl := make([]Line, len(want))
	for i, m := range want {
		wl[i] = m.line(&nlsock.Socket{})
	}
	for _, tc := range []struct {
		name  string
		got   []Line
		match bool
	}{
		{"same order", []Line{delNSID("nsid 1"), delNSID("nsid 2"), delNSID("nsid 3")}, true},
		{"permuted", []Line{delNSID("nsid 3"), delNSID("nsid 1"), delNSID("nsid 2")}, true},
		{"one missing", []Line{delNSID("nsid 3"), delNSID("nsid 1")}, false},
		{"one twice", []Line{delNSID("nsid 3"), delNSID("nsid 1"), delNSID("nsid 1")}, false},
		{"one extra", []Line{delNSID("nsid 2"), delNSID("nsid 3"), delNSID("nsid 1"), delNSID("nsid 4")}, false},
	} {
		got := inOrderOf(&nlsock.Socket{}, want, tc.got)
		if len(got) != len(tc.got) {
			t.Errorf("%s: reordering lost or added lines: %v -> %v", tc.name, tc.got, got)
		}
		if d := diff(wl, got); (d == "") != tc.match {
			t.Errorf("%s: match = %v, want %v; diff:\n%s", tc.name, d == "", tc.match, d)
		}
	}
}

func TestInOrderOfKeepsMismatchInPlace(t *testing.T) {
	want := []Msg{
		Notification(unix.RTM_DELNSID, unix.RTNLGRP_NSID, "nsid 1"),
		Notification(unix.RTM_DELNSID, unix.RTNLGRP_NSID, "nsid 2"),
	}
	got := inOrderOf(&nlsock.Socket{}, want, []Line{delNSID("nsid 9"), delNSID("nsid 1")})
	if got[0].Detail != "nsid 1" || got[1].Detail != "nsid 9" {
		t.Errorf("want the matching line first and the stray one beside the row it replaces, got %v", got)
	}
}
