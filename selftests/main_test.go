// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/ktap"
	"nlmcast/selftests/kmsg"
	"nlmcast/selftests/netns"
)

func fakeSuite(cleanedUp *bool) Suite {
	return Suite{
		Name: "prog",
		Cases: []Case{
			{Name: "passes", Run: func(t T) {}},
			{Name: "fails", Run: func(t T) {
				t.Cleanup(func() { t.Logf("cleanup ran") })
				t.Fatalf("socket %q: boom", "a")
				t.Logf("not reached")
			}},
			{Name: "skips", Run: func(t T) { t.Skipf("no %s classifier", "u32") }},
			{Name: "xfails", Run: func(t T) { XFail(t, "value already modified") }},
			{Name: "panics", Run: func(t T) { panic("kaboom") }},
		},
		Setup: func(log func(string, ...any)) (func() error, error) {
			return func() error { *cleanedUp = true; return nil }, nil
		},
	}
}

// expectOutput fails t for each of wants that out does not contain.
func expectOutput(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// skipPreflight lets run go on without the privilege and namespace
// checks for the rest of t, for suites of fake cases, and with a kernel
// log that reports nothing (a test must not write the host's log, nor
// fail on what the host's kernel says).
func skipPreflight(t *testing.T) {
	t.Helper()
	preflight = func() string { return "" }
	probeNamespace = func() (*netns.NS, error) { return nil, nil }
	quietLog(t, &scriptedLog{})
	t.Cleanup(func() { preflight, probeNamespace = cannotRun, savedProbeNamespace; resetStop() })
}

var savedProbeNamespace = probeNamespace

// quietLog makes run read log instead of the kernel's, and only when a
// case ends (no background reads), for the rest of t.
func quietLog(t *testing.T, log reporter) {
	t.Helper()
	saved, interval := openLog, pollInterval
	openLog = func(string) (reporter, string, error) { return log, "", nil }
	pollInterval = 0
	t.Cleanup(func() { openLog, pollInterval = saved, interval })
}

func runFake(t *testing.T, args ...string) (string, string, int, bool) {
	t.Helper()
	skipPreflight(t)
	var out, errs strings.Builder
	cleaned := false
	code := Run(fakeSuite(&cleaned), args, &out, &errs)
	return out.String(), errs.String(), code, cleaned
}

// timing varies; strip it before comparing.
var timing = regexp.MustCompile(`( #)? time=\d+ms`)

func TestMainResults(t *testing.T) {
	out, _, code, cleaned := runFake(t)
	out = timing.ReplaceAllString(out, "")
	out = regexp.MustCompile(`main_test.go:\d+:`).ReplaceAllString(out, "main_test.go:LINE:") // TestMainFileLine checks the numbers
	expectOutput(t, out,
		"1..5\n",
		"ok 1 prog.passes\n",
		"# fails: main_test.go:LINE: socket \"a\": boom\n# fails: main_test.go:LINE: cleanup ran\nnot ok 2 prog.fails\n",
		"ok 3 prog.skips # SKIP no u32 classifier\n",
		"ok 4 prog.xfails # XFAIL value already modified\n",
		"# panics: panic: kaboom\n",
		"not ok 5 prog.panics\n",
		"# Totals: pass:1 fail:2 xfail:1 xpass:0 skip:1 error:0\n",
	)
	if strings.Contains(out, "not reached") {
		t.Errorf("Fatalf did not stop the case:\n%s", out)
	}
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if !cleaned {
		t.Errorf("suite cleanup did not run")
	}
}

func TestMainSelectAndList(t *testing.T) {
	out, _, code, _ := runFake(t, "-t", "skips", "-t", "xfails")
	if code != 0 || !strings.Contains(out, "1..2\n") || !strings.Contains(out, "ok 1 prog.skips # SKIP") {
		t.Errorf("-t: exit %d, output:\n%s", code, out)
	}
	out, _, code, _ = runFake(t, "-t", "skips")
	if code != 4 {
		t.Errorf("only skipped cases: exit %d, want 4:\n%s", code, out)
	}
	out, _, code, _ = runFake(t, "-l")
	if code != 0 || out != "passes\nfails\nskips\nxfails\npanics\n" {
		t.Errorf("-l: exit %d, output %q", code, out)
	}
}

func TestMainRunsARepeatedCaseOnce(t *testing.T) {
	out, _, code, _ := runFake(t, "-t", "passes", "-t", "passes")
	if code != 0 || !strings.Contains(out, "1..1\n") || strings.Count(out, "prog.passes") != 1 {
		t.Errorf("-t passes -t passes: exit %d, output:\n%s", code, out)
	}
	out, _, code, _ = runFake(t, "-l", "-t", "skips", "-t", "passes")
	if code != 0 || out != "skips\npasses\n" {
		t.Errorf("-l -t skips -t passes: exit %d, output %q", code, out)
	}
}

func TestMainQuotesUnknownFlags(t *testing.T) {
	_, errs, code, _ := runFake(t, "-\x1b[31mred")
	if code != 1 || !strings.Contains(errs, `unknown flag "-\x1b[31mred"`) || strings.Contains(errs, "\x1b") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// failingWriter fails every write, as stdout on /dev/full does (ENOSPC).
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, unix.ENOSPC }

func TestMainStdoutWriteFailure(t *testing.T) {
	skipPreflight(t)
	for _, args := range [][]string{nil, {"-l"}} {
		var errs strings.Builder
		cleaned := false
		code := Run(fakeSuite(&cleaned), args, failingWriter{}, &errs)
		if code != 1 || !strings.Contains(errs.String(), "to stdout: no space left on device") {
			t.Errorf("%q: exit %d, stderr %q; want 1 and the write error", args, code, errs.String())
		}
	}
}

// TestMainFileLine: every message names the line of the case that made
// it, past the functions marked with Helper, as testing.T does.
func TestMainFileLine(t *testing.T) {
	skipPreflight(t)
	check := func(t T, ok bool) {
		t.Helper()
		if !ok {
			t.Errorf("check failed")
		}
	}
	_, _, line, _ := runtime.Caller(0)
	s := Suite{Name: "prog", Cases: []Case{{Name: "c", Run: func(t T) {
		check(t, false) // line+2
		func() {
			t.Helper()
			t.Fatalf("fatal in a helper closure") // line+5, reported at line+6
		}()
	}}}}
	var out strings.Builder
	Run(s, nil, &out, &strings.Builder{})
	expectOutput(t, out.String(),
		fmt.Sprintf("# c: main_test.go:%d: check failed\n", line+2),
		fmt.Sprintf("# c: main_test.go:%d: fatal in a helper closure\n", line+6),
	)
}

// TestMainDeadline: a case past its deadline fails alone, with its name
// and where it is blocked, and the program goes on with the next case. A
// case that notices it was told to stop (Done) ends and runs its own
// cleanups; one blocked in a system call is left to itself, and nothing
// it holds is closed under it.
func TestMainDeadline(t *testing.T) {
	skipPreflight(t)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The blocked goroutine keeps fds[0] for the life of the test binary.
	t.Cleanup(func() { unix.Close(fds[1]) })
	var blockedCleaned, waitingCleaned atomic.Bool
	s := Suite{Name: "prog", Cases: []Case{
		{Name: "hangs", Run: func(t T) {
			t.Cleanup(func() { blockedCleaned.Store(true) })
			unix.Recvfrom(fds[0], make([]byte, 1), 0) // nothing is ever sent
			t.Errorf("recvfrom returned")
		}},
		{Name: "waits", Run: func(t T) {
			t.Cleanup(func() { waitingCleaned.Store(true) })
			<-Done(t)
		}},
		{Name: "passes", Run: func(t T) {}},
		{Name: "slow_but_allowed", Timeout: time.Second, Run: func(t T) { time.Sleep(300 * time.Millisecond) }},
	}}
	var out strings.Builder
	start := time.Now()
	code := Run(s, []string{"-deadline", "200ms"}, &out, &strings.Builder{})
	got := timing.ReplaceAllString(out.String(), "")
	expectOutput(t, got,
		"# hangs: TIMEOUT: still running after the per-case deadline of 200ms; its goroutine was blocked [syscall",
		"<- nlmcast/selftests.TestMainDeadline.func", // the closure blocked in recvfrom (its number follows the source)
		"# hangs: it is still running 1s after being told to stop: what it holds goes with the program\n",
		"not ok 1 prog.hangs # TIMEOUT: still running after the per-case deadline of 200ms\n",
		"# waits: it ended once told to stop, and its cleanups ran\n",
		"not ok 2 prog.waits # TIMEOUT",
		"ok 3 prog.passes\n",
		// An explicit -deadline overrides the case's own.
		"not ok 4 prog.slow_but_allowed # TIMEOUT",
		"# Totals: pass:1 fail:3 ",
	)
	if code != 1 || blockedCleaned.Load() || !waitingCleaned.Load() {
		t.Errorf("exit %d (want 1), cleanups ran: blocked %v (want false), waiting %v (want true)", code, blockedCleaned.Load(), waitingCleaned.Load())
	}
	if d := time.Since(start); d > 6*time.Second {
		t.Errorf("took %v", d)
	}
	// Without -deadline, the case's own Timeout holds.
	out.Reset()
	if code := Run(Suite{Name: "prog", Cases: s.Cases[3:]}, nil, &out, &strings.Builder{}); code != 0 {
		t.Errorf("slow_but_allowed alone: exit %d:\n%s", code, out.String())
	}
}

// resetStop forgets a signal a test sent.
func resetStop() {
	stop.once = sync.Once{}
	stop.done = make(chan struct{})
	stop.why = ""
}

// TestMainInterrupted: a SIGTERM during a case ends it as interrupted, not
// as a kernel failure; the later cases do not run, and the Totals line
// stays last.
func TestMainInterrupted(t *testing.T) {
	skipPreflight(t)
	t.Cleanup(resetStop)
	s := Suite{Name: "prog", Cases: []Case{
		{Name: "signalled", Run: func(t T) {
			syscall.Kill(os.Getpid(), syscall.SIGTERM)
			for end := time.Now().Add(5 * time.Second); !Interrupted() && time.Now().Before(end); {
				time.Sleep(time.Millisecond) // test only: the handler runs asynchronously
			}
			t.Errorf("2 rows missing")
		}},
		{Name: "after", Run: func(t T) { t.Errorf("ran after the signal") }},
	}}
	var out strings.Builder
	code := Run(s, nil, &out, &strings.Builder{})
	got := timing.ReplaceAllString(out.String(), "")
	expectOutput(t, got,
		": (interrupted by SIGTERM) 2 rows missing\n",
		"not ok 1 prog.signalled # interrupted by SIGTERM\n",
		"# interrupted by SIGTERM: after and the 0 cases after it did not run\n",
	)
	if !strings.HasSuffix(got, "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0\n") || strings.Contains(got, "ran after") || code != 1 {
		t.Errorf("exit %d, output:\n%s", code, got)
	}
}

func TestMainUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"-x"}, {"-t", "nope"}, {"-l", "-t", "nope"}, {"extra"}, {"-deadline", "0s"}, {"-j", "0"}} {
		out, errs, code, _ := runFake(t, args...)
		if code != 1 || out != "" || !strings.HasPrefix(errs, "prog: ") || !strings.Contains(errs, "\nusage: prog [flags]") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q (want the program's name first, then the usage)", args, code, out, errs)
		}
	}
}

// -h prints the help to stdout (`prog -h | less`) and exits 0; -h itself
// is listed with the flags of every program, not under a program's old
// spellings; -deadline's default is what the cases get. Before, the help
// went to stderr, -h came last (under the aliases where a program has
// them) and the default was 1m30s whatever the cases' own deadlines.
func TestMainHelp(t *testing.T) {
	skipPreflight(t)
	s := Suite{Name: "prog", About: "Checks things.",
		Cases: []Case{
			{Name: "quick", Run: func(t T) {}},
			{Name: "slow_a", Run: func(t T) {}, Timeout: 10 * time.Minute},
			{Name: "slow_b", Run: func(t T) {}, Timeout: 10 * time.Minute},
			{Name: "slower", Run: func(t T) {}, Timeout: time.Hour},
		},
		Aliases: []Alias{{Name: "list", For: "l"}},
	}
	var out, errs strings.Builder
	if code := Run(s, []string{"-h"}, &out, &errs); code != 0 || errs.Len() != 0 {
		t.Fatalf("-h: exit %d, stderr %q; want 0 and nothing", code, errs.String())
	}
	help := out.String()
	expectOutput(t, help, "usage: prog [flags]\n\nChecks things.\n",
		"(default: 1m30s a case; 10m0s for slow_a, slow_b; 1h0m0s for slower)\n")
	shared := strings.Index(help, "Flags of every netlink_mcast program:")
	aliases := strings.Index(help, "Old spellings, kept as aliases:")
	h := strings.Index(help, "\n  -h\n")
	if shared < 0 || aliases < 0 || h < shared || h > aliases {
		t.Errorf("-h is not among the flags of every program:\n%s", help)
	}
	s.CaseDeadlines = "1h0m0s a scene,\nless with -quick"
	out.Reset()
	Run(s, []string{"-h"}, &out, &errs)
	expectOutput(t, out.String(), "(default: 1h0m0s a scene,\n    \tless with -quick)\n")
	if strings.Contains(out.String(), "1m30s") {
		t.Errorf("the frame's default shown beside the program's:\n%s", out.String())
	}
}

// A program's -l -v lists what each case checks, and -l alone does not,
// whatever go test's own -test.v says: the program's tests run it under
// go test -v. Before, -l under go test -v printed the descriptions.
func TestMainListFollowsTheProgramsVerbose(t *testing.T) {
	skipPreflight(t)
	f := flag.Lookup("test.v")
	if f == nil {
		t.Skip("no -test.v flag")
	}
	was := f.Value.String()
	if err := flag.Set("test.v", "true"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { flag.Set("test.v", was) })
	s := Suite{Name: "prog", Cases: []Case{{Name: "a", About: "checks a", Run: func(t T) {}}}}
	var out strings.Builder
	if code := Run(s, []string{"-l"}, &out, &strings.Builder{}); code != 0 || out.String() != "a\n" {
		t.Errorf("-l under go test -v: exit %d, output %q; want \"a\\n\"", code, out.String())
	}
	out.Reset()
	if code := Run(s, []string{"-l", "-v"}, &out, &strings.Builder{}); code != 0 || out.String() != "a\tchecks a\n" {
		t.Errorf("-l -v: exit %d, output %q", code, out.String())
	}
	if Verbose() != true {
		t.Errorf("Verbose() outside a program under go test -v: false")
	}
}

// A flag's default is shown unless it is its type's zero (a duration of
// 0s included: "(default 0s)" after "default 4 × -duration" misleads).
func TestFlagUsageDefaults(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Duration("zero", 0, "none by default (default 4 × -duration)")
	fs.Duration("some", time.Minute, "a minute")
	fs.Int("n", 0, "a count")
	fs.String("s", "a b", "a text")
	for name, want := range map[string]string{
		"zero": "  -zero duration\n    \tnone by default (default 4 × -duration)\n",
		"some": "  -some duration\n    \ta minute (default 1m0s)\n",
		"n":    "  -n int\n    \ta count\n",
		"s":    "  -s string\n    \ta text (default \"a b\")\n",
	} {
		if got := flagUsage(fs.Lookup(name)); got != want {
			t.Errorf("-%s: %q, want %q", name, got, want)
		}
	}
}

// A program whose namespace refuses a NETLINK_ROUTE socket before it made
// any namespace fails at once, saying so: the kernel tore the protocol down.
func TestMainRouteSocketRefused(t *testing.T) {
	skipPreflight(t)
	routeSocketProbe = func() error { return errors.New("socket(AF_NETLINK, NETLINK_ROUTE): protocol not supported") }
	t.Cleanup(func() { routeSocketProbe = openRouteSocket })
	t.Setenv("KSFT_TAP_LEVEL", "")
	var out strings.Builder
	cleaned := false
	code := Run(fakeSuite(&cleaned), nil, &out, &strings.Builder{})
	want := "TAP version 13\n1..5\nBail out! socket(AF_NETLINK, NETLINK_ROUTE): protocol not supported\n# Planned tests != run tests (5 != 0)\n# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:0 error:0\n"
	if code != 1 || out.String() != want {
		t.Errorf("exit %d, output %q; want 1, %q", code, out.String(), want)
	}
}

// The probe opens a NETLINK_ROUTE socket, as any process may.
func TestOpenRouteSocket(t *testing.T) {
	if err := openRouteSocket(); err != nil {
		t.Errorf("openRouteSocket: %v", err)
	}
}

func TestMainCannotRun(t *testing.T) {
	preflight = func() string { return "must be run as root (needs CAP_NET_ADMIN)" }
	t.Cleanup(func() { preflight = cannotRun })
	t.Setenv("KSFT_TAP_LEVEL", "")
	var out strings.Builder
	cleaned := false
	code := Run(fakeSuite(&cleaned), nil, &out, &strings.Builder{})
	if code != 4 || out.String() != "TAP version 13\n1..0 # SKIP must be run as root (needs CAP_NET_ADMIN)\n" {
		t.Errorf("exit %d, output %q", code, out.String())
	}
}

// TestMainAbandonedCaseKeepsItsNamespaces: a case abandoned at its
// deadline while it holds a namespace is not waited for at the end: the
// program says the namespace goes with it and ends at once, without a
// Bail out! that would blame the kernel for the program's own leftover
// (the teardown wait is 60 s).
func TestMainAbandonedCaseKeepsItsNamespaces(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates a network namespace")
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The blocked goroutine keeps fds[0], and its namespace, for the life
	// of the test binary.
	t.Cleanup(func() { unix.Close(fds[1]) })
	s := Suite{Name: "prog", Cases: []Case{
		{Name: "stuck", Run: func(t T) {
			NewNS(t, "held")
			unix.Recvfrom(fds[0], make([]byte, 1), 0) // nothing is ever sent
		}},
		{Name: "after", Run: func(t T) { NewNS(t, "released") }},
	}}
	var out strings.Builder
	start := time.Now()
	code := Run(s, []string{"-deadline", "300ms"}, &out, &strings.Builder{})
	expectOutput(t, out.String(),
		"not ok 1 prog.stuck # TIMEOUT",
		"# stuck: its namespaces held are still held by its goroutine: not waited for (they go with the program)\n",
		"ok 2 prog.after",
		"# Totals: pass:1 fail:1 ",
	)
	if strings.Contains(out.String(), "Bail out!") || code != 1 {
		t.Errorf("exit %d (want 1), output:\n%s", code, out.String())
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v: the program waited for the abandoned case's namespace", d)
	}
}

// TestMainVerbose: with -v every socket's transcript is printed also when
// it is as expected; without it, only a mismatch shows.
func TestMainVerbose(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates a network namespace")
	}
	s := Suite{Name: "prog", Cases: []Case{{Name: "addr", Run: func(t T) {
		n := NewNS(t, "S")
		a := n.Socket("a", Join(unix.RTNLGRP_IPV4_IFADDR))
		quiet := n.Socket("quiet")
		e := n.AddAddr()
		a.Expect(e.NewAddr())
		quiet.Expect()
	}}}}
	var out strings.Builder
	if code := Run(s, []string{"-v"}, &out, &strings.Builder{}); code != 0 {
		t.Fatalf("-v: exit %d:\n%s", code, out.String())
	}
	expectOutput(t, out.String(),
		`# addr: main_test.go:`,
		`: socket "a" in netns S (portid `,
		"): as expected:\n#   RTM_NEWADDR flags=0 seq=",
		" [198.51.100.1/32 dev 1]\n",
		`: socket "quiet" in netns S (portid `,
		"): as expected:\n#   (nothing)\n",
	)
	if testing.Verbose() {
		return // go test -v turns the harness's verbose mode on as well
	}
	out.Reset()
	if code := Run(s, nil, &out, &strings.Builder{}); code != 0 || strings.Contains(out.String(), "as expected") {
		t.Errorf("without -v: exit %d, output:\n%s", code, out.String())
	}
}

// Every stop signal ends the run as SIGTERM does: SIGHUP (the terminal
// went away) and SIGUSR1 here, with the running case failed as
// interrupted, the rest not run, Totals last, exit 1.
func TestMainOtherStopSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGUSR1} {
		t.Run(unix.SignalName(sig), func(t *testing.T) {
			skipPreflight(t)
			s := Suite{Name: "prog", Cases: []Case{
				{Name: "signalled", Run: func(t T) {
					syscall.Kill(os.Getpid(), sig)
					<-Done(t)
					t.Errorf("stopped")
				}},
				{Name: "after", Run: func(t T) { t.Errorf("ran after the signal") }},
			}}
			var out strings.Builder
			code := Run(s, nil, &out, &strings.Builder{})
			got := timing.ReplaceAllString(out.String(), "")
			expectOutput(t, got, "not ok 1 prog.signalled # interrupted by "+unix.SignalName(sig)+"\n",
				"# Totals: pass:0 fail:1 ")
			if code != 1 || strings.Contains(got, "ran after") {
				t.Errorf("exit %d, output:\n%s", code, got)
			}
		})
	}
}

// A signal before the first case (during Setup) still ends in TAP with
// every case not run: exit 1, not 4 (nothing was skipped).
func TestMainSignalBeforeTheFirstCase(t *testing.T) {
	skipPreflight(t)
	s := Suite{Name: "prog",
		Cases: []Case{{Name: "never", Run: func(t T) {}}},
		Setup: func(log func(string, ...any)) (func() error, error) {
			syscall.Kill(os.Getpid(), syscall.SIGTERM)
			<-stopping()
			return nil, nil
		},
	}
	var out strings.Builder
	code := Run(s, nil, &out, &strings.Builder{})
	expectOutput(t, out.String(), "# interrupted by SIGTERM: never and the 0 cases after it did not run\n", "# Planned tests != run tests (1 != 0)\n")
	if code != 1 {
		t.Errorf("exit %d, want 1:\n%s", code, out.String())
	}
}

// closedPipe is stdout after its reader went away: every write fails with
// EPIPE (with SIGPIPE caught, which the frame does).
type closedPipe struct{ after int }

func (p *closedPipe) Write(b []byte) (int, error) {
	if p.after > 0 {
		p.after--
		return len(b), nil
	}
	return 0, unix.EPIPE
}

// When stdout goes away mid-run, the running case is the last: the rest
// do not run, the teardown (which restores the switch) runs, exit 1.
func TestMainStdoutClosedStopsTheRun(t *testing.T) {
	skipPreflight(t)
	var ran []string
	torn := false
	s := Suite{Name: "prog",
		Cases: []Case{
			{Name: "one", Run: func(t T) { ran = append(ran, "one") }},
			{Name: "two", Run: func(t T) { ran = append(ran, "two") }},
			{Name: "three", Run: func(t T) { ran = append(ran, "three") }},
		},
		Setup: func(log func(string, ...any)) (func() error, error) {
			return func() error { torn = true; return nil }, nil
		},
	}
	var errs strings.Builder
	// TAP header, plan, the switch line, one result: then the pipe closes.
	code := Run(s, nil, &closedPipe{after: 4}, &errs)
	if code != 1 || !torn || len(ran) > 2 || !strings.Contains(errs.String(), "writing TAP to stdout: broken pipe") {
		t.Errorf("exit %d, teardown %v, cases run %q, stderr %q", code, torn, ran, errs.String())
	}
}

// TestMainAfterCase: AfterCase sees every case's final verdict, in result
// order, right after its result line: a kernel report during a case that
// passed its own checks makes it a failure there too.
func TestMainAfterCase(t *testing.T) {
	skipPreflight(t)
	quietLog(t, &scriptedLog{polls: [][]kmsg.Report{{warning}}}) // during "passes"
	cleaned := false
	s := fakeSuite(&cleaned)
	var out, errs strings.Builder
	var seen []string
	s.AfterCase = func(name string, res ktap.Result, reason string) {
		lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
		last := timing.ReplaceAllString(lines[len(lines)-1], "")
		seen = append(seen, fmt.Sprintf("%s %v %q after %q", name, res, reason, last))
	}
	Run(s, nil, &out, &errs)
	want := []string{
		fmt.Sprintf("passes %v %q after %q", ktap.Fail, "kernel report during the case: WARNING", "not ok 1 prog.passes # kernel report during the case: WARNING"),
		fmt.Sprintf("fails %v %q after %q", ktap.Fail, "", "not ok 2 prog.fails"),
		fmt.Sprintf("skips %v %q after %q", ktap.Skip, "no u32 classifier", "ok 3 prog.skips # SKIP no u32 classifier"),
		fmt.Sprintf("xfails %v %q after %q", ktap.XFail, "value already modified", "ok 4 prog.xfails # XFAIL value already modified"),
		fmt.Sprintf("panics %v %q after %q", ktap.Fail, "", "not ok 5 prog.panics"),
	}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("AfterCase calls:\n%s\nwant:\n%s\noutput:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"), out.String())
	}
	// A failed Setup: every case is reported failed, to AfterCase too.
	s.Setup = func(func(string, ...any)) (func() error, error) { return nil, fmt.Errorf("no") }
	seen = nil
	out.Reset()
	Run(s, []string{"-t", "passes"}, &out, &errs)
	if want := fmt.Sprintf("passes %v %q after %q", ktap.Fail, "setup failed", "not ok 1 prog.passes # setup failed"); len(seen) != 1 || seen[0] != want {
		t.Errorf("after a failed setup: %q, want [%q]", seen, want)
	}
}
