// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"nlmcast/selftests"
	"nlmcast/selftests/mcswitch"
)

// switchDefaultOff: the switch reads "0\n" unless something configured
// another value, and with the value it has the mini matrix (E1 in S and in
// F, the group-36 event in S: local plain and ALL_NSID members, foreign
// plain, foreign ALL_NSID mapped and unmapped) gives the unpatched
// kernel's deliveries.
//
// A non-zero value is an XFAIL ("value already modified") only when a
// configured value explains it: the kernel command line
// (sysctl.net.core.netlink_route_mc_index=V, which the kernel applies at
// boot itself, the last one winning) or, as the weaker explanation since
// the program cannot know whether they were applied, the sysctl
// configuration files that systemd-sysctl and `sysctl --system` read. A
// value of 0 is right whatever is configured (a later writer may have put
// it back); a non-zero value that nothing configured, or that differs from
// what is configured, fails. (A run-time write by an administrator, or a
// copy of this program killed with SIGKILL, looks the same as a wrong
// default: the failure message says so.)
//
// Kernel: static u8 netlink_route_mc_index (zero-initialised);
// proc_dou8vec_minmax() prints it as "%u\n"; do_sysctl_args() ->
// process_sysctl_arg() writes each sysctl.<key>=<value> of the command
// line in order (Linux 5.8+).
func switchDefaultOff(t selftests.T) {
	sw := requireSwitch(t)
	raw, err := sw.Raw()
	if err != nil {
		t.Fatalf("read %s in the initial netns: %v", switchPath, err)
	}

	newScenario(t, "").basic()

	v, ok := switchReading(raw)
	if !ok {
		t.Fatalf("%s reads %q, want \"0\\n\"", switchPath, raw)
	}
	cmdline, _ := os.ReadFile("/proc/cmdline")
	fromCmdline := cmdlineSetting(string(cmdline))
	fromFiles := fileSetting(sysctlConfigDirs, sysctlConf)
	if fromCmdline != nil {
		t.Logf("configured: %s", fromCmdline)
	}
	if fromFiles != nil {
		t.Logf("configured (applied only if systemd-sysctl or sysctl --system ran): %s", fromFiles)
	}
	if reason, fail := judgeDefault(v, fromCmdline, fromFiles); fail {
		t.Errorf("%s", reason)
	} else if reason != "" {
		selftests.XFail(t, reason)
	}
}

// switchReading parses what the switch file reads: an unsigned number and
// a newline.
func switchReading(raw string) (uint64, bool) {
	s, ok := strings.CutSuffix(raw, "\n")
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 8)
	return v, err == nil
}

// judgeDefault decides on the value v read from the switch, given what the
// command line and the configuration files set (nil: nothing). It returns
// an XFAIL reason (fail false, reason not empty), a failure (fail true), or
// nothing (a pass).
func judgeDefault(v uint64, cmdline, files *setting) (reason string, fail bool) {
	if v == 0 {
		return "", false
	}
	switch {
	case cmdline != nil && cmdline.value == v:
		return "value already modified: " + cmdline.String(), false
	case files != nil && files.value == v:
		return "value already modified, probably at boot: " + files.String(), false
	}
	var configured []string
	for _, s := range []*setting{cmdline, files} {
		if s != nil {
			configured = append(configured, s.String())
		}
	}
	if len(configured) == 0 {
		return fmt.Sprintf("%s reads %d, and neither the kernel command line nor a sysctl configuration file sets it: "+
			"the default is not 0, or something wrote it at run time", switchPath, v), true
	}
	return fmt.Sprintf("%s reads %d, which nothing configured explains (%s): "+
		"the default is not 0, or something wrote it at run time", switchPath, v, strings.Join(configured, "; ")), true
}

// setting is a value configured for the switch, and where.
type setting struct {
	value  uint64
	source string
}

func (s *setting) String() string { return fmt.Sprintf("%s sets %d", s.source, s.value) }

// cmdlineSetting returns the value the kernel command line gives the
// switch, or nil. It reads the arguments as parse_args() does (next_arg():
// split at spaces outside double quotes, a quoted value loses its quotes,
// "--" ends the kernel's arguments) and takes, as process_sysctl_arg()
// does, "sysctl" followed by '.' or '/' and the key with either separator.
// The last one wins: each is written in turn. A value the switch would
// refuse (not a number) sets nothing.
func cmdlineSetting(cmdline string) *setting {
	var found *setting
	for _, arg := range kernelArgs(cmdline) {
		param, val, ok := strings.Cut(arg, "=")
		if !ok || len(param) < len("sysctl.") || !strings.HasPrefix(param, "sysctl") {
			continue
		}
		if sep := param[len("sysctl")]; sep != '.' && sep != '/' {
			continue
		}
		if strings.ReplaceAll(param[len("sysctl."):], ".", "/") != mcswitch.Sysctl {
			continue
		}
		val = strings.Trim(val, `"`)
		if v, err := strconv.ParseUint(strings.TrimSpace(val), 10, 8); err == nil {
			found = &setting{v, "the kernel command line (" + param + "=" + val + ")"}
		}
	}
	return found
}

// kernelArgs splits a command line like the kernel's next_arg().
func kernelArgs(cmdline string) []string {
	var args []string
	var cur strings.Builder
	quoted, inArg := false, false
	for _, r := range cmdline {
		switch {
		case r == '"':
			quoted, inArg = !quoted, true
			cur.WriteRune(r)
		case !quoted && (r == ' ' || r == '\t' || r == '\n'):
			if inArg {
				if cur.String() == "--" {
					return args
				}
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if inArg && cur.String() != "--" {
		args = append(args, cur.String())
	}
	return args
}

// sysctlConfigDirs and sysctlConf are what `sysctl --system` (procps)
// reads, in its order: the *.conf files of these directories, a name in an
// earlier directory hiding the same name in a later one, applied in order
// of name; then /etc/sysctl.conf. systemd-sysctl reads the same
// directories.
var sysctlConfigDirs = []string{"/etc/sysctl.d", "/run/sysctl.d", "/usr/local/lib/sysctl.d", "/usr/lib/sysctl.d", "/lib/sysctl.d"}

const sysctlConf = "/etc/sysctl.conf"

// fileSetting returns the value the configuration files give the switch
// when applied in order (the last assignment wins), or nil.
func fileSetting(dirs []string, conf string) *setting {
	byName := map[string]string{}
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.conf"))
		for _, f := range files {
			if _, seen := byName[filepath.Base(f)]; !seen {
				byName[filepath.Base(f)] = f
			}
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	var order []string
	for _, n := range names {
		order = append(order, byName[n])
	}
	order = append(order, conf)

	var found *setting
	for _, f := range order {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if s := confSetting(f, string(b)); s != nil {
			found = s
		}
	}
	return found
}

// confSetting returns the last assignment of the switch in the contents of
// one configuration file: "key = value" lines, '#' and ';' comments, an
// optional leading '-' (ignore errors), '.' or '/' separators.
func confSetting(file, contents string) *setting {
	var found *setting
	for i, line := range strings.Split(contents, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		key = strings.TrimPrefix(strings.TrimSpace(key), "-")
		if strings.ReplaceAll(key, ".", "/") != mcswitch.Sysctl {
			continue
		}
		if v, err := strconv.ParseUint(strings.TrimSpace(val), 10, 8); err == nil {
			found = &setting{v, fmt.Sprintf("%s:%d (%s)", file, i+1, line)}
		}
	}
	return found
}
