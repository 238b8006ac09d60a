// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseOptionsUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-kernel", "k"},
		{"-kernel", "k", "-accel", "hvf", "bin"},
		{"-kernel", "k", "-args", "'open", "bin"},
		{"-kernel", "k", "-timeout", "0s", "bin"},
		{"-nosuchflag"},
	} {
		if _, err := parseOptions(args, io.Discard); !errors.Is(err, errUsage) {
			t.Errorf("parseOptions(%q) = %v, want a usage error", args, err)
		}
	}
}

func TestParseOptionsDefaultsAndChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go program")
	}
	qemu := filepath.Join(t.TempDir(), "qemu-stand-in")
	if err := os.WriteFile(qemu, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	kernel := filepath.Join(t.TempDir(), "bzImage")
	if err := os.WriteFile(kernel, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := buildStaticGoProgram(t, "package main\nfunc main() {}\n")

	o, err := parseOptions([]string{"-kernel", kernel, "-qemu", qemu, "-args", "-v 'a b'", bin}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.accel != accelTCG || o.memMiB != 1024 || o.cpus != 2 || o.timeout != 300*time.Second {
		t.Errorf("defaults: accel %s mem %d smp %d timeout %v", o.accel, o.memMiB, o.cpus, o.timeout)
	}
	if !slices.Equal(o.suiteArgs, []string{"-v", "a b"}) || !slices.Equal(o.bins, []string{bin}) {
		t.Errorf("args %q bins %q", o.suiteArgs, o.bins)
	}

	twin := filepath.Join(t.TempDir(), filepath.Base(bin))
	data, _ := os.ReadFile(bin)
	if err := os.WriteFile(twin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := parseOptions([]string{"-kernel", kernel, "-qemu", qemu, bin, twin}, io.Discard); err == nil || !strings.Contains(err.Error(), "would both be") {
		t.Errorf("two programs with one name: err = %v", err)
	}
	if _, err := parseOptions([]string{"-kernel", kernel + ".missing", "-qemu", qemu, bin}, io.Discard); err == nil {
		t.Error("a missing kernel was accepted")
	}
}
