// SPDX-License-Identifier: GPL-2.0

// Package ktap writes the kselftest flavour of TAP: the output format of
// tools/testing/selftests/kselftest.h and net/lib/py/ksft.py, which the
// kselftest runner, run_kselftest.sh and netdev CI (NIPA) parse.
//
// A Writer prints one line at a time and flushes each line, so a runner that
// kills the program on a timeout still sees everything up to that point.
package ktap

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Result is the outcome of one test case.
type Result int

const (
	Pass Result = iota
	Fail
	Skip
	XFail
)

func (r Result) String() string {
	switch r {
	case Pass:
		return "pass"
	case Fail:
		return "fail"
	case Skip:
		return "skip"
	case XFail:
		return "xfail"
	}
	return fmt.Sprintf("Result(%d)", int(r))
}

// Exit codes of kselftest.h. Programs use only these three.
const (
	ExitPass = 0
	ExitFail = 1
	ExitSkip = 4
)

// Writer prints a TAP stream. It is safe for concurrent use; lines never
// interleave.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	planned int
	n       int
	counts  [4]int
	header  bool
	bailed  bool
	err     error       // the first failed write
	onError func(error) // called once, with err
}

// New returns a Writer on w. The `TAP version 13` header is left out when
// KSFT_TAP_LEVEL is set, as kselftest.h does for nested runs.
func New(w io.Writer) *Writer {
	return &Writer{w: w, header: os.Getenv("KSFT_TAP_LEVEL") == ""}
}

func (w *Writer) line(s string) {
	// One Write per line: fd 1 is unbuffered in Go, so each line reaches
	// the runner as soon as it is printed.
	if _, err := io.WriteString(w.w, s+"\n"); err != nil && w.err == nil {
		w.err = err
		if w.onError != nil {
			w.onError(err)
		}
	}
}

// OnError makes fn be called, once, with the first write that fails: a
// program stops running cases when no one can read their results.
func (w *Writer) OnError(fn func(error)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onError = fn
}

// Err returns the first write that failed, or nil. A stream that could not
// be written is no result: Finish and SkipAll then return ExitFail.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Plan prints the header and the plan line `1..n`.
func (w *Writer) Plan(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.header {
		w.line("TAP version 13")
	}
	w.planned = n
	w.line(fmt.Sprintf("1..%d", n))
}

// SkipAll prints `1..0 # SKIP reason` for a program that cannot run at all,
// and returns the exit code to use.
func (w *Writer) SkipAll(reason string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.header {
		w.line("TAP version 13")
	}
	w.line("1..0 # SKIP " + oneLine(reason))
	if w.err != nil {
		return ExitFail
	}
	return ExitSkip
}

// Diag prints text as diagnostic lines, each prefixed with "# ".
func (w *Writer) Diag(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.diag(fmt.Sprintf(format, args...))
}

func (w *Writer) diag(text string) {
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		w.line(strings.TrimRight("# "+l, " "))
	}
}

// Result prints the result line of the next case. reason is the SKIP or
// XFAIL reason, or for Fail and Pass a note after the description (`not ok
// 3 name # interrupted by SIGTERM`, `ok 4 name # kernel log not watched`).
// A non-negative elapsed adds `time=NNNms`, which NIPA records as the case's duration; it follows the
// reason so that the directive still starts with SKIP or XFAIL.
func (w *Writer) Result(name string, r Result, reason string, elapsed time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n++
	w.counts[r]++
	var b strings.Builder
	if r == Fail {
		b.WriteString("not ")
	}
	fmt.Fprintf(&b, "ok %d %s", w.n, Name(name))
	var directive []string
	switch r {
	case Skip:
		directive = append(directive, "SKIP "+oneLine(reason))
	case XFail:
		directive = append(directive, "XFAIL "+oneLine(reason))
	case Fail, Pass:
		if reason != "" {
			directive = append(directive, oneLine(reason))
		}
	}
	if elapsed >= 0 {
		directive = append(directive, fmt.Sprintf("time=%dms", elapsed.Milliseconds()))
	}
	if len(directive) > 0 {
		b.WriteString(" # " + strings.Join(directive, " "))
	}
	w.line(b.String())
}

// BailOut prints `Bail out! reason`: the program found a failure that
// belongs to no case (a kernel report after the last case). Finish then
// still prints the totals, and returns ExitFail.
func (w *Writer) BailOut(reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.bailed = true
	w.line("Bail out! " + oneLine(reason))
}

// Finish prints the totals line (last line of the stream) and returns the
// program's exit code: 1 if anything failed or fewer cases ran than were
// planned, 4 if every planned case skipped, 0 otherwise.
func (w *Writer) Finish() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	pass, fail, xfail, skip := w.counts[Pass], w.counts[Fail], w.counts[XFail], w.counts[Skip]
	if w.n != w.planned {
		w.line(fmt.Sprintf("# Planned tests != run tests (%d != %d)", w.planned, w.n))
	}
	w.line(fmt.Sprintf("# Totals: pass:%d fail:%d xfail:%d xpass:0 skip:%d error:0", pass, fail, xfail, skip))
	switch {
	case fail > 0 || w.n != w.planned || w.err != nil || w.bailed:
		return ExitFail
	case w.planned > 0 && skip == w.planned:
		return ExitSkip
	}
	return ExitPass
}

// Name makes s usable as a TAP description: no '#', no line breaks, never
// empty.
func Name(s string) string {
	s = strings.NewReplacer("#", "_", "\n", " ", "\r", " ").Replace(s)
	if strings.TrimSpace(s) == "" {
		return "unnamed"
	}
	return s
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "no reason given"
	}
	return s
}
