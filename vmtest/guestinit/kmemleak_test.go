// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// fakeKmemleak records what is done to the detector, on a fake clock.
type fakeKmemleak struct {
	ops     []string
	clock   time.Time
	listing string
	fail    string // the command that fails with EPERM, as when kmemleak is off
}

func (f *fakeKmemleak) detector() *kmemleak {
	return &kmemleak{
		mount:   func() error { f.ops = append(f.ops, "mount"); return nil },
		unmount: func() error { f.ops = append(f.ops, "unmount"); return nil },
		write: func(c string) error {
			f.ops = append(f.ops, c+"@"+f.clock.Format("05.0"))
			if c == f.fail {
				return errors.New("operation not permitted")
			}
			return nil
		},
		read:  func() (string, error) { f.ops = append(f.ops, "read"); return f.listing, nil },
		now:   func() time.Time { return f.clock },
		sleep: func(d time.Duration) { f.clock = f.clock.Add(d) },
	}
}

const twoSuspects = `unreferenced object 0xffff888004a1c000 (size 232):
  comm "netlink_mcast_s", pid 95, jiffies 4294703338 (age 5.120s)
  backtrace:
    [<000000008c1d2e3f>] kmem_cache_alloc+0x16d/0x2e0
unreferenced object 0xffff888004a1d000 (size 64):
  comm "netlink_mcast_s", pid 97, jiffies 4294703340 (age 5.112s)
`

// After a program: a scan, the rest of kmemleak's minimum age since the
// program ended, a second scan, the listing; debugfs mounted only around it.
func TestKmemleakScansTwiceAfterTheMinimumAge(t *testing.T) {
	f := &fakeKmemleak{clock: time.Date(2026, 12, 4, 0, 0, 10, 0, time.UTC), listing: twoSuspects}
	k := f.detector()
	if err := k.before(); err != nil {
		t.Fatal(err)
	}
	ended := f.clock.Add(time.Second)
	f.clock = ended.Add(1500 * time.Millisecond) // the first scan starts 1.5 s after the end
	var steps []string
	n, err := k.after(ended, func(step string) { steps = append(steps, step) })
	if err != nil || n != 2 {
		t.Errorf("after: %d suspects, %v; want 2", n, err)
	}
	want := "mount clear@10.0 unmount mount scan@12.5 scan@16.0 read unmount"
	if got := strings.Join(f.ops, " "); got != want {
		t.Errorf("operations\n got %s\nwant %s", got, want)
	}
	if got := strings.Join(steps, ", "); got != "scan 1 of 2, scan 2 of 2" {
		t.Errorf("progress %q, want each scan announced", got)
	}
}

// A first scan that ends past the minimum age needs no wait.
func TestKmemleakNoWaitPastTheMinimumAge(t *testing.T) {
	f := &fakeKmemleak{clock: time.Date(2026, 12, 4, 0, 0, 10, 0, time.UTC)}
	k := f.detector()
	n, err := k.after(f.clock.Add(-kmemleakMinAge), func(string) {})
	if err != nil || n != 0 {
		t.Errorf("after: %d suspects, %v; want none", n, err)
	}
	if got, want := strings.Join(f.ops, " "), "mount scan@10.0 scan@10.0 read unmount"; got != want {
		t.Errorf("operations\n got %s\nwant %s", got, want)
	}
}

// A detector that refuses to scan (kmemleak turned itself off) is an error
// that names the command, and debugfs is unmounted all the same.
func TestKmemleakScanRefused(t *testing.T) {
	f := &fakeKmemleak{clock: time.Date(2026, 12, 4, 0, 0, 10, 0, time.UTC), fail: "scan"}
	_, err := f.detector().after(f.clock, func(string) {})
	if err == nil || !strings.Contains(err.Error(), "kmemleak: scan: operation not permitted") {
		t.Errorf("after: %v, want the refused scan", err)
	}
	if got := f.ops[len(f.ops)-1]; got != "unmount" {
		t.Errorf("last operation %q, want unmount", got)
	}
}

func TestCountSuspects(t *testing.T) {
	if n := countSuspects(twoSuspects); n != 2 {
		t.Errorf("countSuspects = %d, want 2", n)
	}
	if n := countSuspects(""); n != 0 {
		t.Errorf("countSuspects(empty) = %d, want 0", n)
	}
}

// fakeLeaks is a leakWatch with set answers.
type fakeLeaks struct {
	beforeErr error
	suspects  int
	calls     []string
}

func (f *fakeLeaks) before() error { f.calls = append(f.calls, "before"); return f.beforeErr }
func (f *fakeLeaks) after(_ time.Time, progress func(string)) (int, error) {
	f.calls = append(f.calls, "after")
	progress("scan 1 of 2")
	return f.suspects, nil
}

// The runner reports kmemleak's suspects after each program's result line,
// and says why when it could not check.
func TestRunAllReportsLeaks(t *testing.T) {
	dir := t.TempDir()
	programs := []string{writeScript(t, dir, "a_pass", "exit 0")}
	for _, tt := range []struct {
		name  string
		leaks *fakeLeaks
		want  string
		calls string
	}{
		{"suspects", &fakeLeaks{suspects: 3}, "ok 1 selftests: netlink_mcast: a_pass\nnlmc-vmtest: kmemleak scan 1 of 2 after a_pass\nnlmc-vmtest: kmemleak: 3 suspected leaks after a_pass (scanned in 0.0s)\n", "before after"},
		{"no clear", &fakeLeaks{beforeErr: errors.New("kmemleak: clear: operation not permitted")},
			"ok 1 selftests: netlink_mcast: a_pass\n", "before"},
	} {
		var tap syncBuffer
		r := &runner{tap: &tap, timeout: 10 * time.Second, killGrace: 100 * time.Millisecond, leaks: tt.leaks}
		r.runAll(programs)
		out := tap.String()
		if !strings.HasSuffix(out, tt.want) {
			t.Errorf("%s: TAP ends\n%s\nwant it to end\n%s", tt.name, out, tt.want)
		}
		if tt.leaks.beforeErr != nil && !strings.Contains(out, "nlmc-vmtest: no leak check for a_pass: kmemleak: clear: operation not permitted\n") {
			t.Errorf("%s: TAP\n%s\nwithout the reason there is no leak check", tt.name, out)
		}
		if got := strings.Join(tt.leaks.calls, " "); got != tt.calls {
			t.Errorf("%s: calls %q, want %q", tt.name, got, tt.calls)
		}
	}
}
