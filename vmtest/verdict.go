// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/ktap"
	"nlmcast/selftests/kmsg"
)

// errTimedOut is the cause of a boot stopped by the -timeout limit.
var errTimedOut = errors.New("timed out")

// interruptedError is the cause of a run stopped by a signal to the host.
type interruptedError struct{ sig os.Signal }

func (e interruptedError) Error() string {
	if s, ok := e.sig.(syscall.Signal); ok {
		return "interrupted by " + unix.SignalName(s)
	}
	return "interrupted by " + e.sig.String()
}

// bootOutcome is everything known about a boot once QEMU has ended.
type bootOutcome struct {
	stopCause error // errTimedOut or interruptedError when the host killed QEMU
	qemuErr   error // QEMU's own failure when it ended by itself
	duration  time.Duration
	timeout   time.Duration
	tapDevice string // the guest's device for the TAP channel
	console   *consoleWatcher
	tap       *tapRelay
	reports   []kmsg.Report // see kernelReports
	notes     []string      // see kernelReports
	gaps      []string      // see kernelReports
}

// kernelReports is, once QEMU has ended, what the kernel reported: every
// report on the console (BUG, WARNING, KASAN, KCSAN, lockdep, ...) and
// every taint bit set while the programs ran, less the known reports (not
// the series', see kmsg.Sift). notes says which were known, and the new
// ones' fingerprints. gaps are the console's notes, inside a report (known
// or not), that messages were dropped ("** 5 printk messages dropped **")
// or suppressed ("... callbacks suppressed"): that report is not whole,
// so its fingerprint may be wrong and another report may be gone.
func kernelReports(c *consoleWatcher, t *tapRelay) (reports []kmsg.Report, notes, gaps []string) {
	reports = c.scanner.Reports()
	for _, r := range reports {
		for _, g := range r.Gaps {
			gaps = append(gaps, fmt.Sprintf("%q inside %q", g, r.String()))
		}
	}
	if t.taintSeen {
		reports = append(reports, kmsg.TaintReports(t.taintBefore, t.taintAfter)...)
	}
	reports = append(reports, unloggedLeaks(reports, t.leaks)...)
	for _, program := range t.netnsLeft {
		reports = append(reports, kmsg.Report{Kind: "netns teardown", Lines: []string{
			fmt.Sprintf("network namespaces made while %s ran were not torn down when the init stopped waiting: one outlives its last reference", program)}})
	}
	reports = kmsg.Sift(reports, func(format string, args ...any) {
		notes = append(notes, fmt.Sprintf(format, args...))
	})
	return reports, notes, gaps
}

// unloggedLeaks is a report for each program after which kmemleak listed
// suspects while the console showed no kmemleak report: the detector prints
// "N new suspected memory leaks" on every scan that finds some, so only a
// console that lost it would leave a leak unseen without this.
func unloggedLeaks(console []kmsg.Report, leaks []programLeaks) []kmsg.Report {
	for _, r := range console {
		if r.Kind == "kmemleak" {
			return nil
		}
	}
	var reports []kmsg.Report
	for _, l := range leaks {
		if l.suspects > 0 {
			reports = append(reports, kmsg.Report{Kind: "kmemleak", Lines: []string{
				fmt.Sprintf("kmemleak listed %d suspected leaks after %s, and the console showed none", l.suspects, l.program)}})
		}
	}
	return reports
}

// verdict turns a boot into the command's exit status and, when the suites'
// own status is not the answer, a message saying what went wrong.
func verdict(o bootOutcome) (status int, problem string) {
	var interrupted interruptedError
	switch {
	case errors.As(o.stopCause, &interrupted):
		code := 130
		if s, ok := interrupted.sig.(syscall.Signal); ok {
			code = 128 + int(s)
		}
		return code, fmt.Sprintf("%v: QEMU killed", interrupted)
	case errors.Is(o.stopCause, errTimedOut):
		return ktap.ExitFail, timeoutMessage(o)
	case o.console.panicLine != "":
		return ktap.ExitFail, "guest kernel panicked: " + strings.TrimSpace(o.console.panicLine)
	case o.tap.exitSeen:
		switch o.tap.exitStatus {
		case ktap.ExitPass, ktap.ExitFail, ktap.ExitSkip:
			var problems []string
			if len(o.reports) > 0 {
				problems = append(problems, reportsMessage(o.reports, o.tap.exitStatus))
			}
			if len(o.gaps) > 0 {
				problems = append(problems, "FAIL: the guest console lost messages inside a kernel report, which is therefore not whole (and a report may be missing): "+strings.Join(o.gaps, ", "))
			}
			if len(problems) > 0 {
				return ktap.ExitFail, strings.Join(problems, "; ")
			}
			return o.tap.exitStatus, ""
		}
		return ktap.ExitFail, fmt.Sprintf("guest /init reported exit status %d, which is none of 0, 1, 4", o.tap.exitStatus)
	case !o.console.initStarted && !o.tap.opened:
		return ktap.ExitFail, "guest never reached /init (" + qemuEnd(o) + ")"
	case !o.tap.opened:
		return ktap.ExitFail, "guest /init started but could not open its TAP channel " + o.tapDevice + " (" + qemuEnd(o) + ")"
	default:
		return ktap.ExitFail, "guest /init stopped without reporting an exit status (" + qemuEnd(o) + ")"
	}
}

// reportsMessage says why a run whose programs all passed (or skipped) fails.
func reportsMessage(reports []kmsg.Report, status int) string {
	var what []string
	for _, r := range reports {
		if r.Kind == "taint" {
			what = append(what, r.String())
		} else {
			what = append(what, r.Kind)
		}
	}
	n := fmt.Sprintf("%d kernel reports", len(reports))
	if len(reports) == 1 {
		n = "1 kernel report"
	}
	programs := map[int]string{
		ktap.ExitPass: "although every program passed",
		ktap.ExitSkip: "although every program skipped",
		ktap.ExitFail: "and a program failed",
	}[status]
	return fmt.Sprintf("FAIL: the guest kernel logged %s (%s), %s", n, strings.Join(what, ", "), programs)
}

func timeoutMessage(o bootOutcome) string {
	msg := fmt.Sprintf("timed out after %v (-timeout): QEMU killed", o.timeout)
	switch {
	case o.tap.running != "":
		msg += "; the guest was running " + o.tap.running
	case !o.console.initStarted && !o.tap.opened:
		msg += "; the guest never reached /init"
	case o.tap.exitSeen:
		msg += "; the guest reported its status but did not power off"
	}
	return msg
}

func qemuEnd(o bootOutcome) string {
	if o.qemuErr != nil {
		return "QEMU: " + o.qemuErr.Error()
	}
	return "QEMU exited"
}
