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
	status  string   // statusKilled, statusCrashed, statusHung or statusSurvived
	failed  []string // the cases that failed (the first only, with failFast)
	ran     []string // the cases that passed or failed, not skipped
	detail  string   // why, in one line
	seconds float64
	maxGap  time.Duration // the longest stretch without a TAP line
	tail    []string      // the last lines of vmtest's stderr
}

const (
	statusKilled     = "killed"
	statusCrashed    = "crashed"
	statusHung       = "hung"
	statusBuildFail  = "build-failure"
	statusSurvived   = "survived"
	statusEquivalent = "equivalent"
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
		return bootResult{status: statusCrashed, detail: err.Error()}
	}
	if err := cmd.Start(); err != nil {
		return bootResult{status: statusCrashed, detail: "start vmtest: " + err.Error()}
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
	var last, bail string
	hung := false
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
				}
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
				hung = true
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
	switch {
	case ctx.Err() != nil:
		r.status, r.detail = "", "interrupted"
	case strings.Contains(errText, "guest kernel panicked"):
		r.status, r.detail = statusCrashed, grepLine(errText, "guest kernel panicked")
	case len(failed) > 0:
		// A failed case kills the mutant, also when the guest hung after it.
		r.status, r.failed = statusKilled, failed
		r.detail = "failed: " + strings.Join(failed, ", ")
		if hung {
			r.detail += "; then " + stopReason
		}
	case hung:
		r.status, r.detail = statusHung, stopReason
	case strings.Contains(errText, "timed out after"):
		r.status, r.detail = statusHung, grepLine(errText, "timed out after")
	case strings.Contains(errText, "kernel report"):
		r.status, r.detail = statusCrashed, grepLine(errText, "FAIL: the guest kernel logged")
	case cmd.ProcessState.ExitCode() == 0:
		r.status = statusSurvived
	default:
		// vmtest failed without a failed case: the boot itself went wrong.
		r.status, r.detail = statusCrashed, fmt.Sprintf("vmtest exit %d: %s", cmd.ProcessState.ExitCode(), strings.Join(r.tail, " | "))
	}
	return r
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
