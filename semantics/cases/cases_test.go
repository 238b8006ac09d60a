// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"testing"

	"nlmcast/selftests"
	"nlmcast/selftests/casecheck"
)

// Every case function of this package is in All or FaultInjection, and
// they have no two cases of one name: a case written but not registered
// would compile and never run.
func TestEveryCaseIsRegistered(t *testing.T) {
	casecheck.Check(t, ".", append(append([]selftests.Case{}, All...), FaultInjection...))
}
