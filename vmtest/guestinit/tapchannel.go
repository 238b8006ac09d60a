// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/vmtest/internal/protocol"
)

// tapChannelWait bounds the wait for a TAP device that exists but has no
// driver behind it yet (see openTAPChannel).
const tapChannelWait = 10 * time.Second

// tapDevice is the TAP channel's device: the one the host names on the
// kernel command line, or the default second serial port.
func tapDevice(cmdline string) string {
	if dev, ok := protocol.LastParam(cmdline, protocol.TAPParam); ok && dev != "" {
		return dev
	}
	return protocol.TAPDevice
}

// openTAPChannel opens the tty the host reads the TAP from, in raw output
// mode so the bytes arrive as written (no \n to \r\n). A virtio console
// port becomes a tty asynchronously: the driver adds it when the device's
// control queue announces it, which may come after /init starts, and until
// then opening hvc0 fails with ENODEV or ENXIO. So those errors are retried
// for a while.
func openTAPChannel(device string) (*os.File, error) {
	deadline := time.Now().Add(tapChannelWait)
	var f *os.File
	for {
		var err error
		f, err = os.OpenFile(device, os.O_WRONLY|unix.O_NOCTTY, 0)
		if err == nil {
			break
		}
		if !(errors.Is(err, unix.ENODEV) || errors.Is(err, unix.ENXIO)) || time.Now().After(deadline) {
			return nil, fmt.Errorf("open TAP channel (the kernel needs a second serial port, ttyS1 on x86, or a virtio console, hvc0 on arm64): %w", err)
		}
		time.Sleep(20 * time.Millisecond) // polling the kernel's asynchronous probe, with a deadline
	}
	fd := int(f.Fd())
	tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read termios of %s: %w", device, err)
	}
	tio.Oflag &^= unix.OPOST
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, tio); err != nil {
		f.Close()
		return nil, fmt.Errorf("set raw output on %s: %w", device, err)
	}
	return f, nil
}

// waitUntilTransmitted blocks until the device has sent everything written
// (tcdrain); a power-off any sooner would cut off the exit marker.
func waitUntilTransmitted(f *os.File) error {
	if err := unix.IoctlSetInt(int(f.Fd()), unix.TCSBRK, 1); err != nil {
		return fmt.Errorf("drain %s: %w", f.Name(), err)
	}
	return nil
}
