// SPDX-License-Identifier: GPL-2.0

// Package selftests is the harness shared by the netlink multicast suites:
// a case table that runs both as a kselftest program (Main) and under go
// test, namespaces prepared for exact counting (NS), subscriber sockets
// (Sock), and per-socket transcripts compared with the expected ones
// (Expect and its variants).
//
// Files: case.go (T, Case), ns.go (namespaces and the events made in
// them), sock.go (subscriber sockets and their options), expect.go (reading
// a socket up to a sentinel, every Expect variant), transcript.go (Line,
// Msg, the diff), caps.go (capabilities), userns.go (sockets opened by root
// of a child user namespace), kernel.go (the running kernel's version),
// main.go (the kselftest program: flags, -h, TAP), steps.go (each step
// before the first case, with its deadline), stop.go (signals, stdout),
// schedule.go (cases alone and in groups), run.go (running one case: its
// T, file:line, deadline) and health.go (the kernel log, taint and
// namespace teardown watched while the cases run).
package selftests

import "time"

// T is the part of *testing.T the cases use. *testing.T satisfies it, and
// Main provides its own implementation for the kselftest programs, so one
// case table serves both.
type T interface {
	Helper()
	Name() string
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
	Failed() bool
	Cleanup(func())
}

// Case is one test case.
type Case struct {
	Name string
	Run  func(t T)
	// About is a line on what the case checks, for -l -v.
	About string
	// Timeout overrides the program's per-case deadline for a case that
	// is slow by design; 0 keeps the program's. An explicit -deadline on
	// the command line overrides both.
	Timeout time.Duration
	// Settle makes the program wait, once the case has ended, until the
	// kernel has torn down every namespace made while it ran, and only
	// then judge the kernel log: a report from their teardown (the pernet
	// exit methods run by cleanup_net, long after the last close) is then
	// blamed on this case rather than on the next one. For cases that
	// make many namespaces (stress modes, bench scenes); without it, a
	// program waits once, after its last case.
	Settle bool
	// Group names a set of independent cases: each shares nothing with
	// the others but the kernel itself (namespaces of its own, no write
	// to the switch or any other global setting, no timing). Consecutive
	// cases of one Group run concurrently, -j at a time, and their
	// results and diagnostics are printed in table order. A kernel report
	// is blamed on every case that was running when it was read, and says
	// which ran beside it. "" runs the case by itself.
	Group string
	// Slow says the case spends most of its time waiting for the kernel
	// (a namespace's teardown): in its Group it starts first, so that the
	// others use the CPUs while it waits. Results stay in table order.
	Slow bool
	// RequireKernelLog says the case's verdict rests on the kernel's own
	// reports (a stress mode exists to make them): where the kernel log
	// cannot be read, a case that passed every other check is a SKIP
	// that says so, not a pass.
	RequireKernelLog bool
}

// xfailer is implemented by Main's T: an expected failure, reported as
// `ok N name # XFAIL reason`.
type xfailer interface {
	xfail(reason string)
}

// XFail ends the case as an expected failure. Under go test, which has no
// such result, it skips with the reason.
func XFail(t T, reason string) {
	t.Helper()
	if x, ok := t.(xfailer); ok {
		x.xfail(reason)
	}
	t.Skipf("XFAIL %s", reason)
}
