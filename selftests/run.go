// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"nlmcast/ktap"
)

// caseT is the T of a case run by Main. Like testing.T, FailNow, Fatalf and
// Skipf end the case's goroutine with runtime.Goexit; cleanups run in
// reverse order on every way out, and every message names the file and
// line of the case that logged it, past the functions marked with Helper.
type caseT struct {
	name string
	w    *ktap.Writer
	// held collects the case's diagnostic lines when it runs beside other
	// cases (a Group); nil: they go to w at once.
	held *[]string
	// stopping is closed when the program stops or gives up on the case
	// (its deadline): the harness's waits end then.
	stopping chan struct{}
	stopOnce sync.Once

	mu        sync.Mutex
	failed    bool
	blamed    bool // failed before any signal: a verdict on the kernel
	result    ktap.Result
	reason    string
	cleanups  []func()
	helpers   map[string]bool // functions marked with Helper
	abandoned bool            // past its deadline: the runner went on without it
}

// Helper marks the calling function as a helper: file:line in messages
// names its caller instead, as with testing.T.Helper.
func (t *caseT) Helper() {
	var pc [1]uintptr
	if runtime.Callers(2, pc[:]) == 0 {
		return
	}
	frame, _ := runtime.CallersFrames(pc[:]).Next()
	t.mu.Lock()
	if t.helpers == nil {
		t.helpers = map[string]bool{}
	}
	t.helpers[frame.Function] = true
	t.mu.Unlock()
}

func (t *caseT) Name() string { return t.name }

func (t *caseT) Logf(format string, args ...any) { t.log(fmt.Sprintf(format, args...)) }

func (t *caseT) Errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	t.mu.Lock()
	t.failed = true
	if Interrupted() {
		msg = "(" + interruptedBy() + ") " + msg
	} else {
		t.blamed = true
	}
	t.mu.Unlock()
	t.log(msg)
}

func (t *caseT) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	runtime.Goexit()
}

func (t *caseT) Skipf(format string, args ...any) {
	t.mu.Lock()
	if t.result == ktap.Pass {
		t.result, t.reason = ktap.Skip, fmt.Sprintf(format, args...)
	}
	t.mu.Unlock()
	runtime.Goexit()
}

func (t *caseT) xfail(reason string) {
	t.mu.Lock()
	t.result, t.reason = ktap.XFail, reason
	t.mu.Unlock()
	runtime.Goexit()
}

func (t *caseT) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}

func (t *caseT) Cleanup(fn func()) {
	t.mu.Lock()
	t.cleanups = append(t.cleanups, fn)
	t.mu.Unlock()
}

// log prints msg as the case's diagnostic, after the file:line of the
// call that logged it (Logf, Errorf, Fatalf and their helpers). A case
// the runner abandoned stays silent: its lines would land among the next
// case's.
func (t *caseT) log(msg string) {
	where := t.caller()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.abandoned {
		return
	}
	line := fmt.Sprintf("%s: %s%s", t.name, where, msg)
	if t.held != nil {
		*t.held = append(*t.held, line)
		return
	}
	t.w.Diag("%s", line)
}

// record prints a data line as it is, without the case's name and
// file:line (Record).
func (t *caseT) record(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.abandoned:
	case t.held != nil:
		*t.held = append(*t.held, line)
	default:
		t.w.Diag("%s", line)
	}
}

// Record prints line as a diagnostic line of its own, as it is, without
// the case's name and file:line: a record for tools (a bench sample, a
// stress mode's JSON summary) or a summary whose place in the code tells
// the reader nothing. Under go test it is logged.
func Record(t T, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf(format, args...)
	if c, ok := t.(*caseT); ok {
		c.record(line)
		return
	}
	t.Logf("%s", line)
}

// Done returns a channel that is closed when the case should stop: the
// program was asked to stop (a signal, stdout gone) or gave up on the
// case at its deadline. Long cases select on it. Under go test it is the
// program's stop only.
func Done(t T) <-chan struct{} {
	if c, ok := t.(*caseT); ok {
		return c.stopping
	}
	return stopping()
}

// stopped reports whether t should stop (Done is closed).
func stopped(t T) bool {
	select {
	case <-Done(t):
		return true
	default:
		return false
	}
}

func (t *caseT) stopNow() { t.stopOnce.Do(func() { close(t.stopping) }) }

// bodyFunc is the function that calls a case's Run: the caller search
// stops there.
var bodyFunc string

func init() { bodyFunc = runtime.FuncForPC(reflect.ValueOf((*caseT).body).Pointer()).Name() }

// caller returns "file.go:line: " for the first frame above the T
// methods that is not a helper; if every frame up to the case's Run is a
// helper, the outermost one; "" for a message of the runner itself (a
// panic, whose stack says where).
func (t *caseT) caller() string {
	pc := make([]uintptr, 64)
	n := runtime.Callers(2, pc)
	frames := runtime.CallersFrames(pc[:n])
	methods := strings.TrimSuffix(bodyFunc, "body")
	t.mu.Lock()
	defer t.mu.Unlock()
	var outer runtime.Frame
	for more := n > 0; more; {
		var f runtime.Frame
		f, more = frames.Next()
		switch {
		case strings.HasPrefix(f.Function, bodyFunc) || strings.HasPrefix(f.Function, "runtime."):
			more = false
		case strings.HasPrefix(f.Function, methods):
		case !t.helpers[f.Function]:
			return where(f)
		default:
			outer = f
		}
	}
	if outer.PC != 0 {
		return where(outer)
	}
	return ""
}

func where(f runtime.Frame) string {
	return filepath.Base(f.File) + ":" + strconv.Itoa(f.Line) + ": "
}

func (t *caseT) runCleanups() {
	for {
		t.mu.Lock()
		n := len(t.cleanups)
		if n == 0 {
			t.mu.Unlock()
			return
		}
		fn := t.cleanups[n-1]
		t.cleanups = t.cleanups[:n-1]
		t.mu.Unlock()
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("panic in cleanup: %v\n%s", p, debug.Stack())
				}
			}()
			fn()
		}()
	}
}

// body runs the case and then its cleanups, on the case's goroutine.
func (t *caseT) body(c Case) {
	defer t.runCleanups()
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	c.Run(t)
}

// stopGrace is how long a case may go on after a stop before the runner
// stops waiting for it: the harness's waits give up at once, a request's
// reply takes at most 5 s.
const stopGrace = 10 * time.Second

// abandonGrace is how long a case past its deadline has, once told to
// stop, to end by itself (its waits return at once) and so run its own
// cleanups on its own goroutine.
const abandonGrace = time.Second

// runCase runs c on a goroutine of its own and returns its result. A case
// still running after deadline (c.Timeout if set and the deadline was not
// given explicitly), or stopGrace after a stop, fails with what its
// goroutine is blocked in. held, if not nil, collects its diagnostic
// lines.
func runCase(c Case, w *ktap.Writer, opt options, held *[]string) (ktap.Result, string, bool) {
	deadline := opt.deadline
	if c.Timeout > 0 && !opt.explicit {
		deadline = c.Timeout
	}
	t := &caseT{name: c.Name, w: w, held: held, stopping: make(chan struct{})}
	done := make(chan struct{})
	gid := make(chan int, 1)
	go func() {
		defer close(done)
		gid <- goroutineID()
		t.body(c)
	}()
	id := <-gid
	timer := time.NewTimer(deadline)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		res, reason := t.abandon(id, done, fmt.Sprintf("TIMEOUT: still running after the per-case deadline of %v", deadline))
		return res, reason, true
	case <-stop.done:
		t.stopNow()
		select {
		case <-done:
		case <-time.After(stopGrace):
			res, reason := t.abandon(id, done, fmt.Sprintf("%s: still running %v later", interruptedBy(), stopGrace))
			return res, reason, true
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.failed && !t.blamed:
		return ktap.Fail, interruptedBy(), false
	case t.failed:
		return ktap.Fail, "", false
	}
	return t.result, t.reason, false
}

// abandon reports the case's goroutine, still running, as failed, with
// where it is blocked. It tells the case to stop and gives it
// abandonGrace to end by itself, its cleanups running on its own
// goroutine. Nothing is closed under a goroutine that is still running:
// its descriptors would be reused by the next case while it still reads
// or writes them. What such a case holds goes with the program.
func (t *caseT) abandon(id int, done <-chan struct{}, why string) (ktap.Result, string) {
	state := goroutineState(id)
	t.stopNow()
	ended := false
	select {
	case <-done:
		ended = true
	case <-time.After(abandonGrace):
	}
	t.mu.Lock()
	t.abandoned = true
	held := t.held
	t.mu.Unlock()
	say := func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		if held != nil {
			*held = append(*held, line)
			return
		}
		t.w.Diag("%s", line)
	}
	say("%s: %s; its goroutine was %s", t.name, why, state)
	if ended {
		say("%s: it ended once told to stop, and its cleanups ran", t.name)
	} else {
		say("%s: it is still running %v after being told to stop: what it holds goes with the program", t.name, abandonGrace)
	}
	return ktap.Fail, why
}

// goroutineID is the calling goroutine's id, from its stack header
// ("goroutine 18 [running]:").
func goroutineID() int {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	id, _ := strconv.Atoi(string(b[:bytes.IndexByte(b, ' ')]))
	return id
}

// goroutineState describes goroutine id: its state and the frames of its
// stack outside the runtime, innermost first, as "f (file:line)".
func goroutineState(id int) string {
	buf := make([]byte, 1<<20)
	all := string(buf[:runtime.Stack(buf, true)])
	head := fmt.Sprintf("goroutine %d [", id)
	i := strings.Index(all, head)
	if i < 0 {
		return "gone"
	}
	block := all[i+len(head):]
	if j := strings.Index(block, "\n\n"); j >= 0 {
		block = block[:j]
	}
	state, stack, _ := strings.Cut(block, "]:\n")
	lines := strings.Split(stack, "\n")
	var frames []string
	for k := 0; k+1 < len(lines); k += 2 {
		fn := lines[k]
		if p := strings.LastIndexByte(fn, '('); p > 0 {
			fn = fn[:p]
		}
		if fn == bodyFunc || strings.HasPrefix(fn, awaitFunc+".") {
			break // the runner's own frames follow
		}
		if strings.HasPrefix(fn, "runtime.") {
			continue
		}
		loc := strings.TrimSpace(lines[k+1])
		if p := strings.LastIndexByte(loc, ' '); p > 0 {
			loc = loc[:p]
		}
		frames = append(frames, fmt.Sprintf("%s (%s)", fn, filepath.Base(loc)))
	}
	return fmt.Sprintf("blocked [%s] in %s", state, strings.Join(frames, " <- "))
}
