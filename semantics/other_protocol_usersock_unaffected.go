package main

import "nlmcast/selftests"

// otherProtocolUsersockUnaffected: not written yet (cases.md §5).
func otherProtocolUsersockUnaffected(t selftests.T) { t.Skipf("not written yet") }
