// SPDX-License-Identifier: GPL-2.0

package nlmcast_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// makeIn runs make with args in dir, with the environment minus the
// variables the Makefile reads from it (KERNEL, ...) plus env, and returns
// its combined output and whether it succeeded.
func makeIn(t *testing.T, dir string, env []string, args ...string) (string, bool) {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("needs make")
	}
	cmd := exec.Command("make", append([]string{"-C", dir}, args...)...)
	// Under `make test` the caller's make variables reach the child:
	// MAKELEVEL would turn its "make:" lines into "make[1]:".
	for _, kv := range os.Environ() {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "KERNEL", "PROGS", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "GOFLAGS":
		default:
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// `make vmtest` and `make vmtest-stress` without a usable KERNEL stop with
// the Makefile's own message, before building anything, and with nothing
// else: not make's "No rule to make target .../vm-/...", not od's
// complaints about an image it could not read.
func TestMakeVmtestNamesAMissingKernel(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"vmtest"}, "Error: set KERNEL=path/to/bzImage or Image"},
		{[]string{"vmtest", "KERNEL="}, "Error: set KERNEL=path/to/bzImage or Image"},
		{[]string{"vmtest", "KERNEL=/nonexistent"}, "Error: KERNEL=/nonexistent is not a file"},
		{[]string{"vmtest", "KERNEL=/tmp"}, "Error: KERNEL=/tmp is not a file"},
		{[]string{"vmtest-stress"}, "Error: set KERNEL=path/to/bzImage or Image"},
		{[]string{"vmtest-stress", "KERNEL=/nonexistent"}, "Error: KERNEL=/nonexistent is not a file"},
	} {
		out, ok := makeIn(t, ".", nil, append([]string{"-s"}, tc.args...)...)
		if strings.Contains(out, "no Go toolchain") {
			t.Skipf("make: %s", out)
		}
		if ok {
			t.Errorf("make %s succeeded:\n%s", strings.Join(tc.args, " "), out)
			continue
		}
		var other []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if !strings.HasPrefix(l, tc.want) && !strings.HasPrefix(l, "make: *** [") {
				other = append(other, l)
			}
		}
		if !strings.Contains(out, tc.want) || len(other) > 0 {
			t.Errorf("make %s: want only %q, got:\n%s", strings.Join(tc.args, " "), tc.want, out)
		}
	}
}

// A build with no vendor/, no module cache and no way to download
// (GOPROXY=off) fails with Go's message and then the remedy: make vendor.
func TestMakeOfflineWithoutVendorSuggestsMakeVendor(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs go on PATH")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir() && (p == ".git" || p == "vendor" || p == "evidence" || strings.HasPrefix(p, "vm-")):
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(filepath.Join(src, p), 0o755)
		case !d.Type().IsRegular() || !strings.Contains(p, "/") && strings.HasPrefix(p, "netlink_mcast_"):
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(src, p), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"GOPROXY=off", "GOTOOLCHAIN=local", "GOMODCACHE=" + filepath.Join(dir, "mod"),
		"GOFLAGS=-modcacherw"}
	out, ok := makeIn(t, src, env, filepath.Join(src, "netlink_mcast_semantics"))
	if ok {
		t.Fatalf("the build without vendor/ and modules succeeded:\n%s", out)
	}
	for _, want := range []string{"module lookup disabled by GOPROXY=off", "run 'make vendor' once where there is network"} {
		if !strings.Contains(out, want) {
			t.Errorf("the failed offline build does not say %q:\n%s", want, out)
		}
	}
}
