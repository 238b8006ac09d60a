// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"fmt"
	"reflect"
	"runtime"
	"time"

	"nlmcast/ktap"
)

// stepDeadline bounds each step a program takes after its plan and before
// its first case (a probe socket, a namespace, the kernel log, the
// teardown witness, reading the switch, the program's Setup). Each is a
// few system calls: making a namespace, the slowest, takes well under a
// second on the KASAN+lockdep kernel under TCG. A step still running
// after a minute waits for something that will not come (a kernel that
// refuses a group membership once left the witness's set-up blocked
// forever), and the program says which step it was instead of hanging
// until the runner kills it. Tests shorten it.
var stepDeadline = time.Minute

// switchDeadline bounds taking the switch (Suite.Switch): its flock waits
// for any other program of the suite holding it, and a stress run holds
// it for its whole run (six modes of up to 9 minutes each by default).
// The runner's per-program timeout (settings: 900 s) ends a wait longer
// than that anyway; this one ends it first, saying what it waited for.
var switchDeadline = 14 * time.Minute

// stepStopGrace is how long a step may go on after a stop (a signal)
// before the program gives up on it: as long as a case gets. Tests
// shorten it.
var stepStopGrace = stopGrace

// stepNotice is how long a step may run before the program says what it
// waits for: a wait of more than a few seconds is never silent.
var stepNotice = 5 * time.Second

// await runs step, named by what ("the kernel log ..."), on a goroutine of
// its own and waits at most d for it to return. A step still running
// after stepNotice is said; a stop (a signal) gives it stepStopGrace
// more. It
// returns "" once step returned, or why it gave up, having printed where
// step's goroutine is blocked: step is then left running, and what it
// makes goes with the program.
func await(w *ktap.Writer, what string, d time.Duration, step func()) (gaveUp string) {
	done := make(chan struct{})
	gid := make(chan int, 1)
	go func() {
		defer close(done)
		gid <- goroutineID()
		step()
	}()
	id := <-gid
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	notice := time.NewTimer(stepNotice)
	defer notice.Stop()
	stopped := stop.done
	var grace <-chan time.Time
	for {
		select {
		case <-done:
			return ""
		case <-notice.C:
			w.Diag("still waiting for %s after %v (deadline %v)", what, stepNotice, d)
		case <-stopped:
			stopped = nil
			grace = time.After(stepStopGrace)
		case <-grace:
			w.Diag("%s, and %v later still waiting for %s: its goroutine is %s", interruptedBy(), stepStopGrace, what, goroutineState(id))
			return fmt.Sprintf("%s while waiting for %s", interruptedBy(), what)
		case <-deadline.C:
			w.Diag("waited %v for %s: its goroutine is %s", d, what, goroutineState(id))
			return fmt.Sprintf("gave up waiting for %s after %v", what, d)
		}
	}
}

// awaitFunc is await's name: the frames of a step's goroutine from there
// on are the harness's own.
var awaitFunc string

func init() { awaitFunc = runtime.FuncForPC(reflect.ValueOf(await).Pointer()).Name() }
