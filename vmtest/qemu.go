// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"nlmcast/vmtest/internal/protocol"
	"nlmcast/vmtest/kimage"
)

// baseKernelCmdline makes a panic end QEMU at once (panic=-1 reboots,
// -no-reboot turns that into an exit). loglevel=7 lets every message but
// debug reach the console, which vmtest scans for kernel reports: with
// "quiet" a WARNING or a lockdep report (KERN_WARNING) or a kmemleak note
// (KERN_INFO) would not show. The console= comes first, from the machine.
const baseKernelCmdline = "panic=-1 loglevel=7"

// tapChardevID names the QEMU character device behind the guest's TAP
// channel.
const tapChardevID = "nlmctap"

// machine is how QEMU boots the kernels of one architecture with the kernel
// console and the TAP channel on two separate devices.
type machine struct {
	qemu      string   // the QEMU binary
	qemuPkg   string   // the Debian package that has it
	board     []string // -M ..., when QEMU has no default machine for it
	console   string   // the kernel console: QEMU's stdout (mon:stdio)
	tapDevice string   // the guest's device for the TAP channel
	// tapArgs wire the TAP channel to the chardev with tapChardevID.
	tapArgs []string
}

// machines maps kimage.Arch.Name to its machine. x86-64: the pc machine's
// two 8250 UARTs, ttyS0 and ttyS1, in the order of the -serial options.
// arm64: the virt machine has one PL011 UART (ttyAMA0); the TAP goes to a
// virtio console port on virtio-mmio, the guest's hvc0.
var machines = map[string]machine{
	kimage.X86_64.Name: {
		qemu: "qemu-system-x86_64", qemuPkg: "qemu-system-x86",
		console: "ttyS0", tapDevice: protocol.TAPDevice,
		tapArgs: []string{"-serial", "chardev:" + tapChardevID},
	},
	kimage.ARM64.Name: {
		qemu: "qemu-system-aarch64", qemuPkg: "qemu-system-arm",
		board:   []string{"-M", "virt"},
		console: "ttyAMA0", tapDevice: "/dev/hvc0",
		tapArgs: []string{"-device", "virtio-serial-device", "-device", "virtconsole,chardev=" + tapChardevID},
	},
}

// Accelerator choices for -accel.
const (
	accelAuto = "auto"
	accelTCG  = "tcg"
	accelKVM  = "kvm"
)

// resolveAccel picks the accelerator. "auto" means TCG: the only safe probe
// for a working KVM is booting a guest, and on the machines this suite runs
// on KVM guests hang instead of failing, so KVM must be asked for by name.
func resolveAccel(choice string) (string, error) {
	switch choice {
	case accelAuto, accelTCG:
		return accelTCG, nil
	case accelKVM:
		f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
		if err != nil {
			return "", fmt.Errorf("-accel kvm: %w", err)
		}
		f.Close()
		return accelKVM, nil
	default:
		return "", fmt.Errorf("-accel %q: want auto, tcg or kvm", choice)
	}
}

// qemuSetup is what the QEMU command line is made of.
type qemuSetup struct {
	machine      machine
	accel        string // accelTCG or accelKVM
	memMiB       int
	cpus         int
	kernel       string
	initrd       string
	extraCmdline string
	tapSocket    string // unix socket the host listens on for the TAP channel
	icount       bool   // deterministic clock: 1 ns of guest time per instruction
}

// qemuArgs returns QEMU's arguments. The first serial port (the kernel
// console) goes to QEMU's stdout through -nographic; the TAP channel
// connects to the host's socket, and the guest init is told its device.
func qemuArgs(s qemuSetup) []string {
	args := append(append([]string(nil), s.machine.board...), "-accel", s.accel)
	if s.accel == accelKVM {
		args = append(args, "-cpu", "host")
	} else {
		args = append(args, "-cpu", "max")
	}
	if s.icount {
		// sleep=off: an idle guest's clock jumps to its next timer instead
		// of waiting in real time, so guest time depends on nothing but
		// the instructions run.
		args = append(args, "-icount", "shift=0,sleep=off")
	}
	cmdline := "console=" + s.machine.console + " " + baseKernelCmdline + " " + protocol.TAPParam + "=" + s.machine.tapDevice
	if extra := strings.TrimSpace(s.extraCmdline); extra != "" {
		cmdline += " " + extra
	}
	return append(append(args,
		"-m", strconv.Itoa(s.memMiB),
		"-smp", strconv.Itoa(s.cpus),
		"-nographic", "-no-reboot",
		"-kernel", s.kernel,
		"-initrd", s.initrd,
		"-append", cmdline,
		// The guest has no NIC driver; no NIC also skips the iPXE ROM's
		// boot-time probe.
		"-nic", "none",
		// Listed first, this serial port is the console's (ttyS0, ttyAMA0).
		"-serial", "mon:stdio",
		"-chardev", "socket,id="+tapChardevID+",path="+qemuOptionValue(s.tapSocket),
	), s.machine.tapArgs...)
}

// qemuOptionValue escapes a value for QEMU's comma-separated option syntax.
func qemuOptionValue(v string) string {
	return strings.ReplaceAll(v, ",", ",,")
}
