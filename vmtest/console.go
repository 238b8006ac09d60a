// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"io"
	"strings"

	"nlmcast/selftests/kmsg"
	"nlmcast/vmtest/internal/protocol"
)

// consoleTailLines is how much kernel console a failure report shows.
const consoleTailLines = 40

// consoleWatcher reads the guest's serial console (ttyS0): kernel messages,
// and the init's own messages from before its TAP channel opened. None of it
// is TAP, so none of it reaches stdout. The programs' output goes to the TAP
// channel, never here, so a program that prints "WARNING: ..." cannot pass
// for a kernel report; the init's marker lines are not scanned either.
type consoleWatcher struct {
	diag    io.Writer // stderr
	verbose bool      // copy kernel messages to diag

	initStarted bool         // the init printed its start marker
	panicLine   string       // the first "Kernel panic" line
	tail        []string     // the last consoleTailLines lines, for failure reports
	scanner     kmsg.Scanner // kernel reports (BUG, WARNING, KASAN, lockdep, ...)
}

func (c *consoleWatcher) line(s string) {
	// The init's lines can be glued to console output that did not end its
	// line, such as SeaBIOS's "Booting from ROM..".
	if i := strings.Index(s, protocol.MarkerPrefix); i > 0 {
		c.line(s[:i])
		c.line(s[i:])
		return
	}
	if s == "" {
		return
	}
	c.remember(s)
	switch {
	case s == protocol.InitStarted:
		c.initStarted = true
	case strings.HasPrefix(s, protocol.MarkerPrefix):
		// The init only writes here when something went wrong early.
		fmt.Fprintln(c.diag, s)
	default:
		c.scanner.Line(s)
		if i := strings.Index(s, "Kernel panic"); i >= 0 && c.panicLine == "" {
			c.panicLine = s[i:]
		}
		if c.verbose {
			fmt.Fprintln(c.diag, s)
		}
	}
}

func (c *consoleWatcher) remember(s string) {
	if len(c.tail) == consoleTailLines {
		c.tail = append(c.tail[:0], c.tail[1:]...)
	}
	c.tail = append(c.tail, s)
}
