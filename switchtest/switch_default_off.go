// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"

	"nlmcast/selftests"
)

// switchDefaultOff: the switch reads "0\n" unless someone set it, and with
// the value it has the mini matrix (E1 in S and in F, the group-36 event
// in S: local plain and ALL_NSID members, foreign plain, foreign ALL_NSID
// mapped and unmapped) gives the unpatched kernel's deliveries.
//
// A 1 cannot be told apart from a wrong default. When the kernel command
// line or a sysctl configuration file sets the switch, the system is not
// fresh and a 1 is an XFAIL ("value already modified"); otherwise nothing
// should have set it and a 1 fails. (A run-time write by an administrator,
// or a copy of this program killed with SIGKILL, looks the same as a wrong
// default: the failure message says so.)
//
// Kernel: static u8 netlink_route_mc_index (zero-initialised);
// proc_dou8vec_minmax() prints it as "%u\n".
func switchDefaultOff(t selftests.T) {
	sw := requireSwitch(t)
	raw, err := sw.Raw()
	if err != nil {
		t.Fatalf("read %s in the initial netns: %v", switchPath, err)
	}

	newScenario(t, "").basic()

	switch raw {
	case "0\n":
	case "1\n":
		if where := setBy(); where != "" {
			selftests.XFail(t, "value already modified: "+where)
		}
		t.Errorf("%s reads 1, and neither the kernel command line nor a sysctl configuration file sets it: "+
			"the default is not 0, or something wrote it at run time", switchPath)
	default:
		t.Errorf("%s reads %q, want \"0\\n\"", switchPath, raw)
	}
}

// sysctlConfigs are the files systemd-sysctl and `sysctl --system` apply
// at boot.
var sysctlConfigs = []string{
	"/etc/sysctl.conf", "/etc/sysctl.d/*.conf", "/run/sysctl.d/*.conf",
	"/usr/local/lib/sysctl.d/*.conf", "/usr/lib/sysctl.d/*.conf", "/lib/sysctl.d/*.conf",
}

// setBy says what sets the switch at boot: the kernel command line
// (sysctl.net.core.netlink_route_mc_index=...) or a sysctl configuration
// file; "" if nothing does.
func setBy() string {
	const key = "netlink_route_mc_index"
	if b, err := os.ReadFile("/proc/cmdline"); err == nil {
		for _, arg := range strings.Fields(string(b)) {
			if strings.HasPrefix(arg, "sysctl.") && strings.Contains(arg, key) {
				return "kernel command line " + arg
			}
		}
	}
	for _, pattern := range sysctlConfigs {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(b), "\n") {
				line = strings.TrimSpace(line)
				if strings.Contains(line, key) && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, ";") {
					return f + ": " + line
				}
			}
		}
	}
	return ""
}
