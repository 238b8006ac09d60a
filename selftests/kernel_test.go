// SPDX-License-Identifier: GPL-2.0

package selftests

import "testing"

func TestParseKernelRelease(t *testing.T) {
	for rel, want := range map[string]KernelVersion{
		"6.18.44-1-amd64": {6, 18}, "6.1.192": {6, 1}, "6.12.117": {6, 12}, "6.14": {6, 14}, "6.9-rc1": {6, 9},
	} {
		if got, err := parseKernelRelease(rel); err != nil || got != want {
			t.Errorf("parseKernelRelease(%q) = %v, %v; want %v", rel, got, err, want)
		}
	}
	for _, rel := range []string{"", "6", "x.y"} {
		if _, err := parseKernelRelease(rel); err == nil {
			t.Errorf("parseKernelRelease(%q) accepted", rel)
		}
	}
	v := KernelVersion{6, 12}
	if !v.AtLeast(6, 9) || !v.AtLeast(6, 12) || v.AtLeast(6, 13) || !v.AtLeast(5, 19) || v.AtLeast(7, 0) {
		t.Errorf("AtLeast is wrong for %v", v)
	}
}
