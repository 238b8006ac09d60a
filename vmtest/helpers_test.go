// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// buildStaticGoProgram compiles a one-file Go program into a static binary
// for goarch in a fresh temporary directory and returns its path.
func buildStaticGoProgram(t *testing.T, goarch, source string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module fakeprog\n\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "prog")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build test program: %v\n%s", err, output)
	}
	return out
}

// buildModuleProgram compiles a package of this module (e.g.
// "./switchtest") into a static binary for goarch called name in a fresh
// temporary directory and returns its path.
func buildModuleProgram(t *testing.T, goarch, pkg, name string) string {
	t.Helper()
	root, err := findModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), name)
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, output)
	}
	return out
}

// fakeImage writes a file with the boot header of an image for arch (no
// kernel behind it) and returns its path.
func fakeImage(t *testing.T, goarch string) string {
	t.Helper()
	head := make([]byte, 4096)
	name := "bzImage"
	switch goarch {
	case "amd64":
		copy(head[0x202:], "HdrS")
	case "arm64":
		copy(head[0x38:], "ARM\x64")
		name = "Image"
	default:
		t.Fatalf("no fake image for %s", goarch)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, head, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
