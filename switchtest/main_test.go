// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"testing"

	"nlmcast/selftests"
)

// TestSwitch runs the suite's cases through testing.T, with the suite's
// Setup around them: the switch is saved first and restored at the end.
func TestSwitch(t *testing.T) {
	holdSwitch(t)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) { c.Run(t) })
	}
}

// holdSwitch skips t unless run as root, and otherwise holds the switch
// for it as selftests.Main does: locked (flock) and saved, and restored
// when t ends.
func holdSwitch(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces and writes a sysctl")
	}
	sw, _ := selftests.HeldSwitch()
	if sw == nil {
		return // every case SKIPs
	}
	_, restore, err := sw.Save()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := restore(); err != nil {
			t.Error(err)
		}
	})
}

// TestScenarioInCurrentMode runs the whole delivery matrix once in
// whatever mode the kernel is in, without touching the switch: on a
// kernel without it, this checks the model against the unpatched walk.
func TestScenarioInCurrentMode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces")
	}
	t.Logf("netlink_route_mc_index=%s", selftests.RouteMCIndex())
	newScenario(t, "").full()
}
