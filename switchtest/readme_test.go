// SPDX-License-Identifier: GPL-2.0

package main

import (
	"testing"

	semantics "nlmcast/semantics/cases"
)

// The switch program's table is its parts: its own cases, the flips both
// ways, and every semantics case at 1 and at 0. (No document counts them:
// the program's -l does.)
func TestTableIsItsParts(t *testing.T) {
	flips := len(flipCases("0", "1")) + len(flipCases("1", "0"))
	if want := len(switchCases) + flips + 2*len(semantics.All); len(cases) != want {
		t.Errorf("the table has %d cases, not its parts' %d", len(cases), want)
	}
}
