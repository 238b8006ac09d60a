// SPDX-License-Identifier: GPL-2.0

package main

import "nlmcast/selftests"

func ipMonitorCases() []selftests.Case { return nil }
