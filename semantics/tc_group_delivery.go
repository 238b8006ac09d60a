package main

import "nlmcast/selftests"

// tcGroupDelivery: not written yet (cases.md §5).
func tcGroupDelivery(t selftests.T) { t.Skipf("not written yet") }
