// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"strings"
	"testing"

	"nlmcast/vmtest/internal/protocol"
)

func TestTAPRelayPassesTAPAndTakesMarkers(t *testing.T) {
	var out, diag strings.Builder
	relay := &tapRelay{out: &out, diag: &diag}
	for _, line := range []string{
		protocol.InitStarted,
		"TAP version 13",
		"1..2",
		"# selftests: netlink_mcast: netlink_mcast_semantics",
		"# TAP version 13",
		"# ok 1 inner",
		"ok 1 selftests: netlink_mcast: netlink_mcast_semantics",
		"# selftests: netlink_mcast: netlink_mcast_switch",
		protocol.MarkerPrefix + "something odd",
		"",
	} {
		relay.line(line)
	}
	if !relay.opened || relay.exitSeen {
		t.Errorf("opened=%v exitSeen=%v, want opened and no exit yet", relay.opened, relay.exitSeen)
	}
	if relay.running != "netlink_mcast_switch" {
		t.Errorf("running = %q, want netlink_mcast_switch", relay.running)
	}
	relay.line("not ok 2 selftests: netlink_mcast: netlink_mcast_switch # exit=1")
	relay.line(protocol.TaintLine(0, 512))
	relay.line(protocol.ExitLine(1))

	wantOut := "TAP version 13\n1..2\n# selftests: netlink_mcast: netlink_mcast_semantics\n# TAP version 13\n# ok 1 inner\n" +
		"ok 1 selftests: netlink_mcast: netlink_mcast_semantics\n# selftests: netlink_mcast: netlink_mcast_switch\n\n" +
		"not ok 2 selftests: netlink_mcast: netlink_mcast_switch # exit=1\n"
	if out.String() != wantOut {
		t.Errorf("stdout:\n%s\nwant:\n%s", out.String(), wantOut)
	}
	if diag.String() != protocol.MarkerPrefix+"something odd\n" {
		t.Errorf("stderr = %q, want only the init's message", diag.String())
	}
	if !relay.taintSeen || relay.taintBefore != 0 || relay.taintAfter != 512 {
		t.Errorf("taint marker not taken: %+v", relay)
	}
	if !relay.exitSeen || relay.exitStatus != 1 || relay.running != "" {
		t.Errorf("after the exit marker: %+v", relay)
	}
}

func TestConsoleWatcher(t *testing.T) {
	var diag strings.Builder
	c := &consoleWatcher{diag: &diag}
	for _, line := range []string{
		"SeaBIOS (version 1.16.2-debian-1.16.2-1)",
		"Booting from ROM.." + protocol.InitStarted,
		protocol.MarkerPrefix + "mount proc on /proc: permission denied",
		"[    2.1] Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000100",
		"[    2.2] Kernel panic - second one",
	} {
		c.line(line)
	}
	if !c.initStarted {
		t.Error("init start marker not noticed")
	}
	if c.panicLine != "Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000100" {
		t.Errorf("panicLine = %q, want the first panic", c.panicLine)
	}
	if diag.String() != protocol.MarkerPrefix+"mount proc on /proc: permission denied\n" {
		t.Errorf("stderr without -v = %q, want only the init's message", diag.String())
	}
	if len(c.tail) != 6 || c.tail[1] != "Booting from ROM.." {
		t.Errorf("tail = %q, want 6 lines with the marker split off the second", c.tail)
	}
}

func TestConsoleWatcherVerboseAndTail(t *testing.T) {
	var diag strings.Builder
	c := &consoleWatcher{diag: &diag, verbose: true}
	for i := range consoleTailLines + 5 {
		c.line(fmt.Sprintf("kernel line %d", i))
	}
	if got := strings.Count(diag.String(), "\n"); got != consoleTailLines+5 {
		t.Errorf("-v copied %d lines, want %d", got, consoleTailLines+5)
	}
	if len(c.tail) != consoleTailLines || c.tail[0] != "kernel line 5" {
		t.Errorf("tail = %d lines starting %q; want the last %d", len(c.tail), c.tail[0], consoleTailLines)
	}
}
