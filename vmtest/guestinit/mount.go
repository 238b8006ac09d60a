// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"fmt"
	"io/fs"
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

// devLinks are the links a booted system has in /dev besides devtmpfs's
// nodes (udev or systemd make them). Scripts use them: the kselftest
// runner writes each test's output to $logfile, /dev/stdout by default,
// which without the link is a new regular file that swallows it.
var devLinks = []struct{ name, target string }{
	{"/dev/fd", "/proc/self/fd"},
	{"/dev/stdin", "/proc/self/fd/0"},
	{"/dev/stdout", "/proc/self/fd/1"},
	{"/dev/stderr", "/proc/self/fd/2"},
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
	for _, l := range devLinks {
		if err := os.Symlink(l.target, l.name); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("link %s to %s: %w", l.name, l.target, err)
		}
	}
	return nil
}
