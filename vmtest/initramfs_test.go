// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteInitramfs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	initPath := write("guestinit", "INIT")
	suite := write("netlink_mcast_switch", "SUITE")
	out := filepath.Join(dir, "initramfs.cpio.gz")

	err := writeInitramfs(out, initramfsContents{init: initPath, bins: []string{suite}, suiteArgs: []string{"-v", "a b"},
		progArgs: map[string][]string{"netlink_mcast_switch": {"-t", "x y"}}})
	if err != nil {
		t.Fatal(err)
	}

	archive, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]cpioEntry{}
	for _, e := range readNewc(t, archive) {
		byName[e.name] = e
	}
	want := map[string]wantEntry{
		"bin":                                  {0o040755, ""},
		"dev":                                  {0o040755, ""},
		"etc":                                  {0o040755, ""},
		"proc":                                 {0o040555, ""},
		"sys":                                  {0o040555, ""},
		"tmp":                                  {0o041777, ""},
		"dev/console":                          {0o020600, ""},
		"init":                                 {0o100755, "INIT"},
		"bin/netlink_mcast_switch":             {0o100755, "SUITE"},
		"etc/nlmc-args":                        {0o100644, "-v\na b\n"},
		"etc/nlmc-args.d":                      {0o040755, ""},
		"etc/nlmc-args.d/netlink_mcast_switch": {0o100644, "-t\nx y\n"},
	}
	if len(byName) != len(want) {
		t.Errorf("archive has %d entries, want %d: %v", len(byName), len(want), byName)
	}
	checkEntries(t, byName, want)
	if c := byName["dev/console"]; c.rdevMajor != 5 || c.rdevMinor != 1 {
		t.Errorf("dev/console is device %d:%d, want 5:1", c.rdevMajor, c.rdevMinor)
	}
}

// wantEntry is what an archive entry must be.
type wantEntry struct {
	mode uint32
	data string
}

// checkEntries checks that each entry of want is in the archive as wanted.
func checkEntries(t *testing.T, byName map[string]cpioEntry, want map[string]wantEntry) {
	t.Helper()
	for name, w := range want {
		e, ok := byName[name]
		if !ok {
			t.Errorf("missing %s", name)
			continue
		}
		if e.mode != w.mode || e.data != w.data {
			t.Errorf("%s: mode %o data %q; want mode %o data %q", name, e.mode, e.data, w.mode, w.data)
		}
	}
}
