// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"errors"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// stopSignals end a run the way the kselftest runner's SIGTERM does: the
// running case stops and cleans up, the cases after it do not run, and
// the program restores what it changed (the switch) and prints its
// Totals. Every signal whose default action would kill the program
// without that is here: SIGHUP (the terminal or session went away),
// SIGPIPE (a write to a closed stdout pipe, as in `prog | head -1`; with
// it caught, the write fails with EPIPE and the run stops through
// stdoutFailed instead), the timer and user signals and the resource
// limit signals. SIGKILL cannot be caught; SIGQUIT keeps Go's goroutine
// dump, which is what it is sent for.
var stopSignals = []os.Signal{
	syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE,
	syscall.SIGALRM, syscall.SIGUSR1, syscall.SIGUSR2,
	syscall.SIGXCPU, syscall.SIGXFSZ, syscall.SIGVTALRM,
}

// stop is the first reason to stop: a signal, or stdout gone. Waits in
// the harness give up when they see it, so the running case ends quickly
// and cleans up.
var stop struct {
	once sync.Once
	done chan struct{} // closed on the first reason
	why  string        // "SIGTERM", or "stdout: write: broken pipe"
}

func init() {
	stop.done = make(chan struct{})
	// A kselftest program catches the signals from its first moment (the
	// runtime's own start-up, a millisecond, is the only window left), so
	// that a SIGTERM during the pre-run checks still ends in TAP with a
	// Totals line. A go test binary (pkg.test) keeps the default ^C.
	if !strings.HasSuffix(os.Args[0], ".test") {
		catchSignals()
	}
}

// catchSignals notes the first stop signal until the program ends (or,
// from run, until run returns: the returned function stops it). SIGPIPE
// from a write to a closed pipe on another descriptor than stdout (a
// daemon's pipe) is only a failed write there, never a stop.
func catchSignals() (release func()) {
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, stopSignals...)
	go func() {
		for sig := range signals {
			if sig == syscall.SIGPIPE {
				// Delivered for a closed stdout too; the write's EPIPE
				// then stops the run through stdoutFailed.
				continue
			}
			requestStop(signalName(sig))
		}
	}()
	return func() { signal.Stop(signals) }
}

// requestStop records why the run stops; only the first reason counts.
func requestStop(why string) {
	stop.once.Do(func() {
		stop.why = why
		close(stop.done)
	})
}

// stdoutFailed stops the run when the TAP stream cannot be written: no
// one reads the results any more (a closed pipe, a full disk), so the
// cases after the running one would prove nothing to anyone, and the
// program ends, restoring the switch, with exit status 1.
func stdoutFailed(err error) {
	why := "stdout: " + err.Error()
	if errors.Is(err, unix.EPIPE) {
		why = "stdout closed (EPIPE)"
	}
	requestStop(why)
}

// Interrupted reports whether the program was asked to stop.
func Interrupted() bool {
	select {
	case <-stop.done:
		return true
	default:
		return false
	}
}

// stopping is closed when the program is asked to stop (a signal, or
// stdout gone): long cases (stress modes, bench rounds) select on it.
func stopping() <-chan struct{} { return stop.done }

// interruptedBy is the result note of a case the stop cut short.
func interruptedBy() string {
	select {
	case <-stop.done:
		return "interrupted by " + stop.why
	default:
		return "interrupted"
	}
}

func signalName(s os.Signal) string {
	if sig, ok := s.(syscall.Signal); ok {
		if n := unix.SignalName(sig); n != "" {
			return n
		}
	}
	return s.String()
}
