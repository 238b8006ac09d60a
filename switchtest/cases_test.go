// SPDX-License-Identifier: GPL-2.0

package main

import (
	"testing"

	"nlmcast/selftests"
	"nlmcast/selftests/casecheck"
)

// Every case function of the switch program is in its table, and the table
// has no two cases of one name.
func TestEveryCaseIsRegistered(t *testing.T) {
	if err := selftests.CheckCases(cases); err != nil {
		t.Error(err)
	}
	missing, err := casecheck.Unregistered(".", cases)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range missing {
		t.Errorf("case function %s is not in the table (cases.go)", m)
	}
}
