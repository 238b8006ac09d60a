// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"encoding/binary"
	"reflect"
	"testing"

	"golang.org/x/sys/unix"
)

// diagMsg builds a struct netlink_diag_msg followed by attrs.
func diagMsg(family, proto uint8, portid, ino uint32, attrs ...[]byte) []byte {
	b := make([]byte, sizeofDiagMsg)
	b[0], b[1], b[2], b[3] = family, unix.SOCK_RAW, proto, 7 // any state: not checked
	binary.NativeEndian.PutUint32(b[4:], portid)
	binary.NativeEndian.PutUint32(b[16:], ino)
	for _, a := range attrs {
		b = append(b, a...)
	}
	return b
}

// attr is one netlink attribute of type typ, padded to 4 bytes.
func attr(typ uint16, payload ...byte) []byte {
	a := make([]byte, 4, 4+len(payload)+3)
	binary.NativeEndian.PutUint16(a, uint16(4+len(payload)))
	binary.NativeEndian.PutUint16(a[2:], typ)
	a = append(a, payload...)
	for len(a)%4 != 0 {
		a = append(a, 0)
	}
	return a
}

func TestParseDiagEntry(t *testing.T) {
	flags := attr(4, 0, 0, 0, 0) // NETLINK_DIAG_FLAGS, ignored
	for _, tc := range []struct {
		name string
		b    []byte
		want diagEntry
	}{
		{"groups 5 and 33", diagMsg(unix.AF_NETLINK, 0, 0, 4242, attr(diagAttrGroups, 0x10, 0, 0, 0, 1, 0, 0, 0), flags),
			diagEntry{typ: unix.SOCK_RAW, ino: 4242, groups: []uint32{5, 33}}},
		{"bitmap all zero", diagMsg(unix.AF_NETLINK, 0, 77, 1, attr(diagAttrGroups, 0, 0, 0, 0, 0, 0, 0, 0)),
			diagEntry{typ: unix.SOCK_RAW, portid: 77, ino: 1}},
		{"no groups attribute", diagMsg(unix.AF_NETLINK, 0, 77, 1, flags),
			diagEntry{typ: unix.SOCK_RAW, portid: 77, ino: 1}},
	} {
		got, err := parseDiagEntry(tc.b)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: parseDiagEntry = %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	for _, bad := range [][]byte{
		diagMsg(unix.AF_NETLINK, 0, 0, 1)[:sizeofDiagMsg-1],
		diagMsg(unix.AF_INET, 0, 0, 1),
		diagMsg(unix.AF_NETLINK, unix.NETLINK_GENERIC, 0, 1),
		append(diagMsg(unix.AF_NETLINK, 0, 0, 1), 9, 0, 1, 0), // an attribute longer than what is left
	} {
		if e, err := parseDiagEntry(bad); err == nil {
			t.Errorf("parseDiagEntry(% x) = %+v, want an error", bad, e)
		}
	}
}

// TestJudgeBound feeds the bound socket's check the kernel bug's symptom,
// a resize's repeat, and the other wrong answers, which must stay failures.
func TestJudgeBound(t *testing.T) {
	const ino, marker = 10, 20
	want := diagEntry{typ: unix.SOCK_RAW, portid: 77, ino: ino, groups: []uint32{5}}
	other := diagEntry{typ: unix.SOCK_RAW, portid: 0, ino: 30, groups: []uint32{1}}
	mark := diagEntry{typ: unix.SOCK_RAW, portid: 0, ino: marker, groups: []uint32{1}}
	noGroups := want
	noGroups.groups = nil
	wrongPortid := want
	wrongPortid.portid = 78
	for _, tc := range []struct {
		name string
		l    diagListing
		want boundVerdict
	}{
		{"once", diagListing{other, want, mark}, boundOnce},
		{"twice, once by each walk", diagListing{want, other, mark, want}, boundTwice},
		{"twice by the hash table's walk (a resize)", diagListing{want, other, want, mark}, boundRepeated},
		{"a resize and the bug", diagListing{want, want, mark, want}, boundRepeated},
		{"once by each walk, the second without its groups", diagListing{want, mark, noGroups}, boundWrong},
		{"once by each walk, the second with another portid", diagListing{want, mark, wrongPortid}, boundWrong},
		{"twice by the hash table's walk, once with another portid", diagListing{want, wrongPortid, mark}, boundWrong},
		{"only by the mc_list walk", diagListing{mark, want}, boundWrong},
		{"once by the hash table's walk, twice by mc_list's", diagListing{want, mark, want, want}, boundWrong},
		{"not listed", diagListing{other, mark}, boundWrong},
		{"once, without groups", diagListing{noGroups, mark}, boundWrong},
	} {
		b, err := tc.l.splitAtMarker(ino, marker)
		if err != nil {
			t.Errorf("%s: splitAtMarker: %v", tc.name, err)
			continue
		}
		if got := judgeBound(b, want); got != tc.want {
			t.Errorf("%s: judgeBound(%+v) = %d, want %d", tc.name, b, got, tc.want)
		}
	}
	for _, l := range []diagListing{{want}, {want, mark, mark}} {
		if _, err := l.splitAtMarker(ino, marker); err == nil {
			t.Errorf("splitAtMarker(%v): no error, want one: the marker must be listed once", l)
		}
	}
	if b, err := (diagListing{want, other, want}).splitAtMarker(ino, 0); err != nil || len(b.byHash) != 2 || len(b.byMCList) != 0 {
		t.Errorf("splitAtMarker without a marker = %+v, %v; want both entries the hash table walk's", b, err)
	}
}

// TestJudgeMany feeds the check of a listing in parts the kernel bug's
// symptom (one socket lost per part boundary), a resize's repeat, and
// the other wrong answers, which must stay failures.
func TestJudgeMany(t *testing.T) {
	entry := func(ino uint32) diagEntry { return diagEntry{typ: unix.SOCK_RAW, portid: 100 + ino, ino: ino} }
	want := map[uint32]diagEntry{1: entry(1), 2: entry(2), 3: entry(3), 4: entry(4)}
	other := diagEntry{typ: unix.SOCK_RAW, portid: 9, ino: 99}
	withGroups := entry(2)
	withGroups.groups = []uint32{1}
	for _, tc := range []struct {
		name  string
		l     diagListing
		parts int
		want  boundVerdict
	}{
		{"each once", diagListing{entry(1), other, entry(2), entry(3), entry(4)}, 2, boundOnce},
		{"each once, one part", diagListing{entry(4), entry(3), entry(2), entry(1)}, 1, boundOnce},
		{"one lost at the one boundary", diagListing{entry(1), entry(2), entry(4)}, 2, boundLost},
		{"two lost at two boundaries", diagListing{entry(1), entry(3)}, 3, boundLost},
		{"two lost at one boundary", diagListing{entry(1), entry(4)}, 2, boundWrong},
		{"one lost in one part", diagListing{entry(1), entry(2), entry(4)}, 1, boundWrong},
		{"one repeated (a resize)", diagListing{entry(1), entry(2), entry(2), entry(3), entry(4)}, 2, boundRepeated},
		{"one lost, one repeated", diagListing{entry(1), entry(1), entry(3), entry(4)}, 2, boundRepeated},
		{"one with groups", diagListing{entry(1), withGroups, entry(3), entry(4)}, 2, boundWrong},
		{"one lost, one with groups", diagListing{entry(1), withGroups, entry(4)}, 2, boundWrong},
		{"none", diagListing{other}, 2, boundWrong},
	} {
		if got, _ := judgeMany(tc.l, want, tc.parts); got != tc.want {
			t.Errorf("%s: judgeMany(%v, %d parts) = %d, want %d", tc.name, tc.l, tc.parts, got, tc.want)
		}
	}
}
