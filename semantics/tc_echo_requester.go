package main

import "nlmcast/selftests"

// tcEchoRequester: not written yet (cases.md §5).
func tcEchoRequester(t selftests.T) { t.Skipf("not written yet") }
