// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestCheckGuestBinaryRejectsNonELF(t *testing.T) {
	path := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(path, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := checkGuestBinary(path); err == nil || !strings.Contains(err.Error(), "not an ELF") {
		t.Errorf("checkGuestBinary(script) = %v, want a not-an-ELF error", err)
	}
}

func TestCheckGuestBinaryRejectsDynamicExecutable(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the host's programs are not x86-64, so the architecture check fires first")
	}
	// Any dynamically linked system program will do.
	for _, path := range []string{"/bin/sh", "/usr/bin/env"} {
		if _, err := exec.LookPath(path); err != nil {
			continue
		}
		if err := checkGuestBinary(path); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
			t.Errorf("checkGuestBinary(%s) = %v, want a dynamically-linked error", path, err)
		}
		return
	}
	t.Skip("no dynamically linked program found to try")
}

func TestCheckGuestBinaryAcceptsStaticGoBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go program")
	}
	bin := buildStaticGoProgram(t, "package main\nfunc main() {}\n")
	if err := checkGuestBinary(bin); err != nil {
		t.Errorf("checkGuestBinary(static Go binary) = %v", err)
	}
}
