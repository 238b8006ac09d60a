// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"nlmcast/ktap"
	"nlmcast/selftests"
)

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (namespaces, SO_RCVBUFFORCE, nsids)")
	}
}

func runProgram(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code := selftests.Run(suite, args, &out, &out)
	return code, out.String()
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-mode", "fixed2"}, {"-duration", "0s"}, {"-duration", "10s", "-max-duration", "5s"}, {"-senders", "0"}, {"-min-batches", "-1"},
		{"-min-writes", "-1"}, {"-cycles", "0"}, {"-idle", "-1"}, {"-netns-pace", "0s"}, {"extra"}, {"-nosuchflag"},
	} {
		var out, errs bytes.Buffer
		code := selftests.Run(suite, args, &out, &errs)
		if code != ktap.ExitFail || out.Len() > 0 || !strings.HasPrefix(errs.String(), program+": ") || !strings.Contains(errs.String(), "\nusage: "+program) {
			t.Errorf("%q: exit %d, want %d, nothing on stdout, the program's name and the usage on stderr; stdout:\n%s\nstderr:\n%s", args, code, ktap.ExitFail, out.String(), errs.String())
		}
	}
	code, out := runProgram(t, "-l")
	if code != ktap.ExitPass {
		t.Errorf("-l: exit %d", code)
	}
	for _, m := range modes {
		if !strings.Contains(out, m.name+"\n") {
			t.Errorf("-l does not list %s:\n%s", m.name, out)
		}
	}
	if code, _ := runProgram(t, "-h"); code != ktap.ExitPass {
		t.Errorf("-h: exit %d", code)
	}
}

// TestFixed0 runs the real thing for two seconds on the running kernel:
// every stable receiver must be exact.
func TestFixed0(t *testing.T) {
	requireRoot(t)
	code, out := runProgram(t, "-mode", "fixed0", "-duration", "2s", "-min-batches", "1", "-idle", "64")
	if code != ktap.ExitPass || !strings.Contains(out, "ok 1 "+program+".fixed0") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	if !strings.Contains(out, "\n# stress-json: {\"mode\":\"fixed0\",\"checks\":\"pass\"") {
		t.Errorf("no JSON report line:\n%s", out)
	}
}

// TestInjectedDuplicateFails proves the checker fires on a real run: one
// extra copy of a notification in the stable receivers' queues fails the
// mode with a duplicate diagnosis.
func TestInjectedDuplicateFails(t *testing.T) {
	requireRoot(t)
	code, out := runProgram(t, "-mode", "fixed0", "-duration", "2s", "-min-batches", "1", "-idle", "64", "-inject-duplicate")
	if code != ktap.ExitFail || !strings.Contains(out, "not ok 1 "+program+".fixed0") {
		t.Fatalf("exit %d, want %d; output:\n%s", code, ktap.ExitFail, out)
	}
	for _, want := range []string{"self-test: injected sender S0", "local-plain", "foreign-all-nsid-mapped", "duplicate: type 20", "received 2 times, sent 1 times"} {
		if !strings.Contains(out, want) {
			t.Errorf("diagnosis lacks %q:\n%s", want, out)
		}
	}
}

// selfTest runs fixed0 for two seconds with one of the checker's
// self-tests and returns the output, which must be a failure.
func selfTest(t *testing.T, flag string) string {
	t.Helper()
	requireRoot(t)
	code, out := runProgram(t, "-t", "fixed0", "-duration", "2s", "-min-batches", "1", "-idle", "64", flag)
	if code != ktap.ExitFail || !strings.Contains(out, "not ok 1 "+program+".fixed0") {
		t.Fatalf("%s: exit %d, want %d; output:\n%s", flag, code, ktap.ExitFail, out)
	}
	return out
}

// The checker's self-tests each fail fixed0 with their diagnosis: a
// message a stable receiver's drainer threw away is a loss, named, and so
// is one an option-churn socket's drainer threw away (their transcripts
// are exact); a
// message in an idle subscriber fails the emptiness check; an overrun of
// a stable receiver (without injected allocation failures, a failure of
// the run's design) fails the mode.
func TestInjectedFaultsFail(t *testing.T) {
	for flag, wants := range map[string][]string{
		"-inject-loss": {"self-test: the drainer of local-plain", "self-test: the drainer of churn-option-local",
			`local-plain socket "local-plain-0" in netns S0, from sender S0 (no nsid): lost: `,
			`" in netns S0, from sender S0 (no nsid): lost: `},
		"-inject-idle":    {"self-test: sent a message to idle subscriber", "idle subscriber: socket \"I0-idle-0\"", "must receive nothing, but holds type 1 seq 1"},
		"-inject-overrun": {"self-test: made local-plain", "ENOBUFS at #", "though no allocation was made to fail"},
	} {
		t.Run(flag, func(t *testing.T) {
			out := selfTest(t, flag)
			for _, want := range wants {
				if !strings.Contains(out, want) {
					t.Errorf("diagnosis lacks %q:\n%s", want, out)
				}
			}
			if flag == "-inject-loss" && !regexp.MustCompile(`churn-option-local socket "S0-churn-\d+" in netns S0, from sender S0 \(no nsid\): lost: `).MatchString(out) {
				t.Errorf("the option-churn socket's loss is not diagnosed:\n%s", out)
			}
		})
	}
}

// Flags that would make a run prove less than its name says are said.
func TestWeakFlagsAreSaid(t *testing.T) {
	c := config{senders: 1, minBatches: 0, minWrites: 0, idle: 0}
	got := strings.Join(c.weaknesses(), "\n")
	for _, want := range []string{"-senders 1", "-min-batches 0", "-min-writes 0", "-idle 0"} {
		if !strings.Contains(got, want) {
			t.Errorf("weaknesses lack %q: %q", want, got)
		}
	}
	if code, out := runProgram(t, "-duration", "1000000h"); code != ktap.ExitFail || !strings.Contains(out, "at most 168h0m0s") {
		t.Errorf("-duration 1000000h: exit %d, output:\n%s", code, out)
	}
}

// A mode in which every check passed but a count minimum was not reached
// SKIPs, naming the minimum and the rate reached; with a problem it fails.
func TestShortfallSkips(t *testing.T) {
	var o outcome
	if o.verdict() != "pass" {
		t.Errorf("empty outcome: %s", o.verdict())
	}
	o.short("sender S0 completed 85 batches in 121.0s (0.7/s; -max-duration 2m1s), fewer than -min-batches 100")
	if o.verdict() != "short" {
		t.Errorf("with a shortfall: %s, want short", o.verdict())
	}
	if r := skipReason(o.shortfalls); !strings.Contains(r, "proved less than asked") || !strings.Contains(r, "(0.7/s;") {
		t.Errorf("skip reason %q", r)
	}
	o.fail("lost a message")
	if o.verdict() != "fail" {
		t.Errorf("with a problem and a shortfall: %s, want fail", o.verdict())
	}
}

// On the running kernel: -min-batches no sender can reach SKIPs fixed0,
// with the rate reached (before, it failed it).
func TestImpossibleMinimumSkips(t *testing.T) {
	requireRoot(t)
	code, out := runProgram(t, "-t", "fixed0", "-duration", "1s", "-max-duration", "2s", "-min-batches", "100000000", "-idle", "16")
	if code != ktap.ExitSkip || !regexp.MustCompile(`ok 1 `+program+`\.fixed0 # SKIP every check passed, but the run proved less than asked \(a slow machine\?\): sender S0 completed \d+ batches in [0-9.]+s \([0-9.]+/s; -max-duration 2s\), fewer than -min-batches 100000000`).MatchString(out) {
		t.Fatalf("exit %d, want %d and a SKIP naming the minimum; output:\n%s", code, ktap.ExitSkip, out)
	}
	if !strings.Contains(out, `"checks":"short"`) || !strings.Contains(out, `"shortfalls":["sender S0 completed`) {
		t.Errorf("the JSON line does not say short:\n%s", out)
	}
}

// KSFT_MACHINE_SLOW=yes doubles the default -max-duration, and
// kselftest_override_timeout caps it so that the six modes fit.
func TestSlowMachineAndTimeout(t *testing.T) {
	t.Setenv("KSFT_MACHINE_SLOW", "yes")
	c := config{duration: 60 * time.Second, senders: 2, cycles: 4, switchCycles: 16, nsPace: time.Millisecond, failPercent: 5}
	if err := c.check(); err != nil || c.maxDuration != 8*time.Minute {
		t.Errorf("KSFT_MACHINE_SLOW=yes: -max-duration %s (%v), want 8m", c.maxDuration, err)
	}
	t.Setenv("KSFT_MACHINE_SLOW", "")
	t.Setenv("kselftest_override_timeout", "900")
	c.maxDuration = 0
	if err := c.check(); err != nil || c.maxDuration != 90*time.Second || !strings.Contains(strings.Join(c.weaknesses(), "\n"), "kselftest_override_timeout=15m0s") {
		t.Errorf("kselftest_override_timeout=900: -max-duration %s (%v), weaknesses %q; want 90s (900 s / 6 modes - 60 s)", c.maxDuration, err, c.weaknesses())
	}
	t.Setenv("kselftest_override_timeout", "300")
	c.maxDuration, c.capped = 0, ""
	if err := c.check(); err != nil || c.maxDuration != c.duration || !strings.Contains(c.capped, "does not fit") {
		t.Errorf("kselftest_override_timeout=300: -max-duration %s (%v), %q", c.maxDuration, err, c.capped)
	}
}
