package main

import "nlmcast/selftests"

// groupsAbove32: not written yet (cases.md §5).
func groupsAbove32(t selftests.T) { t.Skipf("not written yet") }
