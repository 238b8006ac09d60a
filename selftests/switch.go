// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"errors"
	"sync"

	"golang.org/x/sys/unix"

	"nlmcast/selftests/mcswitch"
)

// held is the switch Main holds for a Suite with Switch set.
var held struct {
	mu   sync.Mutex
	sw   *mcswitch.Switch // nil: not held, or the kernel has none
	skip string           // why sw is nil
}

// holdSwitch takes the switch's flock, saves its value and returns the
// release that writes it back (if it changed) and drops the lock.
func holdSwitch(log func(format string, args ...any)) (release func(), err error) {
	sw, restore, skip, err := mcswitch.Hold(log)
	if err != nil {
		return nil, err
	}
	held.mu.Lock()
	held.sw, held.skip = sw, skip
	held.mu.Unlock()
	return func() {
		held.mu.Lock()
		held.sw, held.skip = nil, "the switch was released"
		held.mu.Unlock()
		if restore != nil {
			restore()
		}
	}, nil
}

// HeldSwitch returns net.core.netlink_route_mc_index as Main holds it for
// a program whose Suite has Switch set: locked against the other programs
// and saved, to be restored when the program ends. On a kernel without
// the switch, or in a program that does not hold it, it returns nil and
// the reason, for a SKIP.
func HeldSwitch() (*mcswitch.Switch, string) {
	held.mu.Lock()
	sw, skip := held.sw, held.skip
	held.mu.Unlock()
	if sw != nil || skip != "" {
		return sw, skip
	}
	// Not run by Main (go test): the switch is probed and locked once, for
	// the test binary's life; each case restores what it changes.
	unheld.once.Do(func() {
		var err error
		unheld.sw, unheld.skip, err = mcswitch.Probe()
		switch {
		case err != nil:
			unheld.skip = err.Error()
		case unheld.sw != nil:
			if err := unheld.sw.Lock(); err != nil && !errors.Is(err, unix.ENOSYS) {
				unheld.sw.Close()
				unheld.sw, unheld.skip = nil, err.Error()
			}
		}
	})
	return unheld.sw, unheld.skip
}

// unheld is the switch outside Main.
var unheld struct {
	once sync.Once
	sw   *mcswitch.Switch
	skip string
}

// RequireSwitch returns the held switch, or ends the case as SKIP when
// there is none (a kernel without the series).
func RequireSwitch(t T) *mcswitch.Switch {
	t.Helper()
	sw, skip := HeldSwitch()
	if sw == nil {
		t.Skipf("%s", skip)
	}
	return sw
}

// InSwitchMode runs a case with net.core.netlink_route_mc_index at mode:
// it sets the switch, runs the case, and checks that the switch still
// holds mode once the case's own cleanups have run (nothing else may
// change it while the program holds its lock, or the result would not be
// about mode). On a kernel without the switch the case SKIPs, but with
// mode "0" and anyKernel set it runs as the kernel is: an unpatched
// kernel walks every subscriber, as 0 does.
func InSwitchMode(mode string, anyKernel bool, run func(T)) func(T) {
	return func(t T) {
		sw, skip := HeldSwitch()
		if sw == nil {
			if mode != "0" || !anyKernel {
				t.Skipf("%s", skip)
			}
			run(t)
			return
		}
		if err := sw.Set(mode); err != nil {
			t.Fatalf("%v", err)
		}
		t.Cleanup(func() {
			if v, err := sw.Read(); err != nil || v != mode {
				t.Errorf("%s reads %q (%v) at the end of the case, want %s throughout", mcswitch.Path, v, err, mode)
			}
		})
		run(t)
	}
}
