// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"nlmcast/vmtest/kimage"
)

// fakeInstall makes a directory laid out like a kselftest install, with
// prog as its one program.
func fakeInstall(t *testing.T, prog string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"run_kselftest.sh":                        "#!/bin/sh\necho runner\n",
		"kselftest/runner.sh":                     "#!/bin/sh\n",
		"kselftest-list.txt":                      "netlink_mcast:netlink_mcast_semantics\n",
		"netlink_mcast/settings":                  "timeout=900\n",
		"netlink_mcast/netlink_mcast_semantics":   "",
		"netlink_mcast/kselftest-list-copy.txt":   "",
		"netlink_mcast/subdir/not-a-program.data": "data",
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if name == "netlink_mcast/netlink_mcast_semantics" && prog != "" {
			b, err := os.ReadFile(prog)
			if err != nil {
				t.Fatal(err)
			}
			data = string(b)
		}
		if err := os.WriteFile(p, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("kselftest-list.txt", filepath.Join(dir, "netlink_mcast", "list-link")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCheckKselftestDir(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	amd64 := buildStaticGoProgram(t, "amd64", "package main\nfunc main() {}\n")
	arm64 := buildStaticGoProgram(t, "arm64", "package main\nfunc main() {}\n")
	if err := checkKselftestDir(fakeInstall(t, arm64), kimage.ARM64, "P-arm64.Image"); err != nil {
		t.Errorf("arm64 install for an arm64 kernel: %v", err)
	}
	dir := fakeInstall(t, amd64)
	err := checkKselftestDir(dir, kimage.ARM64, "/k/P-arm64.Image")
	want := filepath.Join(dir, "netlink_mcast", "netlink_mcast_semantics") + " is an x86-64 ELF, the kernel P-arm64.Image is arm64: build it with GOARCH=arm64"
	if err == nil || err.Error() != want {
		t.Errorf("x86-64 install for an arm64 kernel: %v\nwant %s", err, want)
	}
	if err := checkKselftestDir(t.TempDir(), kimage.ARM64, "P-arm64.Image"); err == nil || !strings.Contains(err.Error(), "not an installed kselftest copy") {
		t.Errorf("an empty directory: %v", err)
	}
}

func TestParseOptionsKselftestUsage(t *testing.T) {
	for _, args := range [][]string{
		{"-kernel", "k", "-kselftest", "dir"},                          // no -busybox
		{"-kernel", "k", "-kselftest", "dir", "-busybox", "bb", "bin"}, // programs besides
		{"-kernel", "k", "-busybox", "bb", "bin"},                      // -busybox alone
	} {
		if _, err := parseOptions(args, io.Discard); !errors.Is(err, errUsage) {
			t.Errorf("parseOptions(%q) = %v, want a usage error", args, err)
		}
	}
}

// The installed copy keeps its layout, modes and links; busybox is the
// shell; the one program in /bin is the script that runs the runner.
func TestWriteInitramfsKselftest(t *testing.T) {
	dir := fakeInstall(t, "")
	busybox := filepath.Join(t.TempDir(), "busybox")
	if err := os.WriteFile(busybox, []byte("BUSYBOX"), 0o755); err != nil {
		t.Fatal(err)
	}
	initPath := filepath.Join(t.TempDir(), "init")
	if err := os.WriteFile(initPath, []byte("INIT"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "initramfs.cpio.gz")
	if err := writeInitramfs(out, initramfsContents{init: initPath, ksftDir: dir, busybox: busybox, suiteArgs: []string{"-t", "netlink_mcast:netlink_mcast_semantics"}}); err != nil {
		t.Fatal(err)
	}
	archive, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]cpioEntry{}
	var programs []string
	for _, e := range readNewc(t, archive) {
		byName[e.name] = e
		if strings.HasPrefix(e.name, "bin/") && e.mode&0o170000 == 0o100000 {
			programs = append(programs, e.name)
		}
	}
	checkEntries(t, byName, map[string]wantEntry{
		"usr/bin/busybox":                           {0o100755, "BUSYBOX"},
		"bin/sh":                                    {0o120777, "/usr/bin/busybox"},
		"bin/run_kselftest.sh":                      {0o100755, ksftRunnerScript},
		"kselftest_install":                         {0o040000 | dirPerm(t, dir), ""},
		"kselftest_install/run_kselftest.sh":        {0o100755, "#!/bin/sh\necho runner\n"},
		"kselftest_install/netlink_mcast/settings":  {0o100755, "timeout=900\n"},
		"kselftest_install/netlink_mcast/list-link": {0o120777, "kselftest-list.txt"},
		"etc/nlmc-args":                             {0o100644, "-t\nnetlink_mcast:netlink_mcast_semantics\n"},
	})
	if len(programs) != 1 || programs[0] != "bin/run_kselftest.sh" {
		t.Errorf("regular files in /bin (the init runs each): %q, want only the runner's script", programs)
	}
}

func dirPerm(t *testing.T, dir string) uint32 {
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(info.Mode().Perm())
}
