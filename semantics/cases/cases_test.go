// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"testing"

	"nlmcast/selftests"
	"nlmcast/selftests/casecheck"
)

// Every case function of this package is in All, and All has no two cases
// of one name: a case written but not registered would compile and never
// run.
func TestEveryCaseIsRegistered(t *testing.T) {
	if err := selftests.CheckCases(All); err != nil {
		t.Error(err)
	}
	missing, err := casecheck.Unregistered(".", All)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range missing {
		t.Errorf("case function %s is not in All (cases.go)", m)
	}
}
