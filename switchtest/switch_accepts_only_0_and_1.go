// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
)

// switchAcceptsOnly0And1: starting from 0 and from 1, every write that is
// not 0 or 1 fails with EINVAL and leaves the value as it was: out of
// range ("2", "256"), negative ("-1"), not a number ("x"), trailing junk
// ("1x"). "0" and "1" are accepted with or without a trailing newline and
// read back.
//
// Kernel (the patch): .proc_handler = proc_dou8vec_minmax, .extra1 =
// SYSCTL_ZERO, .extra2 = SYSCTL_ONE. proc_dou8vec_minmax() parses into a temporary and
// stores it only on success; do_proc_douintvec_w() turns a parse error, a
// minus sign and the ERANGE of do_proc_douintvec_minmax_conv() into
// EINVAL.
func switchAcceptsOnly0And1(t selftests.T) {
	sw := requireSwitch(t)
	restoreAtEnd(t, sw)
	for _, start := range []string{"0", "1"} {
		setSwitch(t, sw, start)
		for _, bad := range []string{"2", "256", "-1", "x", "1x"} {
			if err := sw.Write(bad); !errors.Is(err, unix.EINVAL) {
				t.Errorf("writing %q to %s (holding %s): got %v, want EINVAL", bad, switchPath, start, err)
			}
			if got := switchValue(t, sw); got != start {
				t.Errorf("after the write of %q, %s reads %q, want %q unchanged", bad, switchPath, got, start)
			}
		}
	}
	for _, good := range []struct{ write, read string }{{"1", "1"}, {"0\n", "0"}, {"1\n", "1"}, {"0", "0"}} {
		if err := sw.Write(good.write); err != nil {
			t.Errorf("writing %q to %s: %v", good.write, switchPath, err)
		}
		if got := switchValue(t, sw); got != good.read {
			t.Errorf("after writing %q, %s reads %q, want %q", good.write, switchPath, got, good.read)
		}
	}
}
