// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// bootPlan is how one tier boots a mutant: vmtest with its programs.
type bootPlan struct {
	vmtest   string   // the built vmtest command
	init     string   // the prebuilt guest init
	progs    []string // the programs, built for the guest
	args     []string // more vmtest flags (-prog-args, -append)
	failFast bool     // stop the boot at the first failed case
	// ranBefore are the cases the unmutated tree's boot ran (did not
	// skip): such a case skipping now is the mutant's doing (e.g. the
	// switch gone, so that the switch program skips it) and kills it.
	// nil: skips are not judged (the baseline itself).
	ranBefore map[string]bool
	silence   time.Duration
	limit     time.Duration // the whole boot
}

// bootResult is what one boot showed.
type bootResult struct {
	status string   // statusKilled, statusCrashed, statusHung or statusSurvived
	failed []string // the cases that failed (the first only, with failFast)
	ran    []string // the cases that passed or failed, not skipped
	detail string   // why, in one line
	// timeout: the boot's failure was a TIMEOUT (a case's or a program's
	// limit), which a loaded host can cause: rerun once before it counts.
	timeout bool
	// step and message: for statusUnexplained, the guest step the boot
	// failed in and vmtest's message, digits blanked, so that two boots
	// can be compared.
	step, message string
	seconds       float64
	maxGap        time.Duration // the longest stretch without a TAP line
	tail          []string      // the last lines of vmtest's stderr
}

const (
	statusKilled     = "killed"
	statusCrashed    = "crashed"
	statusHung       = "hung"
	statusBuildFail  = "build-failure"
	statusSurvived   = "survived"
	statusEquivalent = "equivalent"
	// statusError: the host failed (vmtest's own error, QEMU did not
	// start): the mutant is rerun and never counted.
	statusError = "error"
	// statusUnexplained: the guest failed with no failed case and no
	// kernel report. Never recorded: the boot is rerun, and the same
	// step and message twice kill the mutant by that step.
	statusUnexplained = "unexplained"
)

// A result line of a program's TAP (one "# " deeper under the runner),
// and the runner's own lines, which name a program and not a case.
var (
	notOKLine = regexp.MustCompile(`^(?:# )*not ok \d+ (\S+)(.*)$`)
	okLine    = regexp.MustCompile(`^(?:# )*ok \d+ (\S+)(.*)$`)
	// The runner's line: whether the program failed, and its name.
	runnerLine = regexp.MustCompile(`^(?:# )*(not )?ok \d+ selftests: \S+ (\S+)`)
	// A program that stops on its own check rather than a case's (the
	// kernel never tore its namespaces down) says why in a "Bail out!"
	// line, and the runner then fails the program.
	bailLine = regexp.MustCompile(`^(?:# )*Bail out!\s*(.*)$`)
)

// boot runs vmtest on image and classifies what it saw. The watchdog kills
// the boot when vmtest's TAP is silent for plan.silence (a hung guest is
// known then, not at a long timeout); with failFast the first failed case
// ends the boot, since one is enough to kill the mutant.
func boot(ctx context.Context, plan bootPlan, image string, log io.Writer) bootResult {
	start := time.Now()
	args := []string{"-kernel", image, "-init", plan.init, "-timeout", plan.limit.String()}
	args = append(args, plan.args...)
	args = append(args, plan.progs...)
	cmd := exec.Command(plan.vmtest, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	// The init's kmemleak steps after a program come on stderr, and a scan
	// takes tens of seconds on an emulated debug kernel: signs of life.
	alive := make(chan struct{}, 1)
	cmd.Stderr = io.MultiWriter(&stderr, log, markerWatch{marker: []byte(leakCheckMarker), seen: alive})
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return bootResult{status: statusError, detail: err.Error()}
	}
	if err := cmd.Start(); err != nil {
		return bootResult{status: statusError, detail: "start vmtest: " + err.Error()}
	}
	// vmtest ends QEMU and cleans up on SIGTERM; SIGKILL if it lingers.
	var stopOnce sync.Once
	stopReason := ""
	stop := func(why string) {
		stopOnce.Do(func() {
			stopReason = why
			syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			time.AfterFunc(10*time.Second, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
		})
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var failed, ran []string
	var last, bail, program string
	var programFailed []string // runner lines of programs that failed with no failed case
	hung, progTimeout := false, false
	lastAt := start
	var maxGap time.Duration
	watchdog := time.NewTimer(plan.silence)
	defer watchdog.Stop()
loop:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				break loop
			}
			fmt.Fprintf(log, "[%6.1fs] %s\n", time.Since(start).Seconds(), l)
			last = l
			maxGap = max(maxGap, time.Since(lastAt))
			lastAt = time.Now()
			watchdog.Reset(plan.silence)
			okm := okLine.FindStringSubmatch(l)
			m := notOKLine.FindStringSubmatch(l)
			if b := bailLine.FindStringSubmatch(l); b != nil {
				bail = b[1]
			}
			rm := runnerLine.FindStringSubmatch(l)
			switch {
			case rm != nil:
				// A program that failed after a Bail out! with no failed
				// case: the suite caught the mutant by the program's own
				// check, which the bail line names.
				if rm[1] != "" && bail != "" && !strings.Contains(l, "# TIMEOUT") {
					failed = append(failed, rm[2]+": Bail out! "+bail)
				} else if rm[1] != "" && !strings.Contains(l, "# TIMEOUT") {
					programFailed = append(programFailed, strings.TrimSpace(strings.TrimLeft(l, "# ")))
				}
				program = rm[2]
				bail = ""
			case okm != nil && strings.Contains(okm[2], "# SKIP"):
				if plan.ranBefore != nil && plan.ranBefore[okm[1]] {
					failed = append(failed, okm[1]+" skipped, which ran on the unmutated tree:"+okm[2])
				}
			case okm != nil:
				ran = append(ran, okm[1])
			case m != nil:
				ran = append(ran, m[1])
				failed = append(failed, m[1]+strings.TrimRight(m[2], " "))
			}
			if len(failed) > 0 && plan.failFast {
				stop("fail-fast: first failed case")
			}
			if m != nil && rm != nil && strings.Contains(l, "# TIMEOUT") {
				progTimeout = true
				stopReason = strings.TrimSpace(strings.TrimLeft(l, "# "))
			}
		case <-alive:
			watchdog.Reset(plan.silence)
		case <-watchdog.C:
			hung = true
			stop(fmt.Sprintf("no TAP line for %v after %q", plan.silence, last))
		case <-ctx.Done():
			stop("interrupted")
		}
	}
	cmd.Wait()
	r := bootResult{ran: ran, seconds: time.Since(start).Seconds(), maxGap: maxGap, tail: lastLines(stderr.String(), 12)}
	errText := stderr.String()
	report := strings.Contains(errText, "guest kernel panicked") || strings.Contains(errText, "vmtest: kernel report ") ||
		strings.Contains(errText, "FAIL: the guest kernel logged")
	switch {
	case ctx.Err() != nil:
		r.status, r.detail = "", "interrupted"
	case strings.Contains(errText, "guest kernel panicked"):
		r.status, r.detail = statusCrashed, grepLine(errText, "guest kernel panicked")
	case len(failed) > 0:
		// A failed case kills the mutant, also when the guest hung after it.
		r.status, r.failed = statusKilled, failed
		r.detail = "failed: " + strings.Join(failed, ", ")
		r.timeout = strings.Contains(failed[0], "# TIMEOUT")
		if hung {
			r.detail += "; then " + stopReason
		}
	case report:
		// Only a report the kernel wrote on its console makes a crash.
		r.status, r.detail = statusCrashed, grepLine(errText, "FAIL: the guest kernel logged")
	case hung:
		r.status, r.detail = statusHung, stopReason
	case progTimeout:
		r.status, r.detail, r.timeout = statusHung, stopReason, true
	case strings.Contains(errText, "timed out after"):
		r.status, r.detail, r.timeout = statusHung, grepLine(errText, "timed out after"), true
	case cmd.ProcessState.ExitCode() == 0:
		r.status = statusSurvived
	default:
		r.status, r.step, r.message = classifyFailure(errText, cmd.ProcessState.ExitCode(), program, programFailed)
		r.detail = fmt.Sprintf("vmtest exit %d: %s: %s", cmd.ProcessState.ExitCode(), r.step, strings.Join(r.tail, " | "))
		if r.status == statusError {
			r.detail = fmt.Sprintf("host: vmtest exit %d: %s", cmd.ProcessState.ExitCode(), r.message)
		}
	}
	return r
}

// guestProblems are vmtest's messages for a guest that went wrong (its
// verdict), by the step of the guest's life they name. Any other failure
// without a case or a report is the host's: vmtest's own error (its
// work directory, the TAP socket, QEMU's console), or QEMU not starting.
var guestProblems = []struct{ text, step string }{
	{"guest never reached /init", "boot to /init"},
	{"guest /init started but could not open its TAP channel", "open the TAP channel"},
	{"guest /init stopped without reporting an exit status", "run the programs"},
	{"guest /init reported exit status", "report the exit status"},
	{"netns: namespaces still there", "namespace teardown"},
}

var digits = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)

// classifyFailure tells a host failure (statusError) from a guest that
// failed with no failed case and no kernel report (statusUnexplained),
// and names the guest step and vmtest's message. program is the last
// program the runner reported; programFailed the runner lines of programs
// that failed without a failed case.
func classifyFailure(errText string, exit int, program string, programFailed []string) (status, step, message string) {
	lines := strings.Split(errText, "\n")
	vmtestLine := ""
	for _, l := range lines {
		if strings.HasPrefix(l, "vmtest: ") && !strings.HasPrefix(l, "vmtest: note:") && !strings.HasPrefix(l, "vmtest: last lines") &&
			!strings.HasPrefix(l, "vmtest: QEMU ran for") && !strings.HasPrefix(l, "vmtest: the kernel console stayed empty") {
			vmtestLine = strings.TrimPrefix(l, "vmtest: ")
		}
	}
	norm := func(s string) string { return digits.ReplaceAllString(strings.TrimSpace(s), "#") }
	switch {
	case exit == 2 || exit >= 128 || exit < 0:
		return statusError, "", fmt.Sprintf("exit %d: %s", exit, vmtestLine)
	case strings.Contains(errText, "the kernel console stayed empty"):
		// Not one console byte: QEMU never ran the kernel.
		return statusError, "", "the kernel console stayed empty: " + vmtestLine
	case len(programFailed) > 0:
		name := programFailed[0]
		if m := runnerLine.FindStringSubmatch(name); m != nil {
			name = m[2]
		}
		return statusUnexplained, "program " + name, norm(programFailed[0])
	}
	for _, p := range guestProblems {
		if strings.Contains(vmtestLine, p.text) || strings.Contains(errText, "nlmc-vmtest: "+p.text) {
			step := p.step
			if step == "run the programs" && program != "" {
				step = "after program " + program
			}
			return statusUnexplained, step, norm(vmtestLine)
		}
	}
	if what, ok := guestInitFailure(lines); ok && exit == 1 {
		// The guest's /init stopped at a step of its own setup and said
		// why (a mutant that breaks the netlink replies /init reads to
		// bring lo up): the guest failed, not the host.
		step, _, _ := strings.Cut(what, ": ")
		return statusUnexplained, "guest /init: " + norm(step), norm(what)
	}
	return statusError, "", vmtestLine
}

// guestInitFailure returns the last line the guest's /init printed for
// the host ("nlmc-vmtest: bring lo up in netns init: ...") that is not
// one of its routine markers: the error it stopped on.
func guestInitFailure(lines []string) (string, bool) {
	for i := len(lines) - 1; i >= 0; i-- {
		line := strings.TrimSpace(lines[i])
		rest, ok := strings.CutPrefix(line, "nlmc-vmtest: ")
		if !ok || strings.HasPrefix(line, leakCheckMarker) {
			continue
		}
		routine := false
		for _, p := range []string{"init started", "exit=", "taint=", "no leak check", "no wait for"} {
			routine = routine || strings.HasPrefix(rest, p)
		}
		if !routine && rest != "" {
			return rest, true
		}
	}
	return "", false
}

// bootTwice boots once, and again where one boot cannot decide: a host
// failure (up to hostTries in all; still failing, the result is
// statusError, never counted), a TIMEOUT (the second boot's result
// counts), a guest failure with no failed case and no kernel report (the
// same step and message twice kill the mutant by that step; otherwise
// the second boot's class counts, or error when it is unexplained too).
func bootTwice(boot func() bootResult) bootResult {
	const hostTries = 3
	once := func() bootResult {
		var r bootResult
		for i := 0; i < hostTries; i++ {
			if r = boot(); r.status != statusError {
				return r
			}
		}
		r.detail = fmt.Sprintf("%s (%d boots, every one a host failure)", r.detail, hostTries)
		return r
	}
	first := once()
	switch {
	case first.status == statusError || first.status == "":
		return first
	case first.timeout:
		second := once()
		if second.status == statusUnexplained {
			second = decideUnexplained(first, second)
		}
		second.detail = fmt.Sprintf("rerun after a TIMEOUT (%s): %s", first.detail, second.detail)
		second.seconds += first.seconds
		return second
	case first.status == statusUnexplained:
		second := once()
		r := decideUnexplained(first, second)
		r.seconds = first.seconds + second.seconds
		return r
	}
	return first
}

// decideUnexplained decides a boot that failed unexplained (first) by
// its rerun (second).
func decideUnexplained(first, second bootResult) bootResult {
	switch {
	case second.status == statusUnexplained && second.step == first.step && second.message == first.message:
		second.status = statusKilled
		second.failed = []string{"boot step " + first.step + ": " + first.message}
		second.detail = "failed twice in guest step " + first.step + ", no case failed and no kernel report: " + first.message
	case second.status == statusUnexplained:
		second.status = statusError
		second.detail = fmt.Sprintf("failed twice with no failed case and no kernel report, differently: %s: %s; then %s: %s",
			first.step, first.message, second.step, second.message)
	case second.status != "" && second.status != statusError:
		second.detail = fmt.Sprintf("rerun after a failure with no case and no report (%s: %s): %s", first.step, first.message, second.detail)
	}
	return second
}

// leakCheckMarker starts the init's lines about its kmemleak check
// (vmtest/internal/protocol's KmemleakLine and the steps before it).
const leakCheckMarker = "nlmc-vmtest: kmemleak"

// markerWatch signals seen, without blocking, on each write that holds
// marker.
type markerWatch struct {
	marker []byte
	seen   chan<- struct{}
}

func (w markerWatch) Write(p []byte) (int, error) {
	if bytes.Contains(p, w.marker) {
		select {
		case w.seen <- struct{}{}:
		default:
		}
	}
	return len(p), nil
}

func grepLine(text, what string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, what) {
			return strings.TrimSpace(l)
		}
	}
	return what
}

func lastLines(text string, n int) []string {
	ls := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return ls
}
