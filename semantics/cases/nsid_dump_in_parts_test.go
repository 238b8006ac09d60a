// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"testing"

	"github.com/mdlayher/netlink"
)

// TestTruncatedAfterFirstPart feeds the XFAIL's test the kernel bug's
// symptom and the other wrong answers, which must stay failures.
func TestTruncatedAfterFirstPart(t *testing.T) {
	want := []int32{0, 1, 2, 3}
	one := [][]netlink.Message{make([]netlink.Message, 2)}
	two := [][]netlink.Message{make([]netlink.Message, 2), make([]netlink.Message, 1)}
	for _, tc := range []struct {
		name  string
		parts [][]netlink.Message
		got   []int32
		bug   bool
	}{
		{"the first part's prefix, then NLMSG_DONE", one, []int32{0, 1}, true},
		{"a prefix over two parts", two, []int32{0, 1, 2}, false},
		{"every id", one, want, false},
		{"nothing", [][]netlink.Message{nil}, nil, false},
		{"ids out of order", one, []int32{1, 0}, false},
		{"a gap", one, []int32{0, 2}, false},
		{"an id twice", one, []int32{0, 0}, false},
		{"more than asked", one, []int32{0, 1, 2, 3, 4}, false},
	} {
		if bug := truncatedAfterFirstPart(tc.parts, tc.got, want); bug != tc.bug {
			t.Errorf("%s: truncatedAfterFirstPart(%d parts, %v) = %v, want %v", tc.name, len(tc.parts), tc.got, bug, tc.bug)
		}
	}
}
