// Package selftests is the harness shared by the netlink multicast suites: a
// case table that runs both as a kselftest binary (Main) and under go test,
// namespaces prepared for exact counting, subscriber sockets, and per-socket
// transcripts compared with the expected ones.
package selftests

// T is the part of *testing.T the cases use. *testing.T satisfies it, and
// Main provides its own implementation for the kselftest binaries, so one
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
