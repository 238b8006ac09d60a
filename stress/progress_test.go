// SPDX-License-Identifier: GPL-2.0

package main

import (
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// A progress line names the phase and, once the run has started, every
// sender's batches and the switch writer's writes.
func TestProgressLine(t *testing.T) {
	p := newProgress("setting up its namespaces and sockets")
	if l := p.line(); !regexp.MustCompile(`^progress: setting up its namespaces and sockets, \d+s into the mode$`).MatchString(l) {
		t.Errorf("before the run: %q", l)
	}
	s0, s1 := &sender{name: "S0"}, &sender{name: "S1"}
	s0.completed.Store(41)
	s1.completed.Store(7)
	var writes atomic.Int64
	writes.Store(1520)
	p.running([]*sender{s0, s1}, &writes)
	if l := p.line(); !regexp.MustCompile(`^progress: running, \d+s into the mode; batches S0 41, S1 7; switch writes 1520$`).MatchString(l) {
		t.Errorf("running: %q", l)
	}
	var nilProgress *progress
	nilProgress.set("judging") // a mode run without a reader
	nilProgress.running(nil, nil)
}

// A real mode prints progress lines while it runs, and its batches grow
// from line to line; -progress 0 prints none.
func TestModePrintsProgress(t *testing.T) {
	requireRoot(t)
	_, out := runProgram(t, "-t", "fixed0", "-duration", "3s", "-min-batches", "1", "-idle", "64", "-progress", "250ms")
	re := regexp.MustCompile(`(?m)^# fixed0: \S+ progress: running, \d+s into the mode; batches S0 (\d+), S1 (\d+)$`)
	m := re.FindAllStringSubmatch(out, -1)
	if len(m) < 3 {
		t.Fatalf("%d progress lines of a running 3 s mode at one per 250 ms:\n%s", len(m), out)
	}
	first, _ := strconv.Atoi(m[0][1])
	last, _ := strconv.Atoi(m[len(m)-1][1])
	if last <= first {
		t.Errorf("S0's batches went from %d to %d over the run:\n%s", first, last, out)
	}
	if !strings.Contains(out, "ok 1 "+program+".fixed0") {
		t.Errorf("fixed0 did not pass:\n%s", out)
	}
	_, out = runProgram(t, "-t", "fixed0", "-duration", "1s", "-min-batches", "1", "-idle", "16", "-progress", "0")
	if strings.Contains(out, " progress: ") {
		t.Errorf("-progress 0 printed progress lines:\n%s", out)
	}
}
