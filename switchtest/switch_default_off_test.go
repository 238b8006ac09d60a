// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCmdlineSetting(t *testing.T) {
	for cmdline, want := range map[string]int{
		"console=ttyS0 quiet":                      -1,
		"sysctl.net.core.netlink_route_mc_index=1": 1,
		"sysctl/net/core/netlink_route_mc_index=1": 1,
		"sysctl.net/core.netlink_route_mc_index=1": 1,
		"sysctl.net.core.netlink_route_mc_index=1 quiet sysctl.net.core.netlink_route_mc_index=0": 0,
		`sysctl.net.core.netlink_route_mc_index="1"`:                                              1,
		"sysctl.net.core.netlink-route-mc-index=1":                                                -1, // the kernel does not fold '-'
		"sysctlnet.core.netlink_route_mc_index=1":                                                 -1,
		"sysctl.net.core.netlink_route_mc_index=x":                                                -1,
		"sysctl.net.core.netlink_route_mc_index":                                                  -1,
		"quiet -- sysctl.net.core.netlink_route_mc_index=1":                                       -1, // init's arguments
		`foo="a sysctl.net.core.netlink_route_mc_index=1" bar`:                                    -1, // inside another argument
		"sysctl.net.core.netlink_route_mc_index_other=1":                                          -1,
	} {
		got := cmdlineSetting(cmdline)
		switch {
		case want < 0 && got != nil:
			t.Errorf("%q: got %v, want nothing", cmdline, got)
		case want >= 0 && (got == nil || got.value != uint64(want)):
			t.Errorf("%q: got %v, want %d", cmdline, got, want)
		}
	}
}

func TestFileSetting(t *testing.T) {
	root := t.TempDir()
	etc, lib := filepath.Join(root, "etc"), filepath.Join(root, "lib")
	write := func(dir, name, contents string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(contents), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	conf := filepath.Join(root, "sysctl.conf")
	dirs := []string{etc, lib}
	if s := fileSetting(dirs, conf); s != nil {
		t.Errorf("no files: got %v", s)
	}
	write(lib, "10-a.conf", "# net.core.netlink_route_mc_index = 1\n; net.core.netlink_route_mc_index = 1\n")
	if s := fileSetting(dirs, conf); s != nil {
		t.Errorf("comments only: got %v", s)
	}
	write(lib, "20-b.conf", "net.core.netlink_route_mc_index = 1\n")
	if s := fileSetting(dirs, conf); s == nil || s.value != 1 || !strings.Contains(s.source, "20-b.conf:1") {
		t.Errorf("one file: got %v, want 1 from 20-b.conf:1", s)
	}
	write(etc, "20-b.conf", "-net/core/netlink_route_mc_index=0\n") // hides lib's 20-b.conf
	if s := fileSetting(dirs, conf); s == nil || s.value != 0 {
		t.Errorf("/etc hides /lib: got %v, want 0", s)
	}
	write(lib, "30-c.conf", "net.core.netlink_route_mc_index=1\n") // later name wins
	if s := fileSetting(dirs, conf); s == nil || s.value != 1 || !strings.Contains(s.source, "30-c.conf") {
		t.Errorf("later name wins: got %v, want 1 from 30-c.conf", s)
	}
	write(root, "sysctl.conf", "net.core.netlink_route_mc_index = 0\n") // applied last
	if s := fileSetting(dirs, conf); s == nil || s.value != 0 || !strings.Contains(s.source, "sysctl.conf") {
		t.Errorf("sysctl.conf last: got %v, want 0 from sysctl.conf", s)
	}
}

func TestJudgeDefault(t *testing.T) {
	one := &setting{1, "cmdline"}
	zero := &setting{0, "cmdline"}
	fileOne := &setting{1, "file"}
	for _, tc := range []struct {
		name           string
		v              uint64
		cmdline, files *setting
		xfail, fail    bool
	}{
		{"0, nothing configured", 0, nil, nil, false, false},
		{"0, 0 configured", 0, zero, nil, false, false},
		{"0, 1 configured", 0, one, nil, false, false},
		{"1, nothing configured", 1, nil, nil, false, true},
		{"1, 0 configured", 1, zero, nil, false, true},
		{"1, 1 on the command line", 1, one, nil, true, false},
		{"1, 1 in a file", 1, nil, fileOne, true, false},
		{"1, 0 on the command line, 1 in a file", 1, zero, fileOne, true, false},
	} {
		reason, fail := judgeDefault(tc.v, tc.cmdline, tc.files)
		if fail != tc.fail || (reason != "" && !fail) != tc.xfail {
			t.Errorf("%s: reason %q fail %v, want xfail %v fail %v", tc.name, reason, fail, tc.xfail, tc.fail)
		}
	}
	for raw, want := range map[string]int{"0\n": 0, "1\n": 1, "1": -1, "x\n": -1, "256\n": -1, "": -1} {
		v, ok := switchReading(raw)
		if ok != (want >= 0) || (ok && v != uint64(want)) {
			t.Errorf("switchReading(%q) = %d, %v; want %d", raw, v, ok, want)
		}
	}
}
