// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"nlmcast/ktap"
	"nlmcast/selftests/kmsg"
	"nlmcast/selftests/netns"
	"nlmcast/selftests/nsdeath"
)

// teardownDeadline bounds the wait for the kernel to tear down every
// namespace the cases made (after the last case, or after a Settle case).
// cleanup_net takes well under a second per batch even on the
// KASAN+lockdep kernel under TCG; a namespace still alive a minute after
// its last reference went is itself a bug (a leaked reference).
const teardownDeadline = 60 * time.Second

// interruptedTeardownDeadline is the same wait after a stop: the runner
// is waiting, but a report from the teardown still counts.
const interruptedTeardownDeadline = 5 * time.Second

// pollInterval is how often the kernel log is read while a case runs, so
// that a long case (a stress mode) cannot let the kernel overwrite the
// records of a report before they are read. Tests set it to 0: no
// background reads.
var pollInterval = time.Second

// health watches the kernel from the program's start: the kernel log and
// the taint mask (kmsg), and the teardown of the namespaces the cases made
// (nsdeath), so that a report their teardown causes after a case still
// fails the program.
type health struct {
	mu        sync.Mutex
	log       reporter // nil: not watched
	unwatched string   // why log is nil, or where the watch starts
	stopped   string   // why the watch stopped reading, once it did
	missed    uint64   // the records lost, as of the last reports
	tainted   uint64   // the taint bits set before the program started
	pending   []kmsg.Report
	stop      chan struct{}
	polling   sync.WaitGroup
	witness   *nsdeath.Witness
}

// reporter is what health needs of a kmsg.Watcher; tests supply their own.
type reporter interface {
	Poll() []kmsg.Report
	Settle() []kmsg.Report
	Missed() uint64
	Err() error
	AlreadyTainted() uint64
	Close() error
}

// openLog opens the kernel log watcher for program. Tests replace it.
var openLog = func(program string) (reporter, string, error) {
	w, err := kmsg.Open(program)
	if err != nil {
		return nil, "", err
	}
	return w, w.From(), nil
}

// current is the case that owns the namespaces made now (the one running,
// or the Group running); its name is the owner nsdeath records.
var current atomic.Value // string

// tracker is the running program's witness, or nil (under go test, or
// when it could not be created).
var tracker atomic.Pointer[nsdeath.Witness]

// track gives the witness a case namespace to wait for, on behalf of the
// case that is running.
func track(ns *netns.NS) {
	if w := tracker.Load(); w != nil {
		owner, _ := current.Load().(string)
		// A failure is remembered by the witness and reported by
		// its Wait; the case itself is not at fault.
		_ = w.Track(ns, owner)
	}
}

// newWitness starts the namespace teardown witness in ns, or in a
// namespace of its own when ns is nil. Tests replace it.
var newWitness = func(ns *netns.NS) (*nsdeath.Witness, error) {
	if ns == nil {
		return nsdeath.New()
	}
	return nsdeath.In(ns)
}

// watchKernel starts watching: the kernel log from the program's start,
// and every namespace made from now on, the witness in ns (nil: one of its
// own). Each is a step with its deadline (await): gaveUp says which did
// not return in time, or is "".
func watchKernel(program string, ns *netns.NS, w *ktap.Writer) (h *health, gaveUp string) {
	h = &health{stop: make(chan struct{})}
	var log reporter
	var from string
	var err error
	if g := await(w, "the kernel log ("+kmsg.DevKmsg+": open, mark the program's start, read what it holds)", stepDeadline, func() { log, from, err = openLog(program) }); g != "" {
		return nil, g
	}
	switch {
	case err != nil:
		h.unwatched = fmt.Sprintf("kernel log not watched: %v", err)
	case from != "":
		h.log, h.unwatched = log, "kernel log watched "+from
	default:
		h.log = log
	}
	if h.log != nil && pollInterval > 0 {
		h.polling.Add(1)
		go h.pollEvery(pollInterval)
	}
	var wit *nsdeath.Witness
	if g := await(w, "the namespace teardown witness (a namespace whose socket joins RTNLGRP_NSID)", stepDeadline, func() { wit, err = newWitness(ns) }); g != "" {
		h.close()
		return nil, g
	}
	if err != nil {
		h.unwatched = strings.TrimPrefix(h.unwatched+"; ", "; ") + fmt.Sprintf("namespace teardown not waited for: %v", err)
	} else {
		h.witness = wit
		tracker.Store(wit)
		netns.OnCreate(track)
	}
	return h, ""
}

// sayUnwatched says, once, what of the kernel is not watched: the log, and
// the taint bits already set when the program started (the mask cannot
// show them being set again, so a report that sets one shows in the log
// only).
func (h *health) sayUnwatched(w *ktap.Writer) {
	if h.unwatched != "" {
		w.Diag("%s", h.unwatched)
	}
	if h.log == nil {
		return
	}
	mask := h.log.AlreadyTainted()
	h.tainted = mask
	for bit := 0; bit < 64; bit++ {
		if mask&(1<<bit) != 0 {
			w.Diag("taint bit %d %s was already set when the program started: a report that sets it is seen in the log alone (each case's result line says so)", bit, kmsg.BitName(bit))
		}
	}
}

// logUnwatched says why the kernel log is not read (not opened, or the
// watch stopped), or is "".
func (h *health) logUnwatched() string {
	if h.log == nil {
		return h.unwatched
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stopped
}

func (h *health) pollEvery(d time.Duration) {
	defer h.polling.Done()
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
			h.mu.Lock()
			h.pending = append(h.pending, h.log.Poll()...)
			h.mu.Unlock()
		}
	}
}

// reports returns what the kernel reported since the last call, but for
// the reports the known list names (kmsg.Sift), which it says on w. A
// report still being logged is waited for (kmsg.Watcher.Settle). lost
// says what of the log went unread since the last call ("3 records
// lost", or "the watch stopped (ERROR)"), or is "": a report may have
// been among it, so no verdict that rests on the log can be given for
// that time.
func (h *health) reports(w *ktap.Writer) (reps []kmsg.Report, lost string) {
	if h.log == nil {
		return nil, ""
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	reps = append(h.pending, h.log.Settle()...)
	h.pending = nil
	var what []string
	if n := h.log.Missed(); n > h.missed {
		what = append(what, fmt.Sprintf("%d records lost", n-h.missed))
		w.Diag("kernel log: %d records lost (overwritten before they were read): a report among them went unseen", n-h.missed)
		h.missed = n
	}
	if err := h.log.Err(); err != nil && h.stopped == "" {
		h.stopped = fmt.Sprintf("kernel log no longer watched: %v", err)
		what = append(what, fmt.Sprintf("the watch stopped (%v)", err))
		w.Diag("%s: a report from now on goes unseen", h.stopped)
	}
	return kmsg.Sift(reps, w.Diag), strings.Join(what, ", ")
}

// note is what a passing case's result line says of the watch beside it,
// or "": the log not watched at all (said at the start, but the line
// alone must not read as a watched pass), or taint bits set before the
// program started, which the watch then sees in the log alone.
func (h *health) note() string {
	var notes []string
	if why := h.logUnwatched(); why != "" {
		notes = append(notes, why)
	}
	if h.log != nil && h.tainted != 0 {
		var bits []string
		for bit := 0; bit < 64; bit++ {
			if h.tainted&(1<<bit) != 0 {
				letter, _, _ := strings.Cut(kmsg.BitName(bit), " (")
				bits = append(bits, letter)
			}
		}
		notes = append(notes, fmt.Sprintf("taint %s set before the program: watched by the log alone", strings.Join(bits, " ")))
	}
	return strings.Join(notes, "; ")
}

// settle waits until the kernel has torn down every namespace made so far
// (of the case that just ended), so that a report from their teardown is
// read before the case is judged. It returns what kept it from being
// sure, or "".
func (h *health) settle(w *ktap.Writer, who string) string {
	if h.witness == nil {
		return ""
	}
	deadline := teardownDeadline
	if Interrupted() {
		deadline = interruptedTeardownDeadline
	}
	// A slow teardown (hundreds of namespaces on a debug kernel) is said
	// as it goes: the program is waiting, not stuck.
	start := time.Now()
	stop := Every(settleNoteEvery, func() {
		w.Diag("%s: waiting for the kernel to tear down its namespaces, %.0fs so far (at most %v)", who, time.Since(start).Seconds(), deadline)
	})
	err := h.witness.Wait(deadline)
	stop()
	if err != nil {
		return fmt.Sprintf("waiting for the kernel to tear down the case's namespaces: %v", err)
	}
	return ""
}

// settleNoteEvery is how often a wait for namespaces' teardown says so.
const settleNoteEvery = 15 * time.Second

// forget stops waiting for the namespaces of a case the program abandoned
// (it may still hold them) and says so.
func (h *health) forget(w *ktap.Writer, name string) {
	if h.witness == nil {
		return
	}
	if names := h.witness.Forget(name); len(names) > 0 {
		w.Diag("%s: its namespaces %s are still held by its goroutine: not waited for (they go with the program)", name, strings.Join(names, ", "))
	}
}

// judge turns a case's result into a failure when the kernel reported
// something while it ran (reps), and prints the reports' first lines;
// beside names the cases that ran concurrently with it.
func judge(w *ktap.Writer, name string, reps []kmsg.Report, beside []string, res ktap.Result, reason string) (ktap.Result, string) {
	if len(reps) == 0 {
		return res, reason
	}
	when := "during " + name
	if len(beside) > 0 {
		when += " (running beside " + strings.Join(beside, ", ") + ")"
	}
	printReports(w, when, reps)
	return ktap.Fail, fmt.Sprintf("kernel report during the case: %s", reps[0].Kind)
}

// finish waits for the namespaces' teardown and checks the kernel once
// more; a report then, or a teardown that never ends, aborts the stream.
func (h *health) finish(w *ktap.Writer) {
	defer h.close()
	current.Store("after the last case")
	if msg := h.settle(w, "after the last case"); msg != "" {
		w.Diag("%s", msg)
		if !Interrupted() {
			w.BailOut("the kernel did not finish tearing down the cases' namespaces")
			return
		}
	}
	reps, lost := h.reports(w)
	if len(reps) > 0 {
		printReports(w, "after the last case (namespace teardown)", reps)
		w.BailOut(fmt.Sprintf("kernel report after the last case: %s", reps[0].Kind))
		return
	}
	if lost != "" {
		// The program's last judgement rests on the log alone.
		w.BailOut(fmt.Sprintf("kernel log: %s after the last case: the kernel's health cannot be judged", lost))
	}
}

func (h *health) close() {
	netns.OnCreate(nil)
	tracker.Store(nil)
	close(h.stop)
	h.polling.Wait()
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

// ReplaceKernelLog makes Main take its kernel reports from poll instead of
// the kernel's log (read when each case ends, and once at the end), until
// restore is called: for the tests of a program built on Main, which must
// neither write the host's log nor depend on what its kernel says.
func ReplaceKernelLog(poll func() []kmsg.Report) (restore func()) {
	return ReplaceKernelLogWith(FakeKernelLog{Reports: poll})
}

// FakeKernelLog is a kernel log for ReplaceKernelLogWith.
type FakeKernelLog struct {
	// Reports returns what the kernel reported since the last call.
	Reports func() []kmsg.Report
	// Lost returns how many records the log has lost so far (records
	// the kernel overwrote before they were read); nil: none.
	Lost func() uint64
}

// ReplaceKernelLogWith is ReplaceKernelLog with a log that may lose
// records: for a program's test of what a case that ran while records
// were lost becomes.
func ReplaceKernelLogWith(l FakeKernelLog) (restore func()) {
	saved, interval := openLog, pollInterval
	openLog = func(string) (reporter, string, error) { return fakeLog(l), "", nil }
	pollInterval = 0
	return func() { openLog, pollInterval = saved, interval }
}

type fakeLog FakeKernelLog

func (l fakeLog) Poll() []kmsg.Report {
	if l.Reports == nil {
		return nil
	}
	return l.Reports()
}
func (l fakeLog) Settle() []kmsg.Report { return l.Poll() }
func (l fakeLog) Missed() uint64 {
	if l.Lost == nil {
		return 0
	}
	return l.Lost()
}
func (fakeLog) Err() error             { return nil }
func (fakeLog) AlreadyTainted() uint64 { return 0 }
func (fakeLog) Close() error           { return nil }

// AwaitTeardown waits, from inside a case, until the kernel has torn down
// every namespace made so far whose last reference is gone: for a case
// that must look at the kernel after its namespaces' exit methods ran (a
// leak scan). It returns at once under go test, which tracks nothing.
func AwaitTeardown(t T) error {
	t.Helper()
	w := tracker.Load()
	if w == nil {
		return nil
	}
	return w.Wait(teardownDeadline)
}
