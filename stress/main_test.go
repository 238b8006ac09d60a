// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

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
		if code, out := runProgram(t, args...); code != ktap.ExitFail || !strings.Contains(out, "usage:") {
			t.Errorf("%q: exit %d, want %d with usage; output:\n%s", args, code, ktap.ExitFail, out)
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
