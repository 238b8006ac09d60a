// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// In the flipping mode a step fails unless flips landed in every quarter
// of its own window: none at all, one only (the old rule's "enough"),
// flips only before or after the step (the old rule counted one up to the
// step's deadline after it), or a writer that stalled halfway. The
// failure says where flips were missing and why the writer stopped.
func TestJudgeFlips(t *testing.T) {
	began := time.Unix(1000, 0)
	ended := began.Add(time.Second)
	at := func(ms ...int) []time.Time {
		var out []time.Time
		for _, m := range ms {
			out = append(out, began.Add(time.Duration(m)*time.Millisecond))
		}
		return out
	}
	every := func(from, to, step int) []int {
		var out []int
		for m := from; m <= to; m += step {
			out = append(out, m)
		}
		return out
	}
	for _, c := range []struct {
		name     string
		landings []time.Time
		failure  error
		want     string // "" passes
	}{
		{"flips throughout", at(every(0, 1000, 2)...), nil, ""},
		{"one in each quarter", at(10, 300, 600, 1000), nil, ""},
		{"none", nil, nil, "0 flips of net.core.netlink_route_mc_index landed during the step's 1s, none from 0s to 250ms, 250ms to 500ms, 500ms to 750ms, 750ms to 1s after its start (the writer still runs)"},
		{"one only", at(400), nil, "1 flips of net.core.netlink_route_mc_index landed during the step's 1s, none from 0s to 250ms, 500ms to 750ms, 750ms to 1s"},
		{"only after the step", at(1001, 1500, 30000), nil, "0 flips"},
		{"only before the step", at(-500, -1), nil, "0 flips"},
		{"the writer stalled halfway", at(every(0, 480, 2)...), nil, "241 flips of net.core.netlink_route_mc_index landed during the step's 1s, none from 500ms to 750ms, 750ms to 1s"},
		{"the writer stopped", at(every(0, 300, 2)...), errors.New("write 1: read back 0"), "(the writer stopped: write 1: read back 0)"},
	} {
		n, p := judgeFlips(c.landings, began, ended, c.failure)
		switch {
		case c.want == "" && p != "":
			t.Errorf("%s: failed: %s", c.name, p)
		case c.want != "" && !strings.Contains(p, c.want):
			t.Errorf("%s: %d flips, %q, want it to contain %q", c.name, n, p, c.want)
		}
	}
}

// mode0 and mode1 read the switch back after every step: a switch that
// moved, or that cannot be read, fails the step.
func TestHeldSwitchProblem(t *testing.T) {
	reads := func(v string, err error) func() (string, error) { return func() (string, error) { return v, err } }
	if p := heldSwitchProblem(reads("1", nil), "1"); p != "" {
		t.Errorf("held: %s", p)
	}
	if p := heldSwitchProblem(reads("0", nil), "1"); !strings.Contains(p, "reads 0 at the end of the step, held at 1") {
		t.Errorf("moved: %q", p)
	}
	if p := heldSwitchProblem(reads("", errors.New("EIO")), "0"); !strings.Contains(p, "unreadable at the end of the step (held at 0 for the sequence): EIO") {
		t.Errorf("unreadable: %q", p)
	}
}

// The writer's landings are read by window.
func TestFlipperLandings(t *testing.T) {
	base := time.Unix(1000, 0)
	f := &flipper{}
	for ms := range 10 {
		f.landed = append(f.landed, base.Add(time.Duration(ms)*time.Millisecond))
	}
	if got := f.landings(base.Add(2*time.Millisecond), base.Add(5*time.Millisecond)); len(got) != 4 || !got[0].Equal(base.Add(2*time.Millisecond)) {
		t.Errorf("landings from 2 to 5 ms: %v", got)
	}
	if got := f.landings(base.Add(20*time.Millisecond), base.Add(30*time.Millisecond)); len(got) != 0 {
		t.Errorf("landings after the last: %v", got)
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
