// SPDX-License-Identifier: GPL-2.0

package main

import (
	"slices"
	"testing"
)

func TestResolveAccel(t *testing.T) {
	for _, choice := range []string{accelAuto, accelTCG} {
		if got, err := resolveAccel(choice); got != accelTCG || err != nil {
			t.Errorf("resolveAccel(%q) = %q, %v; want tcg", choice, got, err)
		}
	}
	if _, err := resolveAccel("hvf"); err == nil {
		t.Error("resolveAccel(hvf) accepted an unknown accelerator")
	}
}

func TestQEMUArgs(t *testing.T) {
	got := qemuArgs(qemuSetup{
		machine: machines["x86-64"], accel: accelTCG, memMiB: 1024, cpus: 2,
		kernel: "/k/P.bzImage", initrd: "/tmp/x/initramfs.cpio.gz",
		extraCmdline: " sysctl.net.core.netlink_route_mc_index=1 ",
		tapSocket:    "/tmp/a,b/tap.sock",
	})
	want := []string{
		"-accel", "tcg", "-cpu", "max",
		"-m", "1024", "-smp", "2", "-nographic", "-no-reboot",
		"-kernel", "/k/P.bzImage", "-initrd", "/tmp/x/initramfs.cpio.gz",
		"-append", "console=ttyS0 panic=-1 loglevel=7 nlmc.tap=/dev/ttyS1 sysctl.net.core.netlink_route_mc_index=1",
		"-nic", "none",
		"-serial", "mon:stdio",
		"-chardev", "socket,id=nlmctap,path=/tmp/a,,b/tap.sock",
		"-serial", "chardev:nlmctap",
	}
	if !slices.Equal(got, want) {
		t.Errorf("qemuArgs:\n got %q\nwant %q", got, want)
	}
}

func TestQEMUArgsKVMUsesHostCPU(t *testing.T) {
	got := qemuArgs(qemuSetup{accel: accelKVM, memMiB: 512, cpus: 1})
	if !slices.Equal(got[:4], []string{"-accel", "kvm", "-cpu", "host"}) {
		t.Errorf("qemuArgs(kvm) starts %q", got[:4])
	}
}

func TestQEMUArgsIcount(t *testing.T) {
	got := qemuArgs(qemuSetup{accel: accelTCG, memMiB: 512, cpus: 1, icount: true})
	if !slices.Equal(got[4:6], []string{"-icount", "shift=0,sleep=off"}) {
		t.Errorf("qemuArgs(icount) = %q, want -icount shift=0,sleep=off after -cpu", got)
	}
	if slices.Contains(qemuArgs(qemuSetup{accel: accelTCG}), "-icount") {
		t.Error("-icount without being asked for")
	}
}

// arm64: the virt machine, its PL011 as the console and a virtio console
// port as the TAP channel, which the guest init is told is hvc0.
func TestQEMUArgsARM64(t *testing.T) {
	got := qemuArgs(qemuSetup{
		machine: machines["arm64"], accel: accelTCG, memMiB: 1024, cpus: 1, icount: true,
		kernel: "/k/P-arm64.Image", initrd: "/tmp/x/initramfs.cpio.gz",
		tapSocket: "/tmp/x/tap.sock",
	})
	want := []string{
		"-M", "virt", "-accel", "tcg", "-cpu", "max", "-icount", "shift=0,sleep=off",
		"-m", "1024", "-smp", "1", "-nographic", "-no-reboot",
		"-kernel", "/k/P-arm64.Image", "-initrd", "/tmp/x/initramfs.cpio.gz",
		"-append", "console=ttyAMA0 panic=-1 loglevel=7 nlmc.tap=/dev/hvc0",
		"-nic", "none",
		"-serial", "mon:stdio",
		"-chardev", "socket,id=nlmctap,path=/tmp/x/tap.sock",
		"-device", "virtio-serial-device", "-device", "virtconsole,chardev=nlmctap",
	}
	if !slices.Equal(got, want) {
		t.Errorf("qemuArgs:\n got %q\nwant %q", got, want)
	}
}
