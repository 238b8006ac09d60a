// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"testing"

	"nlmcast/semantics/cases"
)

// TestSemantics runs the suite's cases through testing.T.
func TestSemantics(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces")
	}
	for _, c := range cases.All {
		t.Run(c.Name, func(t *testing.T) { c.Run(t) })
	}
}
