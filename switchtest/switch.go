// SPDX-License-Identifier: GPL-2.0

package main

import (
	"nlmcast/selftests"
	"nlmcast/selftests/mcswitch"
)

// switchPath is the switch's file as a thread in the initial namespace
// sees it; every access goes through mcswitch.
const switchPath = mcswitch.Path

// setupSwitch is the suite's Setup: it waits for the switch to be free
// (other programs that change it hold its flock), saves its value, and
// returns the cleanup that puts the value back and lets the next program
// run. selftests.Main runs that cleanup on every way out of the program
// (after the last case, after a case failed or panicked, after SIGTERM
// once the running case has ended), and every case that changes the
// switch also restores it itself when it ends. On a kernel without the
// switch there is nothing to save; each case then SKIPs.
func setupSwitch(log func(format string, args ...any)) (func(), error) {
	sw, restore, _, err := mcswitch.Hold(log)
	if err != nil || sw == nil {
		return nil, err
	}
	return restore, nil
}

// requireSwitch returns the switch, or ends the case as SKIP on a kernel
// without it.
func requireSwitch(t selftests.T) *mcswitch.Switch {
	t.Helper()
	sw, skip, err := mcswitch.Probe()
	if err != nil {
		t.Fatalf("%s: %v", switchPath, err)
	}
	if sw == nil {
		t.Skipf("%s", skip)
	}
	t.Cleanup(sw.Close)
	return sw
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
