// SPDX-License-Identifier: GPL-2.0

package main

import (
	"nlmcast/selftests"
	"nlmcast/selftests/mcswitch"
)

// switchPath is the switch's file as a thread in the initial namespace
// sees it; every access goes through mcswitch.
const switchPath = mcswitch.Path

// requireSwitch returns the switch the program holds (selftests.Main
// takes its lock and saves its value before the first case, and puts the
// value back on every way out; each case that changes it also restores it
// itself), or ends the case as SKIP on a kernel without it.
func requireSwitch(t selftests.T) *mcswitch.Switch {
	t.Helper()
	return selftests.RequireSwitch(t)
}

// switchValue returns the current value, failing the case if it cannot be
// read.
func switchValue(t selftests.T, sw *mcswitch.Switch) string {
	t.Helper()
	v, err := sw.Read()
	if err != nil {
		t.Fatalf("read %s in the initial netns: %v", switchPath, err)
	}
	return v
}

// restoreAtEnd remembers the current value and puts it back when the case
// ends, whichever way it ends.
func restoreAtEnd(t selftests.T, sw *mcswitch.Switch) {
	t.Helper()
	_, restore, err := sw.Save()
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() {
		if _, err := restore(); err != nil {
			t.Errorf("%v", err)
		}
	})
}

// setSwitch writes v ("0" or "1") and checks that it reads back.
func setSwitch(t selftests.T, sw *mcswitch.Switch, v string) {
	t.Helper()
	if err := sw.Set(v); err != nil {
		t.Fatalf("%v", err)
	}
}
