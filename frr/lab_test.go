// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"nlmcast/selftests"
)

// recorder is a selftests.T that keeps what a step says, so that a test
// can run a step that must fail and read its diagnosis.
type recorder struct {
	mu       sync.Mutex
	logs     []string
	failed   bool
	skipped  string
	cleanups []func()
}

func (r *recorder) Helper()      {}
func (r *recorder) Name() string { return "recorder" }
func (r *recorder) Logf(f string, a ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(f, a...))
}
func (r *recorder) Errorf(f string, a ...any) {
	r.Logf(f, a...)
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
}
func (r *recorder) Fatalf(f string, a ...any) { r.Errorf(f, a...); runtime.Goexit() }
func (r *recorder) Skipf(f string, a ...any) {
	r.mu.Lock()
	r.skipped = fmt.Sprintf(f, a...)
	r.mu.Unlock()
	runtime.Goexit()
}
func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}
func (r *recorder) Cleanup(fn func()) { r.cleanups = append(r.cleanups, fn) }
func (r *recorder) text() string      { return strings.Join(r.logs, "\n") }

// record runs fn on a goroutine of its own, as the harness runs a case,
// with its cleanups.
func record(fn func(t selftests.T)) *recorder {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			for i := len(r.cleanups) - 1; i >= 0; i-- {
				r.cleanups[i]()
			}
		}()
		fn(r)
	}()
	<-done
	return r
}

// needLab skips unless the test can run FRR: root and Debian's frr.
func needLab(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces and runs FRR")
	}
	frr, err := findFRR()
	if err != nil {
		t.Skip(err)
	}
	prog.frr, prog.frrErr, prog.sw = frr, nil, nil
	if prog.ip = findIP(); prog.ip == "" {
		t.Skip("no ip (Debian package iproute2)")
	}
	if findPing() == "" {
		t.Skip("no ping (Debian package iputils-ping)")
	}
	prog.seqSkip = ""
	inject.deaf, inject.deafFlag = nil, "" // a self-test's run leaves its flag parsed
	t.Cleanup(func() {
		inject.deaf, inject.deafFlag = nil, ""
		if s := current(); s != nil {
			if err := s.end(nil); err != nil {
				t.Error(err)
			}
		}
	})
}

// runSteps runs the first n steps of s, each of which must pass; the
// lab's directory must be gone when the test ends.
func runSteps(t *testing.T, s *sequence, n int) {
	t.Helper()
	for i := range n {
		r := record(func(rt selftests.T) { s.runStep(rt, i) })
		if i == 0 && s.lab != nil {
			dir := s.lab.Dir
			t.Cleanup(func() {
				// Runs before needLab's cleanup: end the sequence first.
				if s := current(); s != nil {
					if err := s.end(nil); err != nil {
						t.Error(err)
					}
				}
				if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("the lab directory %s is left (stat: %v)", dir, err)
				}
			})
		}
		if r.failed || r.skipped != "" {
			t.Fatalf("step %s: failed=%v skipped=%q:\n%s", steps[i].Name, r.failed, r.skipped, r.text())
		}
		t.Logf("%s:\n%s", steps[i].Name, r.text())
	}
}

// The whole sequence in whatever mode the kernel is in, as go test sees
// it; every daemon gone afterwards.
func TestSequence(t *testing.T) {
	needLab(t)
	s := &sequence{Mode: modes[0], passed: -1}
	runSteps(t, s, len(steps))
	if s.lab != nil || current() != nil {
		t.Fatal("the last step left its lab")
	}
}

// A route that is not withdrawn is a failure that names the router and
// the route: withdraw_addr's check, with a wrong expectation (nothing was
// deleted) and a short deadline.
func TestRouteNotWithdrawnDiagnosis(t *testing.T) {
	needLab(t)
	s := &sequence{Mode: modes[0], passed: -1}
	runSteps(t, s, 2)
	s.within = 2 * time.Second
	r := record(func(rt selftests.T) {
		s.converge(rt, "withdraw_addr", "the address prefixes gone from every kernel", s.deadline(),
			s.farState(noAddrs), time.Now())
	})
	t.Logf("the diagnosis:\n%s", r.text())
	for _, want := range []string{"not converged 2s after the change",
		"r3: r1's 198.51.100.0/28 via 192.0.2.5 dev ", "proto bgp nhid ", "still there, want it withdrawn", "router r3 zebra log"} {
		if !strings.Contains(r.text(), want) {
			t.Errorf("the diagnosis lacks %q", want)
		}
	}
	if !r.failed {
		t.Error("a route that stayed did not fail the step")
	}
}

// zebra killed in r2 mid-run fails the next step, naming the router,
// the daemon and how it ended, with the daemons' logs.
func TestDaemonDeathDiagnosis(t *testing.T) {
	needLab(t)
	s := &sequence{Mode: modes[0], passed: -1}
	runSteps(t, s, 3)
	pid, err := s.r(1).hostPID("zebra")
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := record(func(rt selftests.T) { s.runStep(rt, 3) })
	t.Logf("the diagnosis:\n%s", r.text())
	if !r.failed || !strings.Contains(r.text(), "router r2: daemon ended: zebra: signal: killed") ||
		!strings.Contains(r.text(), "router r2 bgpd log") {
		t.Fatal("zebra's death was not diagnosed")
	}
	if s.lab != nil {
		t.Fatal("the failed step left its lab")
	}
}
