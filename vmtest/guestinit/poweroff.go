// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/vmtest/internal/protocol"
)

// powerOff ends the VM (QEMU exits on an ACPI power-off). It never returns:
// if the power-off fails, exiting would panic the kernel, so it waits for the
// host's timeout instead (a bare select{} would not do: with no other
// goroutine the runtime calls it a deadlock and exits).
func powerOff() {
	unix.Sync()
	err := unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	fmt.Fprintf(os.Stderr, "%spower off failed: %v\n", protocol.MarkerPrefix, err)
	for {
		time.Sleep(time.Hour)
	}
}
