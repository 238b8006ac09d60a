// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestProgramTimeout(t *testing.T) {
	tests := []struct {
		cmdline string
		want    time.Duration
		wantErr bool
	}{
		{"console=ttyS0 quiet\n", defaultProgramTimeout, false},
		{"console=ttyS0 nlmc.timeout=30 quiet\n", 30 * time.Second, false},
		{"nlmc.timeout=30 nlmc.timeout=45", 45 * time.Second, false},
		{"nlmc.timeoutx=30", defaultProgramTimeout, false},
		{"nlmc.timeout=0", defaultProgramTimeout, true},
		{"nlmc.timeout=5m", defaultProgramTimeout, true},
	}
	for _, tt := range tests {
		got, err := programTimeout(tt.cmdline)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("programTimeout(%q) = %v, %v; want %v, error %v", tt.cmdline, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestReadSuiteArgs(t *testing.T) {
	dir := t.TempDir()
	if args, err := readSuiteArgs(filepath.Join(dir, "absent")); args != nil || err != nil {
		t.Errorf("missing file: got %q, %v; want no args, no error", args, err)
	}
	path := filepath.Join(dir, "args")
	if err := os.WriteFile(path, []byte("-v\nroute mc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args, err := readSuiteArgs(path)
	if err != nil || !slices.Equal(args, []string{"-v", "route mc"}) {
		t.Errorf("got %q, %v", args, err)
	}
}

func TestListProgramsKeepsExecutablesInLexicalOrder(t *testing.T) {
	dir := t.TempDir()
	for name, mode := range map[string]os.FileMode{"b_suite": 0o755, "a_suite": 0o700, "notes.txt": 0o644} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "c_dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := listPrograms(dir)
	want := []string{filepath.Join(dir, "a_suite"), filepath.Join(dir, "b_suite")}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("listPrograms = %q, %v; want %q", got, err, want)
	}
}

func TestTAPDevice(t *testing.T) {
	for cmdline, want := range map[string]string{
		"console=ttyS0 panic=-1\n":                        "/dev/ttyS1",
		"console=ttyAMA0 nlmc.tap=/dev/hvc0 loglevel=7\n": "/dev/hvc0",
		"nlmc.tap=/dev/hvc0 nlmc.tap=/dev/ttyS2":          "/dev/ttyS2",
		"nlmc.tap= quiet":                                 "/dev/ttyS1",
		"nlmc.tapx=/dev/hvc0":                             "/dev/ttyS1",
	} {
		if got := tapDevice(cmdline); got != want {
			t.Errorf("tapDevice(%q) = %q, want %q", cmdline, got, want)
		}
	}
}
