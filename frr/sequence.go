// SPDX-License-Identifier: GPL-2.0

package main

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
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
	deathReportWithin = 5 * time.Second // a keeper's report of a daemon's exit
)

// step is one TAP result of a sequence.
type step struct {
	Name  string
	Run   func(s *sequence, t selftests.T)
	About string // for -l -v
}

var steps = []step{
	{"learn", (*sequence).learn, "an address and routes added in every router appear in its zebra, and every zebra equals its kernel's dump"},
	{"install", (*sequence).install, "every router's prefixes reach every other router's kernel from BGP with the right nexthop; every zebra equals its kernel"},
	{"ping", (*sequence).ping, "r3 and r1 reach each other's new IPv4 and IPv6 addresses from their loopbacks; every zebra still equals its kernel"},
	{"withdraw_addr", (*sequence).withdrawAddr, "every router's addresses deleted, links up: their prefixes gone from every kernel and zebra, nothing else"},
	{"withdraw_route", (*sequence).withdrawRoute, "routes deleted with RTM_DELROUTE, links up: gone from every kernel, and every zebra learns it only from the notification"},
	{"withdraw_link", (*sequence).withdrawLink, "every stub link down: the routes through it gone from every kernel and zebra"},
	{"reinstall", (*sequence).reinstall, "links up, addresses and routes added again: everything back everywhere, every zebra equal to its kernel"},
}

// sequence is one run of the steps in one mode, on a lab of its own
// (built by its first step, so that the daemons start, learn and peer in
// that mode too).
type sequence struct {
	Mode mode
	K    int // selects the sequence's prefixes
	// mu is held by a running step and by end: the lab is never removed
	// under a step (one the harness gave up on goes on until it notices),
	// and the fields below are the holder's.
	mu     sync.Mutex
	lab    *lab
	passed int // the last step that passed, -1 for none
	flip   *flipper
	Times  map[string]time.Duration
	// changed is when learn made its change: install is timed from it.
	changed time.Time
	// obsFrom is the observer's first line after the last marker.
	obsFrom int
	// carried are the BGP routes of learn's change that the observer
	// had not printed by learn's marker: install requires them.
	carried []event
	// linkLocals are the stub links' link-local addresses (withdraw_link).
	linkLocals []netip.Prefix
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
			// Each router's two daemons start one after the other.
			c.Timeout = routerCount*2*daemonStartWithin + sessionsWithin + 2*convergeWithin + 2*observerWithin
		}
		cs = append(cs, c)
	}
	return cs
}

// runStep runs step i. A step needs the state the one before it left, so
// it SKIPs unless that one passed; the first builds the lab, and the lab
// goes when a step fails or the last one ends.
func (s *sequence) runStep(t selftests.T, i int) {
	if prog.seqSkip != "" {
		t.Skipf("%s", prog.seqSkip)
	}
	if !selftests.InInitialUserNS() {
		// zebra and bgpd drop to user frr, whose directories the lab
		// chowns: a child user namespace maps no such user.
		t.Skipf("FRR's daemons run as user frr, which this user namespace does not map: run as root of the initial user namespace")
	}
	if s.Mode.Name != "mode0" && prog.sw == nil {
		t.Skipf("%s", skipReason())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i > 0 && (s.passed != i-1 || s.lab == nil) {
		t.Skipf("needs %s.%s to pass first (run the sequence in order)", s.Mode.Name, steps[i-1].Name)
	}
	// Deferred before begin, so that a lab whose start fails is removed
	// by the step that built it.
	defer func() {
		if s.passed != i || i == len(steps)-1 {
			s.endLocked(t)
		}
	}()
	if i == 0 {
		s.begin(t)
	}
	s.requireAlive(t)
	s.injectBefore(t, steps[i].Name)
	began := time.Now()
	steps[i].Run(s, t)
	ended := time.Now()
	s.requireAlive(t)
	if s.flip != nil {
		n, problem := judgeFlips(s.flip.landings(began, ended), began, ended, s.flip.failure())
		if problem != "" {
			t.Fatalf("%s", problem)
		}
		t.Logf("%d flips of net.core.netlink_route_mc_index landed during the step's %v, in each of its %d parts", n, ended.Sub(began).Round(time.Millisecond), flipParts)
	} else if prog.sw != nil {
		// A held switch that moved during the step ran the step in
		// another mode than its name says.
		if p := heldSwitchProblem(prog.sw.Read, s.Mode.Value); p != "" {
			t.Fatalf("%s", p)
		}
	}
	if !t.Failed() {
		s.passed = i
	}
}

// heldSwitchProblem reads the switch (read) at the end of a step of a
// mode that holds it at value, and says what is wrong if it moved or
// cannot be read.
func heldSwitchProblem(read func() (string, error), value string) string {
	v, err := read()
	switch {
	case err != nil:
		return fmt.Sprintf("net.core.netlink_route_mc_index unreadable at the end of the step (held at %s for the sequence): %v", value, err)
	case v != value:
		return fmt.Sprintf("net.core.netlink_route_mc_index reads %s at the end of the step, held at %s for the sequence: the step did not run in its mode", v, value)
	}
	return ""
}

// flipParts is how many equal parts a step of the flipping mode is cut
// into, each of which must have a flip landed in it: flips throughout the
// step, while its notifications are sent, not one at its edge.
const flipParts = 4

// judgeFlips says what is wrong with the flips that landed (written and
// read back, each at its time in landings) during a step of the flipping
// mode that ran from began to ended: none in one of its flipParts parts
// (the writer stalled or stopped; failure is its error, if it stopped).
// It returns how many landed.
func judgeFlips(landings []time.Time, began, ended time.Time, failure error) (int, string) {
	window := ended.Sub(began)
	part := window / flipParts
	var seen [flipParts]bool
	n := 0
	for _, l := range landings {
		if l.Before(began) || l.After(ended) || part <= 0 {
			continue
		}
		n++
		seen[min(int(l.Sub(began)/part), flipParts-1)] = true
	}
	var empty []string
	for k, ok := range seen {
		if !ok {
			to := time.Duration(k+1) * part
			if k == flipParts-1 {
				to = window
			}
			empty = append(empty, fmt.Sprintf("%v to %v", (time.Duration(k)*part).Round(time.Millisecond), to.Round(time.Millisecond)))
		}
	}
	if len(empty) == 0 {
		return n, ""
	}
	why := "the writer still runs"
	if failure != nil {
		why = "the writer stopped: " + failure.Error()
	}
	return n, fmt.Sprintf("%d flips of net.core.netlink_route_mc_index landed during the step's %v, none from %s after its start (%s): the step did not run under flips throughout",
		n, window.Round(time.Millisecond), strings.Join(empty, ", "), why)
}

func skipReason() string {
	if prog.swSkip != "" {
		return prog.swSkip
	}
	return mcswitch.NotSupported
}

// seqMu guards prog.seq, which the steps set and the teardown reads.
var seqMu sync.Mutex

// current is the sequence whose lab may be running, or nil.
func current() *sequence {
	seqMu.Lock()
	defer seqMu.Unlock()
	return prog.seq
}

// begin sets the mode and builds the lab.
func (s *sequence) begin(t selftests.T) {
	t.Helper()
	seqMu.Lock()
	prev := prog.seq
	prog.seq = s
	seqMu.Unlock()
	if prev != nil && prev != s {
		prev.end(t)
	}
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
	l, err := buildLab(prog.frr, prog.ip, daemonStartWithin, selftests.Done(t))
	if err != nil {
		t.Fatalf("building the lab: %v", err)
	}
	s.lab = l
	s.injectBefore(t, "")
	// Timed from the last daemon's start: the starts have bounds of their
	// own, and under emulation they can take most of sessionsWithin.
	s.converge(t, "start", "BGP sessions up, every router's loopbacks in every kernel", sessionsWithin, s.sessionsUp, time.Now())
	if s.obsFrom, _, err = l.obs.mark(observerWithin); err != nil {
		t.Fatalf("the observer: %v", err)
	}
}

// end waits for a step still running (one the harness gave up on ends
// once it notices) and then checks the idle subscribers, stops the
// flipper and removes the lab. t is nil on the program's way out
// (SIGTERM), when only cleanup is due and a lab that could not be removed
// is returned as the error.
func (s *sequence) end(t selftests.T) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endLocked(t)
}

func (s *sequence) endLocked(t selftests.T) error {
	seqMu.Lock()
	if prog.seq == s {
		prog.seq = nil
	}
	seqMu.Unlock()
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
		began := time.Now()
		ok, state, err := check()
		if err != nil {
			// A daemon that died makes vtysh fail before its keeper has
			// reported the exit (asynchronously, through its pipe): wait a
			// moment for that report, so the diagnosis names the death.
			if d := s.lab.deadWithin(deathReportWithin); d != "" {
				s.logDaemons(t)
				t.Fatalf("%s: %s, while waiting for: %s (%v)", what, d, cond, err)
			}
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
		select {
		case <-selftests.Done(t):
			t.Fatalf("%s: stopped (%s) while waiting for %s", what, stopReason(), cond)
		// The daemons converge on their own time. A check that takes long
		// (vtysh runs on a loaded or emulated CPU) waits as long again:
		// the harness takes at most half the CPU the daemons need.
		case <-time.After(max(pollEvery, time.Since(began))):
		}
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
	count atomic.Int64 // the flips written and read back
	mu    sync.Mutex
	err   error
	// landed is when each flip was read back, in order.
	landed []time.Time
}

// landings are the times of the flips read back from began to ended.
func (f *flipper) landings(began, ended time.Time) []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	lo, _ := slices.BinarySearchFunc(f.landed, began, func(l, t time.Time) int { return l.Compare(t) })
	hi, _ := slices.BinarySearchFunc(f.landed, ended, func(l, t time.Time) int { return l.Compare(t) })
	for hi < len(f.landed) && f.landed[hi].Equal(ended) {
		hi++
	}
	return slices.Clone(f.landed[lo:hi])
}

// failure is the error that stopped the writer, if any.
func (f *flipper) failure() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
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
				f.mu.Lock()
				f.err = err
				f.mu.Unlock()
				return
			}
			f.mu.Lock()
			f.landed = append(f.landed, time.Now())
			f.mu.Unlock()
			f.count.Add(1)
			time.Sleep(time.Millisecond) // pace: leave the CPUs to the daemons
		}
	}()
	return f
}

func (f *flipper) stop() (int64, error) {
	close(f.quit)
	f.wg.Wait()
	return f.count.Load(), f.failure()
}

// stopReason says why Done closed: the program is stopping, or the
// harness gave up on the step at its deadline.
func stopReason() string {
	if selftests.Interrupted() {
		return "the program is stopping"
	}
	return "past the step's deadline"
}
