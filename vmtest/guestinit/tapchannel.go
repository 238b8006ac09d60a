// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"nlmcast/vmtest/internal/protocol"
)

// openTAPChannel opens the serial port the host reads the TAP from, in raw
// output mode so the bytes arrive as written (no \n to \r\n).
func openTAPChannel() (*os.File, error) {
	f, err := os.OpenFile(protocol.TAPDevice, os.O_WRONLY|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("open TAP channel (the kernel needs a second 8250 serial port): %w", err)
	}
	fd := int(f.Fd())
	tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read termios of %s: %w", protocol.TAPDevice, err)
	}
	tio.Oflag &^= unix.OPOST
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, tio); err != nil {
		f.Close()
		return nil, fmt.Errorf("set raw output on %s: %w", protocol.TAPDevice, err)
	}
	return f, nil
}

// waitUntilTransmitted blocks until the UART has sent everything written
// (tcdrain); a power-off any sooner would cut off the exit marker.
func waitUntilTransmitted(f *os.File) error {
	if err := unix.IoctlSetInt(int(f.Fd()), unix.TCSBRK, 1); err != nil {
		return fmt.Errorf("drain %s: %w", protocol.TAPDevice, err)
	}
	return nil
}
