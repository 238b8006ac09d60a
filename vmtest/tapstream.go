// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"io"
	"strings"

	"nlmcast/vmtest/internal/protocol"
)

// tapRelay reads the guest's TAP channel (ttyS1): it copies the TAP to
// stdout unchanged and takes out the init's marker lines.
type tapRelay struct {
	out  io.Writer // stdout: TAP only
	diag io.Writer // stderr: the init's own messages

	opened     bool   // the init's start marker arrived: the channel works
	exitSeen   bool   // the init reported its overall status
	exitStatus int    // the last status reported
	running    string // the program started last and not finished yet

	taintSeen               bool   // the init reported the taint mask
	taintBefore, taintAfter uint64 // when the init started, after the programs

	leaks []programLeaks // kmemleak's suspects after each program, where it ran

	netnsLeft []string // programs after which namespaces outlived the init's wait
}

// programLeaks is what the kernel's leak detector suspected after a program.
type programLeaks struct {
	program  string
	suspects int
}

func (t *tapRelay) line(s string) {
	if status, ok := protocol.ParseExitLine(s); ok {
		t.exitSeen, t.exitStatus = true, status
		return
	}
	if before, after, ok := protocol.ParseTaintLine(s); ok {
		t.taintSeen, t.taintBefore, t.taintAfter = true, before, after
		return
	}
	if program, n, ok := protocol.ParseKmemleakLine(s); ok {
		t.leaks = append(t.leaks, programLeaks{program, n})
		fmt.Fprintln(t.diag, s)
		return
	}
	if program, ok := protocol.ParseNetnsLeftLine(s); ok {
		t.netnsLeft = append(t.netnsLeft, program)
		fmt.Fprintln(t.diag, s)
		return
	}
	switch {
	case s == protocol.InitStarted:
		t.opened = true
		return
	case strings.HasPrefix(s, protocol.MarkerPrefix):
		fmt.Fprintln(t.diag, s)
		return
	case strings.HasPrefix(s, protocol.ProgramHeader):
		t.running = strings.TrimPrefix(s, protocol.ProgramHeader)
	case strings.HasPrefix(s, "ok ") || strings.HasPrefix(s, "not ok "):
		t.running = ""
	}
	fmt.Fprintln(t.out, s)
}
