// SPDX-License-Identifier: GPL-2.0

package main

import (
	"testing"

	"nlmcast/selftests/casecheck"
)

// Every case says what it checks, for -l -v.
func TestEveryCaseHasAbout(t *testing.T) {
	table, err := modeCases()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range casecheck.Undescribed(table) {
		t.Errorf("case %s has no About: -l -v cannot say what it checks", n)
	}
}
