package main

import "nlmcast/selftests"

// netnsChurn: not written yet (cases.md §5).
func netnsChurn(t selftests.T) { t.Skipf("not written yet") }
