// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"nlmcast/selftests/kmsg"
	"nlmcast/vmtest/internal/protocol"
)

func TestVerdict(t *testing.T) {
	type state struct {
		initStarted, opened, exitSeen bool
		exitStatus                    int
		running, panicLine            string
		stopCause, qemuErr            error
	}
	tests := []struct {
		name        string
		s           state
		wantStatus  int
		wantProblem string // substring; empty means no problem
	}{
		{"all passed", state{initStarted: true, opened: true, exitSeen: true, exitStatus: 0}, 0, ""},
		{"a failure", state{initStarted: true, opened: true, exitSeen: true, exitStatus: 1}, 1, ""},
		{"all skipped", state{initStarted: true, opened: true, exitSeen: true, exitStatus: 4}, 4, ""},
		{"odd status", state{initStarted: true, opened: true, exitSeen: true, exitStatus: 7}, 1, "exit status 7"},
		{"panic beats status", state{initStarted: true, opened: true, exitSeen: true, panicLine: "Kernel panic - not syncing: oops"}, 1, "panicked: Kernel panic - not syncing: oops"},
		{"never reached init", state{panicLine: "", qemuErr: errors.New("exit status 1")}, 1, "never reached /init (QEMU: exit status 1)"},
		{"channel never opened", state{initStarted: true}, 1, "could not open its TAP channel"},
		{"init died quietly", state{initStarted: true, opened: true}, 1, "without reporting an exit status"},
		{"hung in a test", state{initStarted: true, opened: true, running: "netlink_mcast_switch", stopCause: errTimedOut}, 1, "timed out after 5s (-timeout): QEMU killed; the guest was running netlink_mcast_switch"},
		{"hung in boot", state{stopCause: errTimedOut}, 1, "never reached /init"},
		{"interrupted", state{initStarted: true, stopCause: interruptedError{syscall.SIGTERM}}, 143, "interrupted by SIGTERM: QEMU killed"},
	}
	for _, tt := range tests {
		o := bootOutcome{
			stopCause: tt.s.stopCause,
			qemuErr:   tt.s.qemuErr,
			timeout:   5 * time.Second,
			console:   &consoleWatcher{initStarted: tt.s.initStarted, panicLine: tt.s.panicLine},
			tap:       &tapRelay{opened: tt.s.opened, exitSeen: tt.s.exitSeen, exitStatus: tt.s.exitStatus, running: tt.s.running},
		}
		status, problem := verdict(o)
		if status != tt.wantStatus {
			t.Errorf("%s: status %d, want %d", tt.name, status, tt.wantStatus)
		}
		if (tt.wantProblem == "") != (problem == "") || !strings.Contains(problem, tt.wantProblem) {
			t.Errorf("%s: problem %q, want it to contain %q", tt.name, problem, tt.wantProblem)
		}
	}
}

func TestVerdictKernelReports(t *testing.T) {
	warning := kmsg.Report{Kind: "WARNING", Lines: []string{"WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x0/0x10"}}
	taint := kmsg.TaintReports(0, 512)
	tests := []struct {
		name       string
		exit       int
		reports    []kmsg.Report
		wantStatus int
		want       string
	}{
		{"clean pass", 0, nil, 0, ""},
		{"warning after a pass", 0, []kmsg.Report{warning}, 1,
			"FAIL: the guest kernel logged 1 kernel report (WARNING), although every program passed"},
		{"taint after a skip", 4, taint, 1,
			"FAIL: the guest kernel logged 1 kernel report (taint: W (warning)), although every program skipped"},
		{"both after a failure", 1, append([]kmsg.Report{warning}, taint...), 1,
			"FAIL: the guest kernel logged 2 kernel reports (WARNING, taint: W (warning)), and a program failed"},
	}
	for _, tt := range tests {
		o := bootOutcome{
			console: &consoleWatcher{initStarted: true},
			tap:     &tapRelay{opened: true, exitSeen: true, exitStatus: tt.exit},
			reports: tt.reports,
		}
		status, problem := verdict(o)
		if status != tt.wantStatus || problem != tt.want {
			t.Errorf("%s: verdict = %d, %q; want %d, %q", tt.name, status, problem, tt.wantStatus, tt.want)
		}
	}
}

func TestKernelReportsFromConsoleAndTaint(t *testing.T) {
	c := &consoleWatcher{diag: io.Discard}
	tap := &tapRelay{out: io.Discard, diag: io.Discard}
	for _, l := range []string{
		"[    3.100000] ------------[ cut here ]------------",
		"[    3.100001] WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x0/0x10",
		"[    3.100002] ---[ end trace 0000000000000000 ]---",
		protocol.MarkerPrefix + "WARNING: CPU: 0 PID: 1 at a marker line",
	} {
		c.line(l)
	}
	tap.line("# WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x0/0x10")
	tap.line(protocol.TaintLine(512, 512|64))
	got, notes, _ := kernelReports(c, tap)
	if len(got) != 2 || got[0].Kind != "WARNING" || got[1].String() != "taint: U (user request)" {
		t.Errorf("kernelReports = %q, want the console's WARNING and taint U", got)
	}
	if want := `new kernel report (not in the known list): WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x0/0x10; fingerprint "WARNING at net/netlink/af_netlink.c:1500: do_one_broadcast"`; len(notes) != 1 || notes[0] != want {
		t.Errorf("kernelReports notes = %q, want [%q]", notes, want)
	}
}

// A known report on the console (one the unpatched kernel gave) is noted
// and fails nothing; a new one beside it still fails the run.
func TestKnownReportOnTheConsole(t *testing.T) {
	data, err := os.ReadFile("../selftests/kmsg/testdata/u-kcsan-strict-poll_schedule_timeout-pollwake.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, extra := range [][]string{nil, {
		"[  130.000000] ------------[ cut here ]------------",
		"[  130.000001] WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x0/0x10",
		"[  130.000002] ---[ end trace 0000000000000000 ]---",
	}} {
		c := &consoleWatcher{diag: io.Discard}
		for _, l := range append(strings.Split(strings.TrimRight(string(data), "\n"), "\n"), extra...) {
			c.line(l)
		}
		reports, notes, _ := kernelReports(c, &tapRelay{out: io.Discard, diag: io.Discard})
		if len(notes) == 0 || !strings.HasPrefix(notes[0], "known kernel report (not the series'): BUG: KCSAN: data-race in poll_schedule_timeout.constprop.0 / pollwake; fingerprint ") {
			t.Errorf("notes %q, want the known KCSAN report first", notes)
		}
		status, problem := verdict(bootOutcome{
			console: c,
			tap:     &tapRelay{opened: true, exitSeen: true, exitStatus: 0},
			reports: reports,
		})
		switch {
		case extra == nil && (status != 0 || problem != "" || len(reports) != 0):
			t.Errorf("known report alone: verdict %d, %q, reports %q; want a pass", status, problem, reports)
		case extra != nil && (status != 1 || len(reports) != 1 || reports[0].Kind != "WARNING"):
			t.Errorf("known report and a WARNING: verdict %d, %q, reports %q; want a failure for the WARNING", status, problem, reports)
		}
	}
}

// A console that dropped or suppressed messages inside a report fails the
// run, also when the report is a known one and every program passed: the
// report is not whole. Outside a report such a note changes nothing.
// Before, the known KCSAN report with a drop inside passed.
func TestConsoleGapInsideAReportFails(t *testing.T) {
	data, err := os.ReadFile("../selftests/kmsg/testdata/u-kcsan-strict-poll_schedule_timeout-pollwake.txt")
	if err != nil {
		t.Fatal(err)
	}
	capture := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	for _, tt := range []struct {
		name  string
		lines []string
		fails bool
	}{
		{"dropped, inside", append(append(append([]string{}, capture[:8]...), "** 12 printk messages dropped **"), capture[8:]...), true},
		{"suppressed, inside", append(append(append([]string{}, capture[:8]...), "[  100.000000] net_ratelimit: 5 callbacks suppressed"), capture[8:]...), true},
		{"dropped, outside", append([]string{"** 12 printk messages dropped **", "[  100.000000] net_ratelimit: 5 callbacks suppressed"}, capture...), false},
	} {
		c := &consoleWatcher{diag: io.Discard}
		for _, l := range tt.lines {
			c.line(l)
		}
		reports, notes, gaps := kernelReports(c, &tapRelay{out: io.Discard, diag: io.Discard})
		if len(reports) != 0 || len(notes) != 1 || !strings.HasPrefix(notes[0], "known kernel report") {
			t.Errorf("%s: reports %q, notes %q; want the known report", tt.name, reports, notes)
		}
		status, problem := verdict(bootOutcome{
			console: c,
			tap:     &tapRelay{opened: true, exitSeen: true, exitStatus: 0},
			reports: reports,
			gaps:    gaps,
		})
		if tt.fails != (status == 1) || tt.fails != strings.Contains(problem, "lost messages inside a kernel report") {
			t.Errorf("%s: verdict %d, %q; want failing: %v", tt.name, status, problem, tt.fails)
		}
	}
}

// A KCSAN race with no networking frame on the console (a TLB flush's, as
// netdev CI's P-kcsan run once logged) is noted and fails nothing; the
// same race reached from a netlink call fails the run.
func TestKCSANRaceOutsideNetworkingOnTheConsole(t *testing.T) {
	race := []string{
		"[  211.402117] ==================================================================",
		"[  211.402117] BUG: KCSAN: data-race in _find_next_and_bit+0x43/0xca",
		"[  211.402117] ",
		"[  211.402117] race at unknown origin, with read to 0xffff888004b1a5c0 of 8 bytes by task 402 on cpu 2:",
		"[  211.402117]  _find_next_and_bit+0x43/0xca",
		"[  211.402117]  smp_call_function_many_cond+0x2b4/0x5d2",
		"[  211.402117]  on_each_cpu_cond_mask+0x3c/0x70",
		"[  211.402117]  flush_tlb_mm_range+0x19c/0x25a",
		"[  211.402117]  do_madvise+0x9b5/0x1224",
		"[  211.402117]  __x64_sys_madvise+0x2e/0x3a",
		"[  211.402117]  do_syscall_64+0x35/0x43",
		"[  211.402117] ",
		"[  211.402117] value changed: 0x0000000000000006 -> 0x0000000000000004",
		"[  211.402117] ",
		"[  211.402117] Reported by Kernel Concurrency Sanitizer on:",
		"[  211.402117] CPU: 2 PID: 402 Comm: netlink_mcast_s Not tainted 6.1.192 #1",
		"[  211.402117] ==================================================================",
	}
	for _, viaNetlink := range []bool{false, true} {
		c := &consoleWatcher{diag: io.Discard}
		for _, l := range race {
			if viaNetlink {
				l = strings.Replace(l, "do_madvise", "netlink_sendmsg", 1)
			}
			c.line(l)
		}
		reports, notes, _ := kernelReports(c, &tapRelay{out: io.Discard, diag: io.Discard})
		status, problem := verdict(bootOutcome{console: c, tap: &tapRelay{opened: true, exitSeen: true, exitStatus: 0}, reports: reports})
		switch {
		case !viaNetlink && (status != 0 || len(reports) != 0 || len(notes) != 1 || !strings.HasPrefix(notes[0], "KCSAN report outside networking code")):
			t.Errorf("outside networking: verdict %d, %q, reports %q, notes %q; want a pass and one note", status, problem, reports, notes)
		case viaNetlink && (status != 1 || len(reports) != 1):
			t.Errorf("through netlink_sendmsg: verdict %d, %q, reports %q; want a failure", status, problem, reports)
		}
	}
}

// Suspects kmemleak listed after a program fail the run: through the
// console's report of them, or, where the console showed none, through a
// report vmtest makes of the init's count.
func TestKmemleakSuspectsFailTheRun(t *testing.T) {
	for _, tt := range []struct {
		name    string
		console []string
		count   int
		want    string // the one report's String
	}{
		{"console and count", []string{"[   61.101017] kmemleak: 1 new suspected memory leaks (see /sys/kernel/debug/kmemleak)"}, 1,
			"kmemleak: 1 new suspected memory leaks (see /sys/kernel/debug/kmemleak)"},
		{"count alone", nil, 2, "kmemleak listed 2 suspected leaks after netlink_mcast_semantics, and the console showed none"},
		{"none", nil, 0, ""},
	} {
		c := &consoleWatcher{diag: io.Discard}
		for _, l := range tt.console {
			c.line(l)
		}
		var diag strings.Builder
		tap := &tapRelay{out: io.Discard, diag: &diag, opened: true, exitSeen: true}
		tap.line(protocol.KmemleakLine("netlink_mcast_semantics", tt.count, time.Second))
		if !strings.Contains(diag.String(), "suspected leaks after netlink_mcast_semantics") {
			t.Errorf("%s: the count is not shown: %q", tt.name, diag.String())
		}
		reports, _, _ := kernelReports(c, tap)
		status, problem := verdict(bootOutcome{console: c, tap: tap, reports: reports})
		switch {
		case tt.want == "" && (status != 0 || len(reports) != 0):
			t.Errorf("%s: verdict %d, %q, reports %q; want a pass", tt.name, status, problem, reports)
		case tt.want != "" && (status != 1 || len(reports) != 1 || reports[0].String() != tt.want):
			t.Errorf("%s: verdict %d, %q, reports %q; want a failure for %q", tt.name, status, problem, reports, tt.want)
		}
	}
}

// Network namespaces the init found still there after a program fail the
// run, as a kernel report of their own.
func TestNetnsLeftFailsTheRun(t *testing.T) {
	c := &consoleWatcher{diag: io.Discard}
	var diag strings.Builder
	tap := &tapRelay{out: io.Discard, diag: &diag, opened: true, exitSeen: true}
	tap.line(protocol.NetnsLeftLine("netlink_mcast_switch", 120*time.Second))
	if !strings.Contains(diag.String(), "namespaces still there 120s after netlink_mcast_switch") {
		t.Errorf("the marker is not shown: %q", diag.String())
	}
	reports, _, _ := kernelReports(c, tap)
	status, problem := verdict(bootOutcome{console: c, tap: tap, reports: reports})
	if status != 1 || len(reports) != 1 || reports[0].Kind != "netns teardown" || !strings.Contains(reports[0].String(), "netlink_mcast_switch") {
		t.Errorf("verdict %d, %q, reports %q; want a failure naming netlink_mcast_switch", status, problem, reports)
	}
}
