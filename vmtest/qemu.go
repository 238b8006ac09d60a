// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// baseKernelCmdline sends the console to the first serial port and makes a
// panic end QEMU at once (panic=-1 reboots, -no-reboot turns that into an
// exit). loglevel=7 lets every message but debug reach the console, which
// vmtest scans for kernel reports: with "quiet" a WARNING or a lockdep
// report (KERN_WARNING) or a kmemleak note (KERN_INFO) would not show.
const baseKernelCmdline = "console=ttyS0 panic=-1 loglevel=7"

// tapChardevID names the QEMU character device behind the guest's ttyS1.
const tapChardevID = "nlmctap"

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
	accel        string // accelTCG or accelKVM
	memMiB       int
	cpus         int
	kernel       string
	initrd       string
	extraCmdline string
	tapSocket    string // unix socket the host listens on for ttyS1
	icount       bool   // deterministic clock: 1 ns of guest time per instruction
}

// qemuArgs returns QEMU's arguments. The first serial port (ttyS0, the
// kernel console) goes to QEMU's stdout through -nographic; the second
// (ttyS1, the TAP channel) connects to the host's socket.
func qemuArgs(s qemuSetup) []string {
	args := []string{"-accel", s.accel}
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
	cmdline := baseKernelCmdline
	if extra := strings.TrimSpace(s.extraCmdline); extra != "" {
		cmdline += " " + extra
	}
	return append(args,
		"-m", strconv.Itoa(s.memMiB),
		"-smp", strconv.Itoa(s.cpus),
		"-nographic", "-no-reboot",
		"-kernel", s.kernel,
		"-initrd", s.initrd,
		"-append", cmdline,
		// The guest has no NIC driver; no NIC also skips the iPXE ROM's
		// boot-time probe.
		"-nic", "none",
		// Listed in this order, the serial ports become ttyS0 and ttyS1.
		"-serial", "mon:stdio",
		"-chardev", "socket,id="+tapChardevID+",path="+qemuOptionValue(s.tapSocket),
		"-serial", "chardev:"+tapChardevID,
	)
}

// qemuOptionValue escapes a value for QEMU's comma-separated option syntax.
func qemuOptionValue(v string) string {
	return strings.ReplaceAll(v, ",", ",,")
}
