// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"nlmcast/selftests/kmsg"
)

// scriptedLog hands out reports on given polls: polls[i] is what the i-th
// Poll returns (the runner polls once after each case, then once at the
// end); missed[i] is how many records it has lost by then, errs[i] the
// error that stopped it, if any; tainted is the mask at the start.
type scriptedLog struct {
	polls   [][]kmsg.Report
	missed  []uint64
	errs    []error
	tainted uint64
	n       int
}

func (l *scriptedLog) Poll() []kmsg.Report {
	defer func() { l.n++ }()
	if l.n < len(l.polls) {
		return l.polls[l.n]
	}
	return nil
}

func (l *scriptedLog) Settle() []kmsg.Report { return l.Poll() }

// Missed and Err are asked after the poll (n is one past it).
func (l *scriptedLog) Missed() uint64 {
	var m uint64
	for i := 0; i < l.n && i < len(l.missed); i++ {
		m = max(m, l.missed[i])
	}
	return m
}

func (l *scriptedLog) Err() error {
	for i := 0; i < l.n && i < len(l.errs); i++ {
		if l.errs[i] != nil {
			return l.errs[i]
		}
	}
	return nil
}

func (l *scriptedLog) AlreadyTainted() uint64 {
	m := l.tainted
	l.tainted = 0
	return m
}

func (l *scriptedLog) Close() error { return nil }

var warning = kmsg.Report{Kind: "WARNING", Lines: []string{
	"WARNING: CPU: 1 PID: 77 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x1f/0x2a0",
	"Modules linked in:",
}}

func runWithLog(t *testing.T, log *scriptedLog) (string, int) {
	t.Helper()
	skipPreflight(t)
	quietLog(t, log)
	s := Suite{Name: "prog", Cases: []Case{
		{Name: "first", Run: func(t T) {}},
		{Name: "second", Run: func(t T) {}},
		{Name: "third", Run: func(t T) { t.Skipf("nothing to do") }},
	}}
	var out, errs strings.Builder
	code := Run(s, nil, &out, &errs)
	return timing.ReplaceAllString(out.String(), ""), code
}

// A report logged while a case runs fails that case, and only that one,
// with the report's lines as diagnostics.
func TestKernelReportFailsTheCaseItCameIn(t *testing.T) {
	out, code := runWithLog(t, &scriptedLog{polls: [][]kmsg.Report{nil, {warning}}})
	expectOutput(t, out,
		"ok 1 prog.first\n",
		"# kernel report during second: WARNING: CPU: 1 PID: 77 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x1f/0x2a0\n",
		"#   | Modules linked in:\n",
		"not ok 2 prog.second # kernel report during the case: WARNING\n",
		"ok 3 prog.third # SKIP nothing to do\n",
		"# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0\n",
	)
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
}

// A report that comes only after the last case (the namespaces' teardown
// is asynchronous) still fails the program, before the Totals line.
func TestKernelReportAfterTheLastCaseFailsTheProgram(t *testing.T) {
	out, code := runWithLog(t, &scriptedLog{polls: [][]kmsg.Report{nil, nil, nil, {warning}}})
	want := "# kernel report after the last case (namespace teardown): WARNING: CPU: 1 PID: 77 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x1f/0x2a0\n" +
		"#   | WARNING: CPU: 1 PID: 77 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x1f/0x2a0\n" +
		"#   | Modules linked in:\n" +
		"Bail out! kernel report after the last case: WARNING\n" +
		"# Totals: pass:2 fail:0 xfail:0 xpass:0 skip:1 error:0\n"
	if !strings.HasSuffix(out, want) {
		t.Errorf("output does not end with\n%s\ngot:\n%s", want, out)
	}
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
}

// A quiet kernel changes nothing.
func TestQuietKernel(t *testing.T) {
	out, code := runWithLog(t, &scriptedLog{})
	if strings.Contains(out, "kernel report") || strings.Contains(out, "Bail out!") {
		t.Errorf("reports where there were none:\n%s", out)
	}
	if code != 0 {
		t.Errorf("exit code %d, want 0:\n%s", code, out)
	}
}

// A KCSAN report that the known-report list does not name fails the case
// like any other, and the diagnostics give its fingerprint.
func TestNewKCSANReportFailsTheCase(t *testing.T) {
	race := kmsg.Report{Kind: "KCSAN", Lines: []string{
		"BUG: KCSAN: data-race in netlink_bind / netlink_broadcast",
		"",
		"write to 0xffff888005a3c2f8 of 8 bytes by task 212 on cpu 1:",
		" netlink_bind+0x5e/0x2f0",
		"",
		"read to 0xffff888005a3c2f8 of 8 bytes by task 213 on cpu 0:",
		" netlink_broadcast+0x5a/0xe0",
	}}
	out, code := runWithLog(t, &scriptedLog{polls: [][]kmsg.Report{{race}}})
	expectOutput(t, out,
		`# new kernel report (not in the known list): BUG: KCSAN: data-race in netlink_bind / netlink_broadcast; fingerprint "KCSAN data-race: netlink_bind (write 8) / netlink_broadcast (read 8)"`+"\n",
		"# kernel report during first: BUG: KCSAN: data-race in netlink_bind / netlink_broadcast\n",
		"#   |  netlink_broadcast+0x5a/0xe0\n",
		"not ok 1 prog.first # kernel report during the case: KCSAN\n",
	)
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
}

// A known report (one the unpatched kernel gave, as its console showed
// it) is printed as one line and fails nothing.
func TestKnownKernelReportDoesNotFail(t *testing.T) {
	data, err := os.ReadFile("kmsg/testdata/u-kcsan-strict-poll_schedule_timeout-pollwake.txt")
	if err != nil {
		t.Fatal(err)
	}
	reps := kmsg.Scan(strings.Split(string(data), "\n"))
	if len(reps) != 1 {
		t.Fatalf("%d reports in the capture, want 1", len(reps))
	}
	out, code := runWithLog(t, &scriptedLog{polls: [][]kmsg.Report{reps}})
	expectOutput(t, out,
		"# known kernel report (not the series'): BUG: KCSAN: data-race in poll_schedule_timeout.constprop.0 / pollwake; fingerprint \"KCSAN data-race: ",
		"ok 1 prog.first\n",
		"# Totals: pass:2 fail:0 xfail:0 xpass:0 skip:1 error:0\n",
	)
	if strings.Contains(out, "kernel report during") || code != 0 {
		t.Errorf("a known report failed the run (exit %d):\n%s", code, out)
	}
}

// A kernel log that cannot be read is said once; a case whose verdict
// rests on it (stress's modes) SKIPs instead of passing, saying why, and
// a case that fails still fails; the others pass, saying on their result
// line that the log was not watched.
func TestUnwatchedLogSkipsTheCasesThatRestOnIt(t *testing.T) {
	skipPreflight(t)
	saved := openLog
	openLog = func(string) (reporter, string, error) {
		return nil, "", errors.New("open /dev/kmsg: operation not permitted")
	}
	t.Cleanup(func() { openLog = saved })
	s := Suite{Name: "prog", Cases: []Case{
		{Name: "rests", RequireKernelLog: true, Run: func(t T) {}},
		{Name: "rests_fails", RequireKernelLog: true, Run: func(t T) { t.Errorf("broken") }},
		{Name: "plain", Run: func(t T) {}},
	}}
	var out, errs strings.Builder
	code := Run(s, []string{"-j", "1"}, &out, &errs)
	got := timing.ReplaceAllString(out.String(), "")
	expectOutput(t, got,
		"# kernel log not watched: open /dev/kmsg: operation not permitted\n",
		"ok 1 prog.rests # SKIP kernel log not watched: open /dev/kmsg: operation not permitted; the case's verdict rests on it (its own checks passed)\n",
		"not ok 2 prog.rests_fails\n",
		"ok 3 prog.plain # kernel log not watched: open /dev/kmsg: operation not permitted\n",
	)
	if code != 1 {
		t.Errorf("exit %d (want 1):\n%s", code, got)
	}
}

// runResting runs three cases whose verdicts rest on the kernel log, and a
// plain one, with log.
func runResting(t *testing.T, log *scriptedLog) (string, int) {
	t.Helper()
	skipPreflight(t)
	quietLog(t, log)
	s := Suite{Name: "prog", Cases: []Case{
		{Name: "first", RequireKernelLog: true, Run: func(t T) {}},
		{Name: "second", RequireKernelLog: true, Run: func(t T) {}},
		{Name: "plain", Run: func(t T) {}},
		{Name: "third", RequireKernelLog: true, Run: func(t T) {}},
	}}
	var out, errs strings.Builder
	code := Run(s, []string{"-j", "1"}, &out, &errs)
	return timing.ReplaceAllString(out.String(), ""), code
}

// Records the kernel overwrote before they were read are said, with how
// many; the case that ran while they were lost has not been watched and
// SKIPs, naming the count, whether or not its verdict rests on the log
// (here a plain one, as every semantics case is), and only that one.
// Before, a plain case passed with a diagnostic line.
func TestLostRecordsSkipTheCaseTheyWereLostIn(t *testing.T) {
	for _, tt := range []struct {
		name   string
		missed []uint64
		want   string
	}{
		{"resting", []uint64{0, 3, 3, 3}, "ok 2 prog.second # SKIP kernel log: 3 records lost while this case ran; it was not watched (its own checks passed)\n"},
		{"plain", []uint64{0, 0, 3, 3}, "ok 3 prog.plain # SKIP kernel log: 3 records lost while this case ran; it was not watched (its own checks passed)\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, code := runResting(t, &scriptedLog{missed: tt.missed})
			expectOutput(t, out,
				"# kernel log: 3 records lost (overwritten before they were read): a report among them went unseen\n",
				tt.want,
			)
			if n := strings.Count(out, "# SKIP"); n != 1 || code != 0 {
				t.Errorf("%d SKIPs (want 1), exit %d (want 0):\n%s", n, code, out)
			}
		})
	}
}

// A case that failed its own checks while records were lost still fails;
// one that failed as expected (XFAIL) SKIPs, saying so: a report it cannot
// rule out would have made it a failure.
func TestLostRecordsKeepAFailure(t *testing.T) {
	skipPreflight(t)
	quietLog(t, &scriptedLog{missed: []uint64{2, 4}})
	s := Suite{Name: "prog", Cases: []Case{
		{Name: "fails", Run: func(t T) { t.Errorf("broken") }},
		{Name: "xfails", Run: func(t T) { XFail(t, "known bug") }},
	}}
	var out strings.Builder
	code := Run(s, []string{"-j", "1"}, &out, &strings.Builder{})
	got := timing.ReplaceAllString(out.String(), "")
	expectOutput(t, got,
		"not ok 1 prog.fails\n",
		"ok 2 prog.xfails # SKIP kernel log: 2 records lost while this case ran; it was not watched (its own checks: XFAIL known bug)\n",
	)
	if code != 1 {
		t.Errorf("exit %d, want 1:\n%s", code, got)
	}
}

// A read error stops the watch: said once; the case it stopped in SKIPs,
// as one that lost records; every later case whose verdict rests on the
// log SKIPs, as when the log cannot be read at all, and a later plain
// case says on its line that the log is not watched.
func TestStoppedWatchSkipsTheCasesThatRestOnTheLog(t *testing.T) {
	out, _ := runResting(t, &scriptedLog{errs: []error{nil, errors.New("read /dev/kmsg: input/output error")}})
	expectOutput(t, out,
		"ok 1 prog.first\n",
		"# kernel log no longer watched: read /dev/kmsg: input/output error: a report from now on goes unseen\n",
		"ok 2 prog.second # SKIP kernel log: the watch stopped (read /dev/kmsg: input/output error) while this case ran; it was not watched (its own checks passed)\n",
		"ok 3 prog.plain # kernel log no longer watched: read /dev/kmsg: input/output error\n",
		"ok 4 prog.third # SKIP kernel log no longer watched: read /dev/kmsg: input/output error; the case's verdict rests on it (its own checks passed)\n",
	)
	if n := strings.Count(out, "\n# kernel log no longer watched"); n != 1 {
		t.Errorf("said %d times, want once:\n%s", n, out)
	}
}

// Records lost after the last case (the namespaces' teardown) fail the
// program, as a report then does: its last judgement rests on the log.
func TestLostRecordsAfterTheLastCaseFailTheProgram(t *testing.T) {
	out, code := runResting(t, &scriptedLog{missed: []uint64{0, 0, 0, 0, 5}})
	want := "# kernel log: 5 records lost (overwritten before they were read): a report among them went unseen\n" +
		"Bail out! kernel log: 5 records lost after the last case: the kernel's health cannot be judged\n"
	if !strings.Contains(out, want) || code != 1 {
		t.Errorf("exit %d (want 1), output does not have\n%s\ngot:\n%s", code, want, out)
	}
}

// A taint bit already set when the program started (an earlier program in
// the same boot set it) cannot show a report of this program: it is said
// at the start, by bit, and on every passing case's result line, which
// was watched by the log alone. Before, only the start said so.
func TestAlreadySetTaintBitIsSaid(t *testing.T) {
	out, _ := runResting(t, &scriptedLog{tainted: 1<<9 | 1<<12})
	note := " # taint W O set before the program: watched by the log alone\n"
	expectOutput(t, out,
		"# taint bit 9 W (warning) was already set when the program started: a report that sets it is seen in the log alone (each case's result line says so)\n",
		"# taint bit 12 O (out-of-tree module) was already set when the program started: a report that sets it is seen in the log alone (each case's result line says so)\n",
		"ok 1 prog.first"+note,
		"ok 2 prog.second"+note,
		"ok 3 prog.plain"+note,
		"ok 4 prog.third"+note,
	)
}

// stagedLog reports a WARNING at the first read of the log after b ended,
// and again at the first after c ended, and says when it has.
type stagedLog struct {
	scriptedLog
	mu             sync.Mutex
	bEnded, cEnded chan struct{}
	afterB, afterC chan struct{}
	gaveB, gaveC   bool
}

func (l *stagedLog) Poll() []kmsg.Report {
	l.mu.Lock()
	defer l.mu.Unlock()
	warning := []kmsg.Report{{Kind: "WARNING", Lines: []string{"WARNING: CPU: 0 PID: 1 at net/core/dev.c:1 f+0x0/0x1"}}}
	select {
	case <-l.bEnded:
		if !l.gaveB {
			l.gaveB = true
			close(l.afterB)
			return warning
		}
	default:
	}
	select {
	case <-l.cEnded:
		if !l.gaveC {
			l.gaveC = true
			close(l.afterC)
			return warning
		}
	default:
	}
	return nil
}

func (l *stagedLog) Settle() []kmsg.Report { return l.Poll() }

// A case that runs through two reads of the log that found reports names
// each case it ran beside once. Before, long was "beside b, c, c".
func TestReportsNameEachCaseBesideOnce(t *testing.T) {
	log := &stagedLog{bEnded: make(chan struct{}), cEnded: make(chan struct{}),
		afterB: make(chan struct{}), afterC: make(chan struct{})}
	skipPreflight(t)
	quietLog(t, log)
	s := Suite{Name: "prog", Cases: []Case{
		{Name: "long", Group: "g", Run: func(t T) { <-log.afterC }},
		{Name: "b", Group: "g", Run: func(t T) { close(log.bEnded) }},
		{Name: "c", Group: "g", Run: func(t T) { <-log.afterB; close(log.cEnded) }},
	}}
	var out strings.Builder
	Run(s, []string{"-j", "3"}, &out, &strings.Builder{})
	if !strings.Contains(out.String(), "# kernel report during long (running beside b, c): WARNING") {
		t.Errorf("output:\n%s\nwant long's reports beside b and c, each named once", out.String())
	}
}
