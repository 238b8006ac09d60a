// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"fmt"
	"sync/atomic"
	"time"

	"nlmcast/ktap"
	"nlmcast/selftests/kmsg"
	"nlmcast/selftests/netns"
	"nlmcast/selftests/nsdeath"
)

// teardownDeadline bounds the wait, after the last case, for the kernel to
// tear down every namespace the cases made. cleanup_net takes well under a
// second per batch even on the KASAN+lockdep kernel under TCG; a namespace
// still alive a minute after its last reference went is itself a bug
// (a leaked reference).
const teardownDeadline = 60 * time.Second

// interruptedTeardownDeadline is the same wait after a SIGTERM: the
// runner is waiting, but a report from the teardown still counts.
const interruptedTeardownDeadline = 5 * time.Second

// health watches the kernel while the cases run: the kernel log and the
// taint mask (kmsg), and the teardown of the namespaces the cases made
// (nsdeath), so that a report the teardown causes after the last case still
// fails the program.
type health struct {
	log     reporter
	witness *nsdeath.Witness
}

// reporter is what health needs of a kmsg.Watcher; tests supply their own.
type reporter interface {
	Poll() []kmsg.Report
	Close() error
}

// openLog opens the kernel log watcher. Tests replace it.
var openLog = func() (reporter, error) { return kmsg.Open() }

// tracker is the running program's witness, or nil (under go test, or
// when it could not be created). prepare tracks every case namespace.
var tracker atomic.Pointer[nsdeath.Witness]

// track gives the witness a case namespace to wait for.
func track(ns *netns.NS) {
	if w := tracker.Load(); w != nil {
		// A failure is remembered by the witness and reported by
		// its Wait; the case itself is not at fault.
		_ = w.Track(ns)
	}
}

// watchKernel starts watching the kernel log, from before the first case.
// Where the log cannot be read it says so once and goes on.
func watchKernel(w *ktap.Writer) *health {
	h := &health{}
	var err error
	if h.log, err = openLog(); err != nil {
		w.Diag("kernel log not watched: %v", err)
		h.log = nil
	}
	if h.witness, err = nsdeath.New(); err != nil {
		w.Diag("namespace teardown not waited for: %v", err)
		h.witness = nil
	} else {
		tracker.Store(h.witness)
	}
	return h
}

// reports returns what the kernel reported since the last call, less the
// known reports (not the series'), which it prints.
func (h *health) reports(w *ktap.Writer) []kmsg.Report {
	if h.log == nil {
		return nil
	}
	return kmsg.Sift(h.log.Poll(), w.Diag)
}

// judge turns a case's result into a failure when the kernel reported
// something while it ran, and prints the reports' first lines.
func (h *health) judge(w *ktap.Writer, name string, res ktap.Result, reason string) (ktap.Result, string) {
	reps := h.reports(w)
	if len(reps) == 0 {
		return res, reason
	}
	printReports(w, "during "+name, reps)
	return ktap.Fail, fmt.Sprintf("kernel report during the case: %s", reps[0].Kind)
}

// finish waits for the namespaces' teardown and checks the kernel once
// more; a report then, or a teardown that never ends, aborts the stream.
func (h *health) finish(w *ktap.Writer) {
	defer h.close()
	if h.witness != nil {
		deadline := teardownDeadline
		if Interrupted() {
			deadline = interruptedTeardownDeadline
		}
		tracker.Store(nil)
		if err := h.witness.Wait(deadline); err != nil {
			w.Diag("waiting for the kernel to tear down the cases' namespaces: %v", err)
			if !Interrupted() {
				w.BailOut("the kernel did not finish tearing down the cases' namespaces")
				return
			}
		}
	}
	if reps := h.reports(w); len(reps) > 0 {
		printReports(w, "after the last case (namespace teardown)", reps)
		w.BailOut(fmt.Sprintf("kernel report after the last case: %s", reps[0].Kind))
	}
}

func (h *health) close() {
	if h.witness != nil {
		h.witness.Close()
	}
	if h.log != nil {
		h.log.Close()
	}
}

func printReports(w *ktap.Writer, when string, reps []kmsg.Report) {
	for _, r := range reps {
		w.Diag("kernel report %s: %s", when, r)
		for _, l := range r.Lines {
			w.Diag("  | %s", l)
		}
	}
}
