// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestDiffMatches(t *testing.T) {
	id := int32(3)
	g := uint32(5)
	got := []Line{{Type: unix.RTM_NEWADDR, Seq: 7, Pid: 9, FromMask: 0x10, PktInfo: &g, NSID: &id, Detail: "198.51.100.1/32 dev 1"}}
	want := []Line{{Type: unix.RTM_NEWADDR, Seq: 7, Pid: 9, FromMask: 0x10, PktInfo: &g, NSID: &id}}
	if d := diff(want, got); d != "" {
		t.Errorf("an empty expected Detail must match any detail; diff:\n%s", d)
	}
}

func TestDiffShowsEveryDifference(t *testing.T) {
	id, other := int32(3), int32(4)
	want := []Line{
		{Type: unix.RTM_NEWADDR, Seq: 7, NSID: &id},
		{Type: unix.RTM_NEWROUTE, Seq: 7},
	}
	got := []Line{
		{Type: unix.RTM_NEWADDR, Seq: 7, NSID: &other},
		{Type: unix.RTM_NEWROUTE, Seq: 7},
		{Err: unix.ENOBUFS},
	}
	d := diff(want, got)
	rows := strings.Split(d, "\n")
	if len(rows) != 4 {
		t.Fatalf("want a header and 3 rows, got:\n%s", d)
	}
	for i, mark := range []string{"!", " ", "!"} {
		if !strings.HasPrefix(rows[i+1], mark+" ") {
			t.Errorf("row %d should start with %q:\n%s", i+1, mark, d)
		}
	}
	for _, s := range []string{"nsid=3", "nsid=4", "recvmsg error ENOBUFS", "| -"} {
		if !strings.Contains(d, s) && !(s == "| -" && strings.Contains(d, "- ")) {
			t.Errorf("diff lacks %q:\n%s", s, d)
		}
	}
}

// Header flags are compared on every row and shown on both sides.
func TestDiffComparesFlags(t *testing.T) {
	want := []Line{{Type: unix.RTM_NEWROUTE, Flags: unix.NLM_F_REPLACE}}
	got := []Line{{Type: unix.RTM_NEWROUTE, Flags: unix.NLM_F_CREATE | unix.NLM_F_EXCL}}
	d := diff(want, got)
	if d == "" {
		t.Fatal("lines that differ only in nlmsg_flags match")
	}
	for _, s := range []string{"flags=REPLACE", "flags=EXCL|CREATE"} {
		if !strings.Contains(d, s) {
			t.Errorf("diff lacks %q:\n%s", s, d)
		}
	}
	if d := diff(got, got); d != "" {
		t.Errorf("equal flags differ:\n%s", d)
	}
}
