// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"testing"
)

// TestFlipKindsInCurrentMode runs every kind of change of flips.go
// without touching the switch: build and check, change, check. On a
// kernel without the switch this checks the model, kind by kind, against
// the unpatched walk.
func TestFlipKindsInCurrentMode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces")
	}
	for _, k := range flipKinds {
		t.Run(k.name, func(t *testing.T) {
			sc := emptyScenario(t)
			f := k.build(sc)
			f.events()
			f.change()
			f.events()
		})
	}
}
