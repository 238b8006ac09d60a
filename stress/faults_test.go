// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nlmcast/ktap"
)

// fakeFailslab makes a directory with failslab's knobs, each set to a
// value of its own, and returns it with those values.
func fakeFailslab(t *testing.T) (string, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	before := map[string]string{}
	for _, k := range failslabKnobs {
		v := "before-" + k
		if k == "times" {
			v = "7"
		}
		before[k] = v
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir, before
}

func knobsAre(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		b, err := os.ReadFile(filepath.Join(dir, k))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(b)); got != v {
			t.Errorf("%s is %q, want %q (not put back)", k, got, v)
		}
	}
}

// failslab's settings are put back on every way out of its setup and
// use: after a run, and after a write that fails halfway through the
// setup (a knob made unwritable).
func TestFailslabRestores(t *testing.T) {
	dir, before := fakeFailslab(t)
	f := &failslab{mark: filepath.Join(dir, "mark"), saved: map[string]string{}}
	if err := f.setUp(dir); err != nil {
		t.Fatal(err)
	}
	knobsAre(t, dir, map[string]string{"probability": "0", "task-filter": "Y", "times": "1000000000"})
	if err := f.start(5); err != nil {
		t.Fatal(err)
	}
	knobsAre(t, dir, map[string]string{"probability": "5"})
	if err := f.close(); err != nil {
		t.Fatal(err)
	}
	knobsAre(t, dir, before)

	// "space" is set after probability, interval and times: its write
	// fails, once; the knobs set before it are put back.
	dir, before = fakeFailslab(t)
	failed := false
	f = &failslab{saved: map[string]string{}, write: func(name string, data []byte) error {
		if filepath.Base(name) == "space" && !failed {
			failed = true
			return os.ErrPermission
		}
		return os.WriteFile(name, data, 0)
	}}
	if err := f.setUp(dir); err == nil || !strings.Contains(err.Error(), "to space") {
		t.Fatalf("setUp with an unwritable knob: %v, want its error", err)
	}
	knobsAre(t, dir, before)
}

// A sender that cannot set up (here its CPU pinning fails, before it
// marks its thread) fails the fault mode at once, with nothing injected,
// and failslab's settings are put back. Before, the run waited for the
// mark that never came, until the case's deadline, and the settings
// stayed as the mode had set them (probability 0, task filter on). The
// failslab here is a directory of knobs (the host has none); on P-fault
// the same flag runs against the real one.
func TestSetupFailureEndsTheModeAtOnce(t *testing.T) {
	requireRoot(t)
	dir, before := fakeFailslab(t)
	mark := filepath.Join(dir, "mark")
	old := openInjection
	t.Cleanup(func() { openInjection = old })
	openInjection = func() (*failslab, string, error) {
		f := &failslab{mark: mark, saved: map[string]string{}}
		return f, "", f.setUp(dir)
	}
	start := time.Now()
	code, out := runProgram(t, "-t", "faults0", "-duration", "60s", "-idle", "16", "-deadline", "100s", "-inject-setup-failure")
	took := time.Since(start)
	if code != ktap.ExitFail || !strings.Contains(out, "not ok 1 "+program+".faults0") || strings.Contains(out, "TIMEOUT") {
		t.Fatalf("exit %d, want %d and a failure without TIMEOUT; output:\n%s", code, ktap.ExitFail, out)
	}
	if !strings.Contains(out, "sender S0: sched_setaffinity(CPU ") {
		t.Errorf("the failure does not name the sender's setup:\n%s", out)
	}
	if took > 30*time.Second {
		t.Errorf("the mode took %s to fail, with -duration 60s: it waited", took)
	}
	knobsAre(t, dir, before)
	if !strings.Contains(out, "failslab's settings put back: probability=before-probability interval=before-interval times=7") {
		t.Errorf("the restore is not said:\n%s", out)
	}
}
