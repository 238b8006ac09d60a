// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"strings"
	"testing"

	"nlmcast/selftests"
)

// needIP skips unless the test can run the ip monitor case: root and
// iproute2's ip.
func needIP(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces")
	}
	if findIP() == "" {
		t.Skip("no ip (Debian package iproute2)")
	}
	prog.sw = nil
}

// The case at 0 against the running kernel.
func TestIPMonitorCase(t *testing.T) {
	needIP(t)
	r := record(func(rt selftests.T) { runIPMonitor(rt, "0") })
	if r.failed || r.skipped != "" {
		t.Fatalf("failed=%v skipped=%q:\n%s", r.failed, r.skipped, r.text())
	}
	t.Logf("%s", r.text())
}

// -inject-duplicate: a copy of a notification that reaches both monitors
// and both harness sockets fails each of the four.
func TestIPMonitorInjectedDuplicateFails(t *testing.T) {
	needIP(t)
	injectDuplicate = true
	defer func() { injectDuplicate = false }()
	r := record(func(rt selftests.T) { runIPMonitor(rt, "0") })
	t.Logf("the diagnosis:\n%s", r.text())
	if !r.failed {
		t.Fatal("a duplicate in every observer passed")
	}
	for _, who := range []string{`socket "local" in netns S: 11 events, want 10`, `socket "foreign" in netns O (LISTEN_ALL_NSID): 11 events, want 10`,
		"ip monitor in S: 11 events, want 10", "ip monitor all-nsid in O: 11 events, want 10"} {
		if !strings.Contains(r.text(), who) {
			t.Errorf("the diagnosis does not say %q", who)
		}
	}
	if !strings.Contains(r.text(), "[nsid 7][NEXTHOP]id 5 (sent by portid") {
		t.Error("the foreign socket's copy is not shown with its sender")
	}
}
