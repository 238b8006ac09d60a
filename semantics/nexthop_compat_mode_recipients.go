package main

import "nlmcast/selftests"

// nexthopCompatModeRecipients: not written yet (cases.md §5).
func nexthopCompatModeRecipients(t selftests.T) { t.Skipf("not written yet") }
