// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"nlmcast/selftests/netns"
	"nlmcast/selftests/nsdeath"
)

// blockUntil is a step that waits for what never comes (until the test
// ends): a kernel that never answers.
func blockUntil(release <-chan struct{}) { <-release }

// shortSteps gives every step before the first case a short deadline for
// the rest of t, and returns a channel closed when t ends.
func shortSteps(t *testing.T, deadline time.Duration) <-chan struct{} {
	t.Helper()
	savedStep, savedSwitch, savedNotice := stepDeadline, switchDeadline, stepNotice
	stepDeadline, switchDeadline, stepNotice = deadline, deadline, time.Hour
	release := make(chan struct{})
	t.Cleanup(func() {
		close(release)
		stepDeadline, switchDeadline, stepNotice = savedStep, savedSwitch, savedNotice
	})
	return release
}

// stepSuite is two cases that must not run when a step before them hangs;
// it holds the switch (Suite.Switch).
func stepSuite(ran *[]string) Suite {
	return Suite{Name: "prog", Switch: true,
		Cases: []Case{
			{Name: "one", Run: func(t T) { *ran = append(*ran, "one") }},
			{Name: "two", Run: func(t T) { *ran = append(*ran, "two") }},
		},
		Setup: func(func(string, ...any)) (func() error, error) { return nil, nil },
	}
}

// freeSwitch stands in for the switch: taken at once, and released says
// so.
func freeSwitch(t *testing.T, torn *bool) {
	t.Helper()
	saved := takeSwitch
	takeSwitch = func(func(string, ...any)) (func(), error) { return func() { *torn = true }, nil }
	t.Cleanup(func() { takeSwitch = saved })
}

// Each step from the plan to the first case that never returns ends the
// program within its deadline: the plan printed first, then where the
// step is blocked and a Bail out! naming what it waited for, exit 1, no
// case run; a switch already taken is given back. Before, the plan came
// after the kernel watch's set-up, which had no deadline: a kernel that
// refused the witness's group membership hung the program, silent,
// until the runner killed it.
func TestMainStepThatNeverReturns(t *testing.T) {
	for _, tt := range []struct {
		what    string // in the Bail out! line
		block   func(t *testing.T, release <-chan struct{}, s *Suite)
		torn    bool // the switch was taken, and must be released
		noWatch bool // the kernel watch was not started
	}{
		{what: "a NETLINK_ROUTE socket in the program's network namespace", block: func(t *testing.T, r <-chan struct{}, s *Suite) {
			routeSocketProbe = func() error { blockUntil(r); return nil }
			t.Cleanup(func() { routeSocketProbe = openRouteSocket })
		}},
		{what: "a network namespace (the check that one can be made)", block: func(t *testing.T, r <-chan struct{}, s *Suite) {
			probeNamespace = func() (*netns.NS, error) { blockUntil(r); return nil, nil }
		}},
		{what: "the kernel log (/dev/kmsg: open, mark the program's start, read what it holds)", block: func(t *testing.T, r <-chan struct{}, s *Suite) {
			quietLog(t, nil)
			openLog = func(string) (reporter, string, error) { blockUntil(r); return nil, "", nil }
		}},
		{what: "the namespace teardown witness (a namespace whose socket joins RTNLGRP_NSID)", block: func(t *testing.T, r <-chan struct{}, s *Suite) {
			saved := newWitness
			newWitness = func(*netns.NS) (*nsdeath.Witness, error) { blockUntil(r); return nil, errors.New("late") }
			t.Cleanup(func() { newWitness = saved })
		}},
		{what: "net.core.netlink_route_mc_index to be read", block: func(t *testing.T, r <-chan struct{}, s *Suite) {
			readRouteMCIndex = func() string { blockUntil(r); return "0" }
			t.Cleanup(func() { readRouteMCIndex = RouteMCIndex })
		}},
		{what: "net.core.netlink_route_mc_index: its lock (an flock another program of the suite may hold) and its value", block: func(t *testing.T, r <-chan struct{}, s *Suite) {
			takeSwitch = func(func(string, ...any)) (func(), error) { blockUntil(r); return func() {}, nil }
		}},
		{what: "the program's set-up", torn: true, block: func(t *testing.T, r <-chan struct{}, s *Suite) {
			s.Setup = func(func(string, ...any)) (func() error, error) { blockUntil(r); return nil, nil }
		}},
	} {
		t.Run(tt.what, func(t *testing.T) {
			skipPreflight(t)
			t.Setenv("KSFT_TAP_LEVEL", "")
			var ran []string
			torn := false
			freeSwitch(t, &torn)
			s := stepSuite(&ran)
			release := shortSteps(t, 200*time.Millisecond)
			tt.block(t, release, &s)
			var out strings.Builder
			start := time.Now()
			code := Run(s, nil, &out, &strings.Builder{})
			took := time.Since(start)
			got := out.String()
			t.Logf("output:\n%s", got)
			if !strings.HasPrefix(got, "TAP version 13\n1..2\n") {
				t.Errorf("the plan is not first:\n%s", got)
			}
			expectOutput(t, got,
				"# waited 200ms for "+tt.what+": its goroutine is blocked [chan receive] in nlmcast/selftests.blockUntil (steps_test.go:",
				"\nBail out! gave up waiting for "+tt.what+" after 200ms\n",
				"# Planned tests != run tests (2 != 0)\n",
			)
			if code != 1 || len(ran) > 0 || torn != tt.torn || took > 5*time.Second {
				t.Errorf("exit %d (want 1), cases run %q (want none), switch released %v (want %v), took %v:\n%s", code, ran, torn, tt.torn, took, got)
			}
		})
	}
}

// A stop signal while a step hangs ends the program stepStopGrace later,
// saying what it waited for: the kselftest runner's SIGTERM is obeyed.
// Before, a program blocked before its plan ignored SIGTERM (the
// handler only asks the cases to stop) and waited to be killed.
func TestMainSignalWhileAStepHangs(t *testing.T) {
	skipPreflight(t)
	release := shortSteps(t, time.Hour)
	saved := stepStopGrace
	stepStopGrace = 100 * time.Millisecond
	t.Cleanup(func() { stepStopGrace = saved })
	var ran []string
	torn := false
	freeSwitch(t, &torn)
	s := stepSuite(&ran)
	s.Setup = func(func(string, ...any)) (func() error, error) {
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		blockUntil(release)
		return nil, nil
	}
	var out strings.Builder
	code := Run(s, nil, &out, &strings.Builder{})
	expectOutput(t, out.String(), "# interrupted by SIGTERM, and 100ms later still waiting for the program's set-up: its goroutine is blocked [chan receive] in nlmcast/selftests.blockUntil",
		"\nBail out! interrupted by SIGTERM while waiting for the program's set-up\n")
	if code != 1 || len(ran) > 0 || !torn {
		t.Errorf("exit %d (want 1), ran %q, switch released %v:\n%s", code, ran, torn, out.String())
	}
}

// A step still running after stepNotice is said while the program waits.
func TestMainSlowStepIsSaid(t *testing.T) {
	skipPreflight(t)
	var ran []string
	torn := false
	freeSwitch(t, &torn)
	s := stepSuite(&ran)
	release := shortSteps(t, time.Hour)
	stepNotice = 10 * time.Millisecond
	noticed := make(chan struct{})
	out := &noticeWriter{seen: noticed}
	s.Setup = func(func(string, ...any)) (func() error, error) {
		select {
		case <-noticed: // the notice was printed: go on
		case <-release:
		}
		return nil, nil
	}
	code := Run(s, nil, out, &strings.Builder{})
	got := out.b.String()
	expectOutput(t, got, "# still waiting for the program's set-up after 10ms (deadline 1h0m0s)\n", "ok 1 prog.one", "ok 2 prog.two")
	if code != 0 {
		t.Errorf("exit %d, want 0:\n%s", code, got)
	}
}

// noticeWriter closes seen once a "still waiting" line is written.
type noticeWriter struct {
	b    strings.Builder
	seen chan struct{}
}

func (w *noticeWriter) Write(p []byte) (int, error) {
	if strings.HasPrefix(string(p), "# still waiting for") {
		close(w.seen)
	}
	return w.b.Write(p)
}

// A step that fails rather than hangs is judged as before, after the
// plan: no namespace can be made (every case SKIPs with why, exit 4); the
// witness cannot start (said; the cases run); the switch cannot be taken
// (every case fails: setup failed).
func TestMainStepThatFails(t *testing.T) {
	t.Run("namespace", func(t *testing.T) {
		skipPreflight(t)
		probeNamespace = func() (*netns.NS, error) { return nil, errors.New("unshare: operation not permitted") }
		var ran []string
		torn := false
		freeSwitch(t, &torn)
		var out strings.Builder
		code := Run(stepSuite(&ran), nil, &out, &strings.Builder{})
		expectOutput(t, out.String(), "1..2\n",
			"ok 1 prog.one # SKIP cannot create a network namespace: unshare: operation not permitted\n",
			"ok 2 prog.two # SKIP cannot create a network namespace: unshare: operation not permitted\n")
		if code != 4 || len(ran) > 0 {
			t.Errorf("exit %d (want 4), ran %q:\n%s", code, ran, out.String())
		}
	})
	t.Run("witness", func(t *testing.T) {
		skipPreflight(t)
		saved := newWitness
		newWitness = func(*netns.NS) (*nsdeath.Witness, error) {
			return nil, errors.New("namespace teardown witness: setsockopt NETLINK_ADD_MEMBERSHIP 28: no such file or directory")
		}
		t.Cleanup(func() { newWitness = saved })
		var ran []string
		torn := false
		freeSwitch(t, &torn)
		var out strings.Builder
		code := Run(stepSuite(&ran), nil, &out, &strings.Builder{})
		expectOutput(t, out.String(), "1..2\n",
			"# namespace teardown not waited for: namespace teardown witness: setsockopt NETLINK_ADD_MEMBERSHIP 28: no such file or directory\n",
			"ok 1 prog.one", "ok 2 prog.two")
		if code != 0 || len(ran) != 2 || !torn {
			t.Errorf("exit %d (want 0), ran %q, switch released %v:\n%s", code, ran, torn, out.String())
		}
	})
	t.Run("switch", func(t *testing.T) {
		skipPreflight(t)
		saved := takeSwitch
		takeSwitch = func(func(string, ...any)) (func(), error) { return nil, errors.New("flock: input/output error") }
		t.Cleanup(func() { takeSwitch = saved })
		var ran []string
		var out strings.Builder
		code := Run(stepSuite(&ran), nil, &out, &strings.Builder{})
		expectOutput(t, out.String(), "# setup: flock: input/output error\n", "not ok 1 prog.one # setup failed\n")
		if code != 1 || len(ran) > 0 {
			t.Errorf("exit %d (want 1), ran %q:\n%s", code, ran, out.String())
		}
	})
}
