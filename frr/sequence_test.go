// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"nlmcast/selftests"
)

// A step the harness gave up on (past its deadline) goes on converging
// while the teardown, or the next mode's first step, ends its sequence:
// the end must wait for the step instead of removing the lab under it.
// Run with -race: the old sequence read s.lab in converge while end set it
// to nil, a data race and a nil dereference.
func TestAbandonedStepKeepsItsLab(t *testing.T) {
	saved, savedStep := prog, steps[1]
	t.Cleanup(func() { prog, steps[1] = saved, savedStep })
	prog.frrErr, prog.seqSkip, prog.sw = nil, "", nil
	dir := filepath.Join(t.TempDir(), "lab")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &sequence{Mode: modes[0], passed: 0, lab: &lab{Dir: dir}, within: 300 * time.Millisecond}
	prog.seq = s
	converging := make(chan struct{})
	steps[1].Run = func(s *sequence, t selftests.T) {
		close(converging)
		s.converge(t, "abandoned", "a condition that never holds", s.deadline(),
			func() (bool, string, error) { return false, "never", nil }, time.Now())
	}
	stepDone := make(chan *recorder)
	go func() { stepDone <- record(func(rt selftests.T) { s.runStep(rt, 1) }) }()
	<-converging
	if err := s.end(nil); err != nil { // the teardown, while the step runs
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lab directory is left after end (stat: %v)", err)
	}
	r := <-stepDone
	if !r.failed || !strings.Contains(r.text(), "abandoned: not converged 300ms after the change") {
		t.Errorf("the step did not end with its own diagnosis:\n%s", r.text())
	}
	if s.lab != nil || prog.seq != nil {
		t.Error("the sequence still has a lab")
	}
}

// Without ping every sequence case SKIPs naming iputils-ping, before it
// builds anything: not learn and install passing and ping's SKIP cascading.
func TestMissingPingSkipsEverySequenceCase(t *testing.T) {
	saved, savedDirs := prog, pingDirs
	t.Cleanup(func() { prog, pingDirs = saved, savedDirs })
	t.Setenv("PATH", t.TempDir())
	pingDirs = nil
	teardown, err := setup(func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	defer teardown()
	n := 0
	for _, c := range cases() {
		if strings.HasPrefix(c.Name, "ipmonitor.") {
			continue
		}
		n++
		r := record(c.Run)
		if !strings.Contains(r.skipped, "no ping (Debian package iputils-ping") || r.failed {
			t.Errorf("%s: failed=%v skipped=%q, want a SKIP naming iputils-ping:\n%s", c.Name, r.failed, r.skipped, r.text())
		}
	}
	if n != len(modes)*len(steps) || current() != nil {
		t.Errorf("%d sequence cases ran, want %d, and no lab (current %v)", n, len(modes)*len(steps), current())
	}
	if got := sequenceNeeds(errNoFRR, "", ""); !strings.Contains(got, "Debian package frr") ||
		!strings.Contains(got, "Debian package iproute2") || !strings.Contains(got, "Debian package iputils-ping") {
		t.Errorf("every missing package is named: %q", got)
	}
	if got := sequenceNeeds(nil, "/sbin/ip", "/bin/ping"); got != "" {
		t.Errorf("nothing missing: %q", got)
	}
}

// In the flipping mode a step during which no flip landed fails, saying
// so, and says why the writer stopped if it did.
func TestFlipsLanded(t *testing.T) {
	var n atomic.Int64
	none := func() error { return nil }
	if _, err := flipsLanded(0, n.Load, none, 50*time.Millisecond, nil); err == nil ||
		!strings.Contains(err.Error(), "no flip of net.core.netlink_route_mc_index landed during the step") {
		t.Errorf("a count that stayed: %v", err)
	}
	broken := func() error { return errors.New("write 1: read back 0") }
	if _, err := flipsLanded(0, n.Load, broken, 50*time.Millisecond, nil); err == nil ||
		!strings.Contains(err.Error(), "the writer stopped: write 1: read back 0") {
		t.Errorf("a writer that stopped: %v", err)
	}
	n.Store(7)
	if got, err := flipsLanded(3, n.Load, none, time.Second, nil); err != nil || got != 4 {
		t.Errorf("4 flips landed: %d, %v", got, err)
	}
	// A short step that ended between two flips waits for the next.
	n.Store(3)
	go func() {
		time.Sleep(20 * time.Millisecond) // a writer's next flip, later
		n.Add(1)
	}()
	if got, err := flipsLanded(3, n.Load, none, 5*time.Second, nil); err != nil || got != 1 {
		t.Errorf("a flip after the step's checks: %d, %v", got, err)
	}
}

func TestParseDeaf(t *testing.T) {
	got, err := parseDeaf("r2,r3,r1:routes@withdraw_route,obs:routes")
	want := []deafSpec{{Router: 1}, {Router: 2}, {Router: 0, Routes: true, Before: "withdraw_route"}, {Router: observerTarget, Routes: true}}
	if err != nil || len(got) != len(want) {
		t.Fatalf("%v, %v", got, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("item %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"r0", "r4", "x1", "r1:links", "r1@nosuchstep", "r1,"} {
		if _, err := parseDeaf(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
