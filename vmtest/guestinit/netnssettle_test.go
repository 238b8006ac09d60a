// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fakeNetnsSettle is the limit and unshare(CLONE_NEWNET) of a kernel on
// which root's namespaces go after busy tries, on a clock the sleeps move.
type fakeNetnsSettle struct {
	limit  string
	writes []string
	busy   int   // tries that find a namespace still there
	other  error // what every try returns instead, if set
	tries  int
	clock  time.Time
}

func (f *fakeNetnsSettle) settle(timeout time.Duration) *netnsSettle {
	return &netnsSettle{
		read:  func() (string, error) { return f.limit, nil },
		write: func(v string) error { f.writes = append(f.writes, v); f.limit = v; return nil },
		unshare: func() error {
			f.tries++
			if f.other != nil {
				return f.other
			}
			if f.limit != "1" {
				return errors.New("tried with the limit at " + f.limit)
			}
			if f.tries <= f.busy {
				return unix.ENOSPC
			}
			return nil
		},
		now:     func() time.Time { return f.clock },
		sleep:   func(d time.Duration) { f.clock = f.clock.Add(d) },
		timeout: timeout,
	}
}

func TestNetnsSettleWaitsUntilUnshareSucceeds(t *testing.T) {
	f := &fakeNetnsSettle{limit: "1048576", busy: 3}
	settled, took, err := f.settle(time.Second).wait()
	if !settled || err != nil || f.tries != 4 || took != 3*netnsSettlePoll {
		t.Errorf("wait = %v, %v, %v after %d tries; want settled after 4 tries, 3 polls", settled, took, err, f.tries)
	}
	if !slices.Equal(f.writes, []string{"1", "1048576"}) {
		t.Errorf("limit writes %q, want 1 then the old value back", f.writes)
	}
}

func TestNetnsSettleGivesUpAtTheTimeout(t *testing.T) {
	f := &fakeNetnsSettle{limit: "77", busy: 1 << 30}
	settled, took, err := f.settle(time.Second).wait()
	if settled || err != nil || took < time.Second || took > time.Second+netnsSettlePoll {
		t.Errorf("wait = %v, %v, %v; want not settled, no error, at the 1 s timeout", settled, took, err)
	}
	if !slices.Equal(f.writes, []string{"1", "77"}) {
		t.Errorf("limit writes %q, want 1 then 77 back", f.writes)
	}
}

func TestNetnsSettleStopsOnAnotherError(t *testing.T) {
	f := &fakeNetnsSettle{limit: "5", other: unix.EPERM}
	settled, _, err := f.settle(time.Second).wait()
	if settled || !errors.Is(err, unix.EPERM) || f.tries != 1 {
		t.Errorf("wait = %v, %v after %d tries; want EPERM after one", settled, err, f.tries)
	}
	if !slices.Equal(f.writes, []string{"1", "5"}) {
		t.Errorf("limit writes %q, want 1 then 5 back", f.writes)
	}
}

// fakeSettle records when the runner waited.
type fakeSettle struct {
	calls   int
	settled bool
	err     error
}

func (f *fakeSettle) wait() (bool, time.Duration, error) {
	f.calls++
	return f.settled, 120 * time.Second, f.err
}

// The runner waits after every program, before the next; namespaces left
// at the timeout are reported for the host to fail the run.
func TestRunAllWaitsForNamespacesAfterEachProgram(t *testing.T) {
	dir := t.TempDir()
	programs := []string{writeScript(t, dir, "a", "exit 0"), writeScript(t, dir, "b", "exit 0")}
	for _, tt := range []struct {
		settle *fakeSettle
		want   []string
	}{
		{&fakeSettle{settled: true}, nil},
		{&fakeSettle{}, []string{
			"nlmc-vmtest: netns: namespaces still there 120s after a",
			"nlmc-vmtest: netns: namespaces still there 120s after b"}},
		{&fakeSettle{err: unix.EPERM}, []string{
			"nlmc-vmtest: no wait for a's network namespaces: operation not permitted",
			"nlmc-vmtest: no wait for b's network namespaces: operation not permitted"}},
	} {
		var tap syncBuffer
		r := &runner{tap: &tap, timeout: 10 * time.Second, killGrace: 100 * time.Millisecond, settle: tt.settle}
		r.runAll(programs)
		var markers []string
		for _, l := range strings.Split(tap.String(), "\n") {
			if strings.HasPrefix(l, "nlmc-vmtest: ") {
				markers = append(markers, l)
			}
		}
		if tt.settle.calls != 2 || !slices.Equal(markers, tt.want) {
			t.Errorf("%d waits, markers %q; want 2 waits and %q", tt.settle.calls, markers, tt.want)
		}
		if i, j := strings.Index(tap.String(), "ok 1 "), strings.Index(tap.String(), "# selftests: netlink_mcast: b"); tt.want != nil && !(i < strings.Index(tap.String(), tt.want[0]) && strings.Index(tap.String(), tt.want[0]) < j) {
			t.Errorf("the marker for a is not between its result and b's start:\n%s", tap.String())
		}
	}
}
