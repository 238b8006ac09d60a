// SPDX-License-Identifier: GPL-2.0

package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"nlmcast/selftests"
	"nlmcast/selftests/mcswitch"
)

// mode is the switch's state during a sequence.
type mode struct {
	Name     string
	Value    string // "0" or "1"; "" while flipping
	Flipping bool
}

var modes = []mode{{"mode0", "0", false}, {"mode1", "1", false}, {"flipping", "", true}}

// about says, for -l -v, which switch value the mode's lab runs under.
func (m mode) about() string {
	if m.Flipping {
		return "switch flipping throughout"
	}
	return "switch at " + m.Value
}

// Deadlines. Convergence is asynchronous by nature (BGP timers, daemons
// scheduling): a step polls until its condition holds, and only a failing
// step waits the deadline out. Each step takes a second or two natively,
// a few under QEMU's software emulation.
const (
	daemonStartWithin = 60 * time.Second  // a daemon up to its vty socket
	sessionsWithin    = 120 * time.Second // BGP sessions up, loopbacks exchanged
	convergeWithin    = 30 * time.Second  // one step
	pollEvery         = 50 * time.Millisecond
)

// step is one TAP result of a sequence.
type step struct {
	Name  string
	Run   func(s *sequence, t selftests.T)
	About string // for -l -v
}

var steps = []step{
	{"learn", (*sequence).learn, "an address and a route of each family added in r1: r1's zebra has them, and its RIB and addresses equal the kernel's dumps"},
	{"install", (*sequence).install, "r2 and r3 install all four prefixes, proto bgp, through the upstream router out of the right device"},
	{"ping", (*sequence).ping, "ping from r3's loopbacks is answered from r1's new IPv4 and IPv6 addresses"},
	{"withdraw_addr", (*sequence).withdrawAddr, "the two addresses deleted: their prefixes gone from every kernel, the routes still everywhere"},
	{"withdraw_link", (*sequence).withdrawLink, "the stub link down: the routes gone from every kernel"},
	{"reinstall", (*sequence).reinstall, "link up, addresses and routes added again: everything back in r2 and r3, r1's zebra equal to its kernel"},
}

// sequence is one run of the steps in one mode, on a lab of its own
// (built by its first step, so that the daemons start, learn and peer in
// that mode too).
type sequence struct {
	Mode   mode
	K      int // selects the sequence's prefixes
	lab    *lab
	passed int // the last step that passed, -1 for none
	flip   *flipper
	Times  map[string]time.Duration
	// changed is when learn made its change: install is timed from it.
	changed time.Time
	// within overrides convergeWithin (the tests' wrong expectations).
	within time.Duration
}

func (s *sequence) deadline() time.Duration {
	if s.within > 0 {
		return s.within
	}
	return convergeWithin
}

func sequenceCases(m mode) []selftests.Case {
	s := &sequence{Mode: m, passed: -1}
	for i, md := range modes {
		if md.Name == m.Name {
			s.K = i
		}
	}
	var cs []selftests.Case
	for i, st := range steps {
		c := selftests.Case{Name: m.Name + "." + st.Name, Run: func(t selftests.T) { s.runStep(t, i) },
			About: m.about() + ": " + st.About}
		if i == 0 {
			c.Timeout = 2*daemonStartWithin + sessionsWithin + 2*convergeWithin
		}
		cs = append(cs, c)
	}
	return cs
}

// runStep runs step i. A step needs the state the one before it left, so
// it SKIPs unless that one passed; the first builds the lab, and the lab
// goes when a step fails or the last one ends.
func (s *sequence) runStep(t selftests.T, i int) {
	if prog.frrErr != nil {
		t.Skipf("%v", prog.frrErr)
	}
	if !selftests.InInitialUserNS() {
		// zebra and bgpd drop to user frr, whose directories the lab
		// chowns: a child user namespace maps no such user.
		t.Skipf("FRR's daemons run as user frr, which this user namespace does not map: run as root of the initial user namespace")
	}
	if s.Mode.Name != "mode0" && prog.sw == nil {
		t.Skipf("%s", skipReason())
	}
	if i > 0 && (s.passed != i-1 || s.lab == nil) {
		t.Skipf("needs %s.%s to pass first (run the sequence in order)", s.Mode.Name, steps[i-1].Name)
	}
	// Registered before begin, so that a lab whose start fails is removed
	// by the step that built it.
	t.Cleanup(func() {
		if s.passed != i || i == len(steps)-1 {
			s.end(t)
		}
	})
	if i == 0 {
		s.begin(t)
	}
	s.requireAlive(t)
	steps[i].Run(s, t)
	s.requireAlive(t)
	s.passed = i
}

func skipReason() string {
	if prog.swSkip != "" {
		return prog.swSkip
	}
	return mcswitch.NotSupported
}

// begin sets the mode and builds the lab.
func (s *sequence) begin(t selftests.T) {
	t.Helper()
	if prog.seq != nil {
		prog.seq.end(t)
	}
	prog.seq = s
	s.passed, s.Times = -1, map[string]time.Duration{}
	switch {
	case prog.sw == nil:
		t.Logf("net.core.netlink_route_mc_index absent: the kernel's only walk")
	case s.Mode.Flipping:
		s.flip = startFlipper(prog.sw)
	default:
		if err := prog.sw.Set(s.Mode.Value); err != nil {
			t.Fatalf("%v", err)
		}
	}
	start := time.Now()
	l, err := buildLab(prog.frr, daemonStartWithin)
	if err != nil {
		t.Fatalf("building the lab: %v", err)
	}
	s.lab = l
	s.converge(t, "start", "BGP sessions up, every router's loopbacks in every kernel", sessionsWithin, s.sessionsUp, start)
}

// end checks the idle subscribers, stops the flipper and removes the lab.
// t is nil on the program's way out (SIGTERM), when only cleanup is due
// and a lab that could not be removed is returned as the error.
func (s *sequence) end(t selftests.T) error {
	if prog.seq == s {
		prog.seq = nil
	}
	if s.lab != nil && t != nil {
		if got := s.lab.idleReceived(); len(got) > 0 {
			t.Errorf("%d message(s) reached the %d idle foreign subscribers (netns idle, no LISTEN_ALL_NSID), which must receive nothing; the first: %s",
				len(got), idleSubscribers, strings.Join(got[:min(len(got), 5)], "; "))
		}
	}
	if s.flip != nil {
		n, err := s.flip.stop()
		if t != nil {
			t.Logf("the writer flipped net.core.netlink_route_mc_index %d times during the sequence", n)
			if err != nil {
				t.Errorf("flipping the switch: %v", err)
			}
		}
		s.flip = nil
	}
	var err error
	if s.lab != nil {
		err = s.lab.close()
		s.lab = nil
		if err != nil && t != nil {
			t.Errorf("%v", err)
			err = nil
		}
	}
	return err
}

// requireAlive fails the step if a daemon has ended.
func (s *sequence) requireAlive(t selftests.T) {
	t.Helper()
	if d := s.lab.dead(); d != "" {
		s.logDaemons(t)
		t.Fatalf("%s", d)
	}
}

// converge polls check until it holds, within the deadline, and records
// how long it took from since.
func (s *sequence) converge(t selftests.T, what, cond string, within time.Duration, check func() (bool, string, error), since time.Time) {
	t.Helper()
	deadline := since.Add(within)
	for {
		if d := s.lab.dead(); d != "" {
			s.logDaemons(t)
			t.Fatalf("%s: %s, while waiting for: %s", what, d, cond)
		}
		ok, state, err := check()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			s.record(t, what, time.Since(since))
			return
		}
		if time.Now().After(deadline) {
			s.logDaemons(t)
			t.Fatalf("%s: not converged %v after the change: want %s; still:\n%s", what, within, cond, state)
		}
		if selftests.Interrupted() {
			t.Fatalf("%s: interrupted while waiting for %s", what, cond)
		}
		time.Sleep(pollEvery) // the daemons converge on their own time
	}
}

// record logs a step's convergence time, also as one JSON line for tables.
func (s *sequence) record(t selftests.T, what string, d time.Duration) {
	t.Helper()
	s.Times[what] = d
	b, _ := json.Marshal(map[string]any{"mode": s.Mode.Name, "step": what, "ms": float64(d.Microseconds()) / 1000,
		"switch": switchNow()})
	t.Logf("%s converged in %v", what, d.Round(time.Millisecond))
	selftests.Record(t, "frr-json: %s", b)
}

func switchNow() string {
	if prog.sw == nil {
		return "absent"
	}
	v, err := prog.sw.Read()
	if err != nil {
		return "unreadable"
	}
	return v
}

// logDaemons prints the end of every daemon's log.
func (s *sequence) logDaemons(t selftests.T) {
	t.Helper()
	for _, r := range s.lab.Routers {
		for _, d := range []string{"zebra", "bgpd"} {
			lines := r.logTail(d, 12)
			t.Logf("router %s %s log, last %d lines:\n  %s", r.Name, d, len(lines), strings.Join(lines, "\n  "))
		}
	}
}

// flipper writes 1 and 0 to the switch in turn, each read back, until
// stopped.
type flipper struct {
	sw    *mcswitch.Switch
	quit  chan struct{}
	wg    sync.WaitGroup
	count atomic.Int64
	err   error
}

func startFlipper(sw *mcswitch.Switch) *flipper {
	f := &flipper{sw: sw, quit: make(chan struct{})}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for v := 1; ; v ^= 1 {
			select {
			case <-f.quit:
				return
			default:
			}
			if err := sw.Set(fmt.Sprint(v)); err != nil {
				f.err = err
				return
			}
			f.count.Add(1)
			time.Sleep(time.Millisecond) // pace: leave the CPUs to the daemons
		}
	}()
	return f
}

func (f *flipper) stop() (int64, error) {
	close(f.quit)
	f.wg.Wait()
	return f.count.Load(), f.err
}
