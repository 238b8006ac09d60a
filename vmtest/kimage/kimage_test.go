// SPDX-License-Identifier: GPL-2.0

package kimage

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// header returns a fake image of size bytes with magic at off.
func header(size, off int, magic string) []byte {
	b := make([]byte, size)
	copy(b[off:], magic)
	return b
}

func gzipped(t *testing.T, b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name    string
		data    []byte
		want    Arch
		wantErr string
	}{
		{"bzImage", header(4096, 0x202, "HdrS"), X86_64, ""},
		{"Image", header(4096, 0x38, "ARM\x64"), ARM64, ""},
		{"short Image", header(0x3c, 0x38, "ARM\x64"), ARM64, ""},
		{"Image.gz", gzipped(t, header(4096, 0x38, "ARM\x64")), ARM64, ""},
		{"gzip of something else", gzipped(t, header(4096, 0x202, "HdrS")), Arch{}, "not an arm64 Image.gz"},
		{"magic one byte off", header(4096, 0x39, "ARM\x64"), Arch{}, "not a kernel image vmtest knows"},
		{"vmlinux", append([]byte("\x7fELF"), make([]byte, 1000)...), Arch{}, "an ELF file (vmlinux?)"},
		{"empty", nil, Arch{}, "not a kernel image vmtest knows"},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_"))
		if err := os.WriteFile(path, tt.data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := Detect(path)
		switch {
		case tt.wantErr == "" && (err != nil || got != tt.want):
			t.Errorf("%s: Detect = %+v, %v; want %s", tt.name, got, err, tt.want.Name)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: Detect = %+v, %v; want an error containing %q", tt.name, got, err, tt.wantErr)
		}
	}
	if _, err := Detect(filepath.Join(dir, "missing")); err == nil {
		t.Error("Detect(missing file) succeeded")
	}
}

// The project's own images, where they are at hand.
func TestDetectSharedKernels(t *testing.T) {
	for name, want := range map[string]Arch{"P.bzImage": X86_64, "U-6.12.bzImage": X86_64, "P-arm64.Image": ARM64, "U-arm64.Image": ARM64} {
		path := filepath.Join("..", "..", "..", "shared", "kernels", name)
		if _, err := os.Stat(path); err != nil {
			t.Logf("%s: not here (%v)", name, err)
			continue
		}
		if got, err := Detect(path); err != nil || got != want {
			t.Errorf("Detect(%s) = %+v, %v; want %s", name, got, err, want.Name)
		}
	}
}

// buildStatic compiles an empty Go program for goarch.
func buildStatic(t *testing.T, goarch string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module fakeprog\n\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "netlink_mcast_semantics")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build for %s: %v\n%s", goarch, err, output)
	}
	return out
}

func TestCheckProgramMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	amd64, arm64 := buildStatic(t, "amd64"), buildStatic(t, "arm64")
	if err := CheckProgram(amd64, X86_64, "/k/P.bzImage"); err != nil {
		t.Errorf("x86-64 program, x86-64 kernel: %v", err)
	}
	if err := CheckProgram(arm64, ARM64, "/k/P-arm64.Image"); err != nil {
		t.Errorf("arm64 program, arm64 kernel: %v", err)
	}
	err := CheckProgram(amd64, ARM64, "/k/P-arm64.Image")
	want := amd64 + " is an x86-64 ELF, the kernel P-arm64.Image is arm64: build it with GOARCH=arm64"
	if err == nil || err.Error() != want {
		t.Errorf("x86-64 program, arm64 kernel: %v\nwant %s", err, want)
	}
	err = CheckProgram(arm64, X86_64, "/k/P.bzImage")
	want = arm64 + " is an arm64 ELF, the kernel P.bzImage is x86-64: build it with GOARCH=amd64"
	if err == nil || err.Error() != want {
		t.Errorf("arm64 program, x86-64 kernel: %v\nwant %s", err, want)
	}
}

func TestCheckProgramRejectsNonELF(t *testing.T) {
	path := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(path, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CheckProgram(path, X86_64, "bzImage"); err == nil || !strings.Contains(err.Error(), "not an ELF") {
		t.Errorf("CheckProgram(script) = %v, want a not-an-ELF error", err)
	}
}

func TestCheckProgramRejectsDynamicExecutable(t *testing.T) {
	host := map[string]Arch{"amd64": X86_64, "arm64": ARM64}[runtime.GOARCH]
	if host.Name == "" {
		t.Skipf("no Arch for the host's %s", runtime.GOARCH)
	}
	// Any dynamically linked system program will do.
	for _, path := range []string{"/bin/sh", "/usr/bin/env"} {
		if _, err := exec.LookPath(path); err != nil {
			continue
		}
		if err := CheckProgram(path, host, "bzImage"); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
			t.Errorf("CheckProgram(%s) = %v, want a dynamically-linked error", path, err)
		}
		return
	}
	t.Skip("no dynamically linked program found to try")
}
