// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"nlmcast/selftests"
	"nlmcast/selftests/netns"
)

// switchVisibleOnlyInInitNet: in the initial namespace the switch is a
// regular file with mode 0644 that root can open for writing; from a
// thread in a child namespace it does not exist at all (stat, open for
// reading and for writing all fail with ENOENT, and /proc/sys/net/core
// does not list it), while a per-namespace net.core entry, somaxconn, is
// there as a control. So a child namespace can neither see nor set it.
// Nothing is written: the open for writing is the permission check.
//
// Kernel: register_net_sysctl(&init_net, "net/core",
// netlink_route_mc_sysctl_table) with .mode = 0644, for init_net only;
// /proc/sys/net is resolved against the calling thread's namespace
// (net_ctl_header_lookup); proc_sys_permission() grants root write access
// from the mode's owner bits.
func switchVisibleOnlyInInitNet(t selftests.T) {
	sw := requireSwitch(t)
	if err := sw.Initial().Do(func() error { return switchPresent(true) }); err != nil {
		t.Errorf("initial netns: %v", err)
	}

	child, err := netns.New("child")
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() { child.Close() })
	if err := child.Do(func() error { return switchPresent(false) }); err != nil {
		t.Errorf("child netns: %v", err)
	}
}

// switchMode is the patch's .mode = 0644.
const switchMode = 0o644

// switchPresent checks the switch file, from the calling thread's
// namespace, against present.
func switchPresent(present bool) error {
	const control = "/proc/sys/net/core/somaxconn"
	if _, err := os.Stat(control); err != nil {
		return fmt.Errorf("control %s: %w", control, err)
	}
	dir, err := os.ReadDir("/proc/sys/net/core")
	if err != nil {
		return err
	}
	listed := slices.ContainsFunc(dir, func(e os.DirEntry) bool { return e.Name() == "netlink_route_mc_index" })
	if listed != present {
		return fmt.Errorf("/proc/sys/net/core lists netlink_route_mc_index: %v, want %v", listed, present)
	}
	fi, statErr := os.Stat(switchPath)
	r, readErr := os.Open(switchPath)
	if readErr == nil {
		r.Close()
	}
	w, writeErr := os.OpenFile(switchPath, os.O_WRONLY, 0)
	if writeErr == nil {
		w.Close()
	}
	if !present {
		for _, c := range []struct {
			op  string
			err error
		}{{"stat", statErr}, {"open for reading", readErr}, {"open for writing", writeErr}} {
			if !errors.Is(c.err, os.ErrNotExist) {
				return fmt.Errorf("%s %s: got %v, want ENOENT", c.op, switchPath, c.err)
			}
		}
		return nil
	}
	switch {
	case statErr != nil:
		return statErr
	case !fi.Mode().IsRegular() || fi.Mode().Perm() != switchMode:
		return fmt.Errorf("%s has mode %v, want %v", switchPath, fi.Mode(), os.FileMode(switchMode))
	case readErr != nil:
		return readErr
	case writeErr != nil:
		return fmt.Errorf("root cannot open %s for writing: %w", switchPath, writeErr)
	}
	return nil
}
