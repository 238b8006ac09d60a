package main

import "nlmcast/selftests"

// allNSIDUnmappedSourceIgnored: not written yet (cases.md §5).
func allNSIDUnmappedSourceIgnored(t selftests.T) { t.Skipf("not written yet") }
