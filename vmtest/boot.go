// SPDX-License-Identifier: GPL-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// boot runs QEMU until the guest powers off, panics, or ctx or the timeout
// stops it, streaming the TAP to stdout meanwhile.
func boot(ctx context.Context, o options, initrd, workDir string, stdout, stderr io.Writer) (bootOutcome, error) {
	stderr = &lockedWriter{w: stderr} // the console and the TAP channel both report to it
	outcome := bootOutcome{
		timeout:   o.timeout,
		tapDevice: o.machine.tapDevice,
		console:   &consoleWatcher{diag: stderr, verbose: o.verbose},
		tap:       &tapRelay{out: stdout, diag: stderr},
	}

	// QEMU connects to this socket as it starts, before the guest runs.
	tapSocket := filepath.Join(workDir, "tap.sock")
	listener, err := net.Listen("unix", tapSocket)
	if err != nil {
		return outcome, fmt.Errorf("listen for the guest's TAP channel: %w", err)
	}
	defer listener.Close()

	ctx, cancel := context.WithTimeoutCause(ctx, o.timeout, errTimedOut)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.qemu, qemuArgs(qemuSetup{
		machine: o.machine, accel: o.accel, memMiB: o.memMiB, cpus: o.cpus,
		kernel: o.kernel, initrd: initrd,
		extraCmdline: strings.TrimSpace(o.guestParams() + " " + o.extraCmdline),
		tapSocket:    tapSocket, icount: o.icount,
	})...)
	console, err := cmd.StdoutPipe()
	if err != nil {
		return outcome, fmt.Errorf("connect to QEMU's console: %w", err)
	}
	cmd.Stderr = stderr // QEMU's own complaints
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:   true,            // a terminal's Ctrl-C reaches only the host command, which kills QEMU and reports
		Pdeathsig: syscall.SIGKILL, // no QEMU left behind if the host command is killed outright
	}

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return outcome, fmt.Errorf("start %s: %w", o.qemu, err)
	}
	tapDone := make(chan struct{})
	go func() {
		defer close(tapDone)
		relayTAP(listener, outcome.tap)
	}()
	_ = readLines(console, outcome.console.line) // a read error means QEMU is gone: Wait says why
	waitErr := cmd.Wait()
	listener.Close() // in case QEMU never connected
	<-tapDone
	outcome.duration = time.Since(start)
	outcome.reports, outcome.notes, outcome.gaps = kernelReports(outcome.console, outcome.tap)

	// A deadline that passes after QEMU ended by itself changes nothing.
	if waitErr != nil {
		if cause := context.Cause(ctx); cause != nil {
			outcome.stopCause = cause
		} else {
			outcome.qemuErr = waitErr
		}
	}
	return outcome, nil
}

// relayTAP serves the one connection QEMU makes for the guest's TAP channel.
func relayTAP(listener net.Listener, relay *tapRelay) {
	conn, err := listener.Accept()
	if err != nil {
		return // closed: QEMU ended without connecting
	}
	defer conn.Close()
	_ = readLines(conn, relay.line) // ends when QEMU closes its end
}

// lockedWriter serialises writes from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
