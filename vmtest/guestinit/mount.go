// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

type mountPoint struct {
	source, target, fstype string
	flags                  uintptr
}

// guestMounts is what the suites expect of a booted system; the initramfs
// brings only empty directories.
var guestMounts = []mountPoint{
	{"proc", "/proc", "proc", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC},
	{"sysfs", "/sys", "sysfs", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC},
	{"devtmpfs", "/dev", "devtmpfs", unix.MS_NOSUID},
	{"tmpfs", "/tmp", "tmpfs", unix.MS_NOSUID | unix.MS_NODEV},
}

func mountFilesystems() error {
	for _, m := range guestMounts {
		if err := os.MkdirAll(m.target, 0o755); err != nil {
			return fmt.Errorf("create mount point: %w", err)
		}
		if err := unix.Mount(m.source, m.target, m.fstype, m.flags, ""); err != nil {
			return fmt.Errorf("mount %s on %s: %w", m.fstype, m.target, err)
		}
	}
	return nil
}
