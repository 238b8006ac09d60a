// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"nlmcast/ktap"
	"nlmcast/selftests/netns"
)

// syncBuffer is a TAP sink that the copy goroutine and the test can share.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// writeScript creates an executable shell script standing in for a suite.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunAllWritesKselftestTAP(t *testing.T) {
	dir := t.TempDir()
	programs := []string{
		writeScript(t, dir, "a_pass", `echo out; echo err >&2; echo "args: $#:$1:$2"; exit 0`),
		writeScript(t, dir, "b_skip", `echo "ok 1 inner # SKIP"; exit 4`),
		writeScript(t, dir, "c_fail", `printf 'no newline'; exit 3`),
	}
	var tap syncBuffer
	r := &runner{tap: &tap, args: []string{"x y", "z"}, timeout: 10 * time.Second, killGrace: 100 * time.Millisecond}

	status := r.runAll(programs)

	want := strings.Join([]string{
		"TAP version 13",
		"1..3",
		"# selftests: netlink_mcast: a_pass",
		"# out",
		"# err",
		"# args: 2:x y:z",
		"ok 1 selftests: netlink_mcast: a_pass",
		"# selftests: netlink_mcast: b_skip",
		"# ok 1 inner # SKIP",
		"ok 2 selftests: netlink_mcast: b_skip # SKIP",
		"# selftests: netlink_mcast: c_fail",
		"# no newline",
		"not ok 3 selftests: netlink_mcast: c_fail # exit=3",
	}, "\n") + "\n"
	if got := tap.String(); got != want {
		t.Errorf("TAP:\n%s\nwant:\n%s", got, want)
	}
	if status != ktap.ExitFail {
		t.Errorf("status = %d, want %d", status, ktap.ExitFail)
	}
}

func TestRunOneTimeoutEscalatesToSIGKILL(t *testing.T) {
	dir := t.TempDir()
	stubborn := writeScript(t, dir, "stubborn", `trap '' TERM; echo started; while :; do sleep 1; done`)
	var tap syncBuffer
	r := &runner{tap: &tap, timeout: time.Second, killGrace: 100 * time.Millisecond}

	start := time.Now()
	res := r.runOne(stubborn)
	elapsed := time.Since(start)

	if !res.timedOut {
		t.Errorf("result = %+v, want timedOut", res)
	}
	if res.status != 128+9 {
		t.Errorf("status = %d, want %d (SIGKILL)", res.status, 128+9)
	}
	if elapsed > 5*time.Second {
		t.Errorf("took %v; the SIGKILL should have ended it after about 1.2s", elapsed)
	}
	if line := resultLine(1, "stubborn", res, r.timeout); line != "not ok 1 selftests: netlink_mcast: stubborn # TIMEOUT 1 seconds" {
		t.Errorf("result line = %q", line)
	}
	if !strings.Contains(tap.String(), "# started\n") {
		t.Errorf("output before the timeout was lost: %q", tap.String())
	}
}

func TestRunOneTimeoutEndsOnFirstSIGTERM(t *testing.T) {
	dir := t.TempDir()
	sleeper := writeScript(t, dir, "sleeper", `exec sleep 60`)
	r := &runner{tap: &syncBuffer{}, timeout: time.Second, killGrace: 10 * time.Second}

	start := time.Now()
	res := r.runOne(sleeper)

	if !res.timedOut || res.status != 128+15 {
		t.Errorf("result = %+v, want timed out by SIGTERM (status 143)", res)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("took %v; the first SIGTERM should have ended it", elapsed)
	}
}

func TestRunOneKillsLeftoverHelpers(t *testing.T) {
	dir := t.TempDir()
	// The helper inherits the output pipe; without the group kill the runner
	// would wait for it to close.
	forker := writeScript(t, dir, "forker", `sleep 60 & echo forked; exit 0`)
	r := &runner{tap: &syncBuffer{}, timeout: 10 * time.Second, killGrace: time.Second}

	start := time.Now()
	res := r.runOne(forker)

	if res.timedOut || res.status != 0 {
		t.Errorf("result = %+v, want a clean pass", res)
	}
	if elapsed := time.Since(start); elapsed > outputDrainTimeout+time.Second {
		t.Errorf("took %v; the leftover helper kept the runner waiting", elapsed)
	}
}

func TestRunOneReportsUnrunnableProgram(t *testing.T) {
	var tap syncBuffer
	r := &runner{tap: &tap, timeout: time.Second, killGrace: time.Second}
	res := r.runOne(filepath.Join(t.TempDir(), "missing"))
	if res.status != 126 {
		t.Errorf("status = %d, want 126", res.status)
	}
	if !strings.HasPrefix(tap.String(), "# cannot run: ") {
		t.Errorf("TAP = %q, want a '# cannot run' comment", tap.String())
	}
}

func TestResultLine(t *testing.T) {
	tests := []struct {
		res  result
		want string
	}{
		{result{status: 0}, "ok 2 selftests: netlink_mcast: p"},
		{result{status: 4}, "ok 2 selftests: netlink_mcast: p # SKIP"},
		{result{status: 1}, "not ok 2 selftests: netlink_mcast: p # exit=1"},
		{result{status: 139}, "not ok 2 selftests: netlink_mcast: p # exit=139"},
		{result{status: 143, timedOut: true}, "not ok 2 selftests: netlink_mcast: p # TIMEOUT 300 seconds"},
	}
	for _, tt := range tests {
		if got := resultLine(2, "p", tt.res, 300*time.Second); got != tt.want {
			t.Errorf("resultLine(%+v) = %q, want %q", tt.res, got, tt.want)
		}
	}
}

func TestOverallStatus(t *testing.T) {
	pass, skip, fail := result{status: 0}, result{status: 4}, result{status: 1}
	timeout := result{status: 0, timedOut: true}
	tests := []struct {
		name    string
		results []result
		want    int
	}{
		{"nothing ran", nil, ktap.ExitFail},
		{"all pass", []result{pass, pass}, ktap.ExitPass},
		{"pass and skip", []result{skip, pass}, ktap.ExitPass},
		{"all skip", []result{skip, skip}, ktap.ExitSkip},
		{"one fails", []result{pass, fail, skip}, ktap.ExitFail},
		{"timeout with status 0", []result{timeout}, ktap.ExitFail},
	}
	for _, tt := range tests {
		if got := overallStatus(tt.results); got != tt.want {
			t.Errorf("%s: overallStatus = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestRunAllPerProgramArgs(t *testing.T) {
	dir := t.TempDir()
	programs := []string{
		writeScript(t, dir, "a", `echo "args: $*"`),
		writeScript(t, dir, "b", `echo "args: $*"`),
	}
	var tap syncBuffer
	r := &runner{tap: &tap, args: []string{"-v"}, progArgs: map[string][]string{"b": {"-duration", "10s"}},
		timeout: 10 * time.Second, killGrace: 100 * time.Millisecond}
	r.runAll(programs)
	for _, want := range []string{"# args: -v\n# ok 1", "# args: -v -duration 10s\n"} {
		if !strings.Contains(strings.ReplaceAll(tap.String(), "\nok 1", "\n# ok 1"), want) {
			t.Errorf("TAP lacks %q:\n%s", want, tap.String())
		}
	}
}

// With netns, a program runs in a namespace other than the runner's, with lo
// up; without, in the runner's.
func TestRunOneNetns(t *testing.T) {
	// The runner's own namespace is its threads': /proc/self names the main
	// thread's, which another test may have left in a namespace of its own.
	var own string
	if err := netns.OnThread(func() (err error) {
		own, err = os.Readlink("/proc/thread-self/ns/net")
		return err
	}); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	prog := writeScript(t, dir, "where", `readlink /proc/self/ns/net; grep -c ' lo$' /proc/self/net/if_inet6 || true`)
	for _, netns := range []bool{false, true} {
		var tap syncBuffer
		r := &runner{tap: &tap, netns: netns, timeout: 10 * time.Second, killGrace: 100 * time.Millisecond}
		res := r.runOne(prog)
		out := strings.Split(strings.TrimSpace(tap.String()), "\n")
		if netns && res.status == 126 && strings.Contains(tap.String(), "operation not permitted") {
			t.Skip("needs CAP_SYS_ADMIN for a network namespace")
		}
		if res.status != 0 || len(out) != 2 {
			t.Fatalf("netns=%v: status %d, output %q", netns, res.status, out)
		}
		if in := out[0] == "# "+own; in == netns {
			t.Errorf("netns=%v: the program ran in %s, the runner is in %s", netns, out[0], own)
		}
		if netns && out[1] == "# 0" {
			t.Errorf("lo is not up in the program's namespace (no ::1 on lo)")
		}
	}
}
