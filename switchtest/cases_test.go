// SPDX-License-Identifier: GPL-2.0

package main

import (
	"testing"

	"nlmcast/selftests/casecheck"
)

// Every case function of the switch program is in its table, and the table
// has no two cases of one name.
func TestEveryCaseIsRegistered(t *testing.T) { casecheck.Check(t, ".", cases) }
