// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// catchStraySignals keeps a signal from killing the init. The kernel only
// delivers to PID 1 the signals it handles, but the Go runtime handles them
// all and exits on SIGTERM, SIGINT and SIGHUP, which would panic the kernel.
// signal.Ignore is not used: SIG_IGN is inherited across exec, and the test
// programs must still die from the runner's SIGTERM.
func catchStraySignals() {
	ch := make(chan os.Signal, 8)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2)
	go func() {
		for range ch {
		}
	}()
}
