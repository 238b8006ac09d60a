// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
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
		{"-kernel", "k", "-prog-args", "nosuch=-v", "bin"},
		{"-kernel", "k", "-prog-args", "=-v", "bin"},
		{"-kernel", "k", "-prog-args", "bin", "bin"},
		{"-kernel", "k", "-prog-args", "bin='open", "bin"},
		{"-kernel", "k", "-prog-timeout", "1500ms", "bin"},
		{"-kernel", "k", "-prog-timeout", "-5s", "bin"},
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
	kernel := fakeImage(t, "amd64")
	bin := buildStaticGoProgram(t, "amd64", "package main\nfunc main() {}\n")

	o, err := parseOptions([]string{"-kernel", kernel, "-qemu", qemu, "-args", "-v 'a b'", bin}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.accel != accelTCG || o.memMiB != 1024 || o.cpus != 2 || o.timeout != 420*time.Second {
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

	other := filepath.Join(t.TempDir(), "netlink_mcast_stress")
	if err := os.WriteFile(other, data, 0o755); err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(bin)
	o, err = parseOptions([]string{"-kernel", kernel, "-qemu", qemu, "-netns", "-prog-timeout", "200s",
		"-prog-args", "netlink_mcast_stress=-duration 10s -mode 'fixed0'", "-prog-args", "netlink_mcast_stress=-v",
		"-prog-args", name + "=", bin, other}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"netlink_mcast_stress": {"-duration", "10s", "-mode", "fixed0", "-v"}, name: nil}
	if !reflect.DeepEqual(o.progArgs, want) {
		t.Errorf("progArgs = %q, want %q", o.progArgs, want)
	}
	if got := o.guestParams(); got != "nlmc.netns=1 nlmc.timeout=200" {
		t.Errorf("guestParams() = %q", got)
	}
	if o.timeout != 2*200*time.Second+bootAllowance {
		t.Errorf("automatic timeout %v for two programs of 200s", o.timeout)
	}
	if o, err := parseOptions([]string{"-kernel", kernel, "-qemu", qemu, "-icount", bin}, io.Discard); err != nil || o.cpus != 1 || !o.icount {
		t.Errorf("-icount: cpus %d icount %v err %v; want one CPU", o.cpus, o.icount, err)
	}
	if o, err := parseOptions([]string{"-kernel", kernel, "-qemu", qemu, "-icount", "-smp", "2", bin}, io.Discard); err != nil || o.cpus != 2 {
		t.Errorf("-icount -smp 2: cpus %d err %v", o.cpus, err)
	}
	if _, err := parseOptions([]string{"-kernel", kernel, "-qemu", qemu, "-prog-timeout", "20s", "-append", "nlmc.timeout=30", bin}, io.Discard); !errors.Is(err, errUsage) {
		t.Errorf("-prog-timeout with nlmc.timeout in -append: err = %v, want a usage error", err)
	}
}

func TestAutoTimeout(t *testing.T) {
	tests := []struct {
		o    options
		want time.Duration
	}{
		{options{bins: []string{"a", "b"}}, 2*300*time.Second + bootAllowance},
		{options{bins: []string{"a"}, progTimeout: 250 * time.Second}, 250*time.Second + bootAllowance},
		{options{bins: []string{"a"}, extraCmdline: "nlmc.timeout=30 quiet nlmc.timeout=60"}, 60*time.Second + bootAllowance},
		{options{bins: []string{"a"}, progTimeout: 10 * time.Second, icount: true}, 40*time.Second + bootAllowance},
	}
	for _, tt := range tests {
		if got := autoTimeout(tt.o); got != tt.want {
			t.Errorf("autoTimeout(%+v) = %v, want %v", tt.o, got, tt.want)
		}
	}
}

// The image's header chooses the machine and QEMU, and a program built for
// the other architecture is refused, naming both.
func TestParseOptionsArchitecture(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	qemuDir := t.TempDir()
	for _, name := range []string{"qemu-system-x86_64", "qemu-system-aarch64"} {
		if err := os.WriteFile(filepath.Join(qemuDir, name), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	amd64 := buildStaticGoProgram(t, "amd64", "package main\nfunc main() {}\n")
	arm64 := buildStaticGoProgram(t, "arm64", "package main\nfunc main() {}\n")
	t.Setenv("PATH", qemuDir)
	image := fakeImage(t, "arm64")

	o, err := parseOptions([]string{"-kernel", image, arm64}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.arch.GOARCH != "arm64" || o.qemu != "qemu-system-aarch64" || o.machine.console != "ttyAMA0" || o.machine.tapDevice != "/dev/hvc0" {
		t.Errorf("arm64 Image: arch %+v qemu %s machine %+v", o.arch, o.qemu, o.machine)
	}
	_, err = parseOptions([]string{"-kernel", image, amd64}, io.Discard)
	if want := amd64 + " is an x86-64 ELF, the kernel Image is arm64: build it with GOARCH=arm64"; err == nil || err.Error() != want {
		t.Errorf("x86-64 program for an arm64 Image: %v\nwant %s", err, want)
	}
	_, err = parseOptions([]string{"-kernel", image, "-init", amd64, arm64}, io.Discard)
	if err == nil || !strings.HasPrefix(err.Error(), "-init: ") || !strings.Contains(err.Error(), "is an x86-64 ELF") {
		t.Errorf("x86-64 init for an arm64 Image: %v", err)
	}
	o, err = parseOptions([]string{"-kernel", fakeImage(t, "amd64"), amd64}, io.Discard)
	if err != nil || o.qemu != "qemu-system-x86_64" || o.machine.console != "ttyS0" {
		t.Errorf("bzImage: qemu %s machine %+v err %v", o.qemu, o.machine, err)
	}
	t.Setenv("PATH", t.TempDir())
	_, err = parseOptions([]string{"-kernel", image, arm64}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "QEMU for arm64 not found (on Debian: apt-get install qemu-system-arm)") {
		t.Errorf("no qemu-system-aarch64: %v", err)
	}
	notImage := filepath.Join(t.TempDir(), "vmlinux.txt")
	if err := os.WriteFile(notImage, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := parseOptions([]string{"-kernel", notImage, arm64}, io.Discard); err == nil || !strings.Contains(err.Error(), "not a kernel image") {
		t.Errorf("a text file as -kernel: %v", err)
	}
}
