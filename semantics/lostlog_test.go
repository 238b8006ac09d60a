// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"nlmcast/selftests"
	"nlmcast/selftests/kmsg"
)

// A semantics case during which the kernel log lost records has not been
// watched: the program SKIPs it, naming the count, though its own checks
// passed; the case after it, watched throughout, passes. Before, it
// passed with a diagnostic line.
func TestLostKernelLogRecordsSkipTheCase(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the cases make network namespaces")
	}
	var lost atomic.Uint64
	t.Cleanup(selftests.ReplaceKernelLogWith(selftests.FakeKernelLog{
		Reports: func() []kmsg.Report { return nil },
		Lost:    lost.Load,
	}))
	s := suite
	s.Cases = nil
	for _, c := range suite.Cases[:2] {
		if len(s.Cases) == 0 {
			run := c.Run
			c.Run = func(t selftests.T) {
				run(t)
				lost.Add(3) // overwritten while the case ran
			}
		}
		s.Cases = append(s.Cases, c)
	}
	var out strings.Builder
	code := selftests.Run(s, []string{"-j", "1"}, &out, os.Stderr)
	got := out.String()
	first, second := "netlink_mcast_semantics."+s.Cases[0].Name, "netlink_mcast_semantics."+s.Cases[1].Name
	for _, want := range []string{
		"\nok 1 " + first + " # SKIP kernel log: 3 records lost while this case ran; it was not watched (its own checks passed) time=",
		"\nok 2 " + second + " # time=",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if code != 0 {
		t.Errorf("exit %d, want 0:\n%s", code, got)
	}
}
