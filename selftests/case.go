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
// main.go (the kselftest program: flags, signals, TAP), run.go (running
// one case: its T, file:line, deadline) and health.go (the kernel log,
// taint and namespace teardown watched while the cases run).
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
	// Timeout overrides the program's per-case deadline (-deadline) for
	// a case that is slow by design; 0 keeps the program's.
	Timeout time.Duration
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
