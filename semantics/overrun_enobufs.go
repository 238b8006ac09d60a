package main

import "nlmcast/selftests"

// overrunENOBUFS: not written yet (cases.md §5).
func overrunENOBUFS(t selftests.T) { t.Skipf("not written yet") }
