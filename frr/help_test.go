// SPDX-License-Identifier: GPL-2.0

package main

import (
	"strings"
	"testing"

	"nlmcast/selftests"
)

// -h gives -deadline's default as the cases get it: the first step of
// each sequence, which starts the lab, has a deadline of its own. Before,
// -h said 1m30s for every case.
func TestHelpSaysTheCasesDeadlines(t *testing.T) {
	var out, errs strings.Builder
	if code := selftests.Run(suite, []string{"-h"}, &out, &errs); code != 0 || errs.Len() > 0 {
		t.Fatalf("-h: exit %d, stderr %q", code, errs.String())
	}
	help := strings.ReplaceAll(out.String(), "\n    \t", " ")
	var own []string
	for _, c := range suite.Cases {
		if c.Timeout > 0 {
			own = append(own, c.Name)
			if want := c.Timeout.String() + " for "; !strings.Contains(help, want) {
				t.Errorf("%s has a deadline of %v; -h does not say %q:\n%s", c.Name, c.Timeout, want, help)
			}
		}
	}
	if len(own) == 0 || !strings.Contains(help, "(default: 1m30s a case; ") || !strings.Contains(help, strings.Join(own, ", ")+")") {
		t.Errorf("-h does not name the cases with their own deadline (%s):\n%s", strings.Join(own, ", "), help)
	}
}
