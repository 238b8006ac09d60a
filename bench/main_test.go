// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/bench/internal/report"
	"nlmcast/bench/internal/sample"
	"nlmcast/selftests"
	"nlmcast/selftests/childproc"
	"nlmcast/selftests/kmsg"
)

// childEnv makes the test binary run the bench itself (TestMain): the
// tests of signals, stdout and privileges need a process of their own.
// NLMC_BENCH_TEST_NOFILE lowers its RLIMIT_NOFILE first, as prlimit
// --nofile=N would.
const (
	childEnv  = "NLMC_BENCH_TEST_CHILD"
	nofileEnv = "NLMC_BENCH_TEST_NOFILE"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if n, err := strconv.ParseUint(os.Getenv(nofileEnv), 10, 64); err == nil {
			if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: n, Max: n}); err != nil {
				panic(err)
			}
		}
		os.Exit(selftests.Main(suite))
	}
	os.Exit(m.Run())
}

// small is a bench run that takes well under a second on the host.
var small = []string{"-rounds", "1", "-samples", "1", "-routes", "64", "-n", "10"}

// runSuite runs the bench's suite in-process, with a kernel log that
// reports nothing (the host's kernel must not decide the test).
func runSuite(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	t.Cleanup(selftests.ReplaceKernelLog(func() []kmsg.Report { return nil }))
	var out, errs strings.Builder
	code = selftests.Run(suite, args, &out, &errs)
	return out.String(), errs.String(), code
}

// Every flag error is a usage error: exit 1, the program's name and the
// flag on stderr, the usage after it, nothing on stdout, nothing measured.
func TestFlagErrors(t *testing.T) {
	earlier := t.TempDir()
	os.WriteFile(filepath.Join(earlier, report.SamplesFile), []byte("{}\n"), 0o644)
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-reps", "0"}, "-reps 0: want at least 1000"},
		{[]string{"-reps", "-5"}, "-reps -5: want at least 1000"},
		{[]string{"-reps", "999"}, "-reps 999: want at least 1000"},
		{[]string{"-n", "-5"}, "-n -5 -d -1: want a count, or -1"},
		{[]string{"-d", "-3"}, "-n -1 -d -3: want a count, or -1"},
		{[]string{"-routes", "70000"}, "-routes 70000: want 1 to 65536"},
		{[]string{"-routes", "0"}, "-routes 0: want 1 to 65536"},
		{[]string{"-rounds", "0"}, "-rounds 0 -samples 4: each must be at least 1"},
		{[]string{"-samples", "-1"}, "-rounds 3 -samples -1: each must be at least 1"},
		{[]string{"-boot", "-1"}, "-boot -1: want a boot number"},
		{[]string{"-rcvbuf", "0"}, "-rcvbuf 0: want a size in bytes"},
		{[]string{"-sweep", "n=0,100", "-scene", "C1-n0"}, "-sweep and -scene"},
		{[]string{"-sweep", "n=x"}, `-sweep: "x" is not a count`},
		{[]string{"-scene", "C9"}, `no scene "C9"`},
		{[]string{"-out", filepath.Join(file, "out")}, "results directory: mkdir"},
		{[]string{"-out", earlier}, "already holds the results of an earlier run (samples.jsonl)"},
		{[]string{"-analyze", earlier, "-out", earlier}, "-analyze never writes into the directory it reads"},
	} {
		out, errs, code := runSuite(t, c.args...)
		if code != 1 || out != "" || !strings.HasPrefix(errs, "netlink_mcast_bench: ") ||
			!strings.Contains(errs, c.want) || !strings.Contains(errs, "usage: netlink_mcast_bench") {
			t.Errorf("%q: exit %d (want 1), stdout %q, stderr %q (want %q)", c.args, code, out, firstLine(errs), c.want)
		}
	}
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// -h says what the exit codes are, on stdout, and exits 0.
func TestHelpSaysExitCodes(t *testing.T) {
	help, errs, code := runSuite(t, "-h")
	for _, want := range []string{"exits 0 (pass, some cases skipped), 1 (a failure) or 4 (every case\nskipped)", "-reps int", "at least 1000", "at most 65536", "-inject-stray"} {
		if !strings.Contains(help, want) {
			t.Errorf("-h lacks %q:\n%s", want, help)
		}
	}
	if code != 0 || errs != "" {
		t.Errorf("-h: exit %d, stderr %q", code, errs)
	}
}

// A scene named twice runs once, as -t does; so does a sweep point.
func TestSceneNamedTwiceRunsOnce(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-scene", "C1-n0,C4-all450,C1-n0"}, "C1-n0\nC4-all450\n"},
		{[]string{"-scene", "related,A1-getifaddrs-setns", "-t", "A1-getifaddrs-setns"}, "A1-getifaddrs-setns\n"},
		{[]string{"-sweep", "n=0,100,0"}, "SW-ord-n0\nSW-ord-n100\nSW-all-n0\nSW-all-n100\n"},
	} {
		out, errs, code := runSuite(t, append([]string{"-l"}, c.args...)...)
		out = regexp.MustCompile(`\t.*`).ReplaceAllString(out, "") // go test -v: -l says what each checks
		if code != 0 || out != c.want {
			t.Errorf("-l %q: exit %d, %q (stderr %q), want %q", c.args, code, out, errs, c.want)
		}
	}
	out, _, _ := runSuite(t, "-l", "-v", "-scene", "PAR-n900")
	if !strings.Contains(out, "SKIPs with fewer than 2 CPUs, where its senders would take turns") {
		t.Errorf("-l -v says nothing of PAR's CPUs: %q", out)
	}
}

// readSamples reads dir's samples.jsonl.
func readSamples(t *testing.T, dir string) []sample.Sample {
	t.Helper()
	s, err := report.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// modTimes is every file of dir with its modification time.
func modTimes(t *testing.T, dir string) map[string]time.Time {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]time.Time{}
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			m[e.Name()] = info.ModTime()
		}
	}
	return m
}

// A kernel report during a scene fails it: its samples stay in
// samples.jsonl, marked with why, and out of the table, which says so.
// -analyze then prints that table, byte for byte, and changes nothing.
func TestKernelReportMarksTheSceneSamples(t *testing.T) {
	needRoot(t)
	out := filepath.Join(t.TempDir(), "res")
	polls := 0
	restore := selftests.ReplaceKernelLog(func() []kmsg.Report {
		if polls++; polls != 1 {
			return nil
		}
		return []kmsg.Report{{Kind: "KASAN", Lines: []string{"BUG: KASAN: slab-use-after-free in netlink_broadcast+0x1e/0x90"}}}
	})
	var tap, errs strings.Builder
	code := selftests.Run(suite, append([]string{"-scene", "C1-n0,C4-all450", "-out", out}, small...), &tap, &errs)
	restore()
	if code != 1 || !strings.Contains(tap.String(), "not ok 1 netlink_mcast_bench.C1-n0[n=10,d=0,routes=64] # kernel report during the case: KASAN") {
		t.Fatalf("exit %d:\n%s", code, tap.String())
	}
	for _, s := range readSamples(t, out) {
		want := ""
		if strings.HasPrefix(s.Scene, "C1-n0") {
			want = "not ok: kernel report during the case: KASAN"
		}
		if s.Failed != want {
			t.Errorf("%s sample %d: failed %q, want %q", s.Scene, s.Sample, s.Failed, want)
		}
	}
	table, _ := os.ReadFile(filepath.Join(out, report.TableFile))
	// U here, P0 and P1 (4 samples) on a kernel with the switch.
	for _, want := range []string{
		`\nleft out: (2|4) samples \(warm-ups included\) of scene runs that did not pass`,
		`\n  C1-n0\[n=10,d=0,routes=64\], boot 0, (U|P0 P1): (2|4) samples: not ok: kernel report during the case: KASAN\n`,
		`\nC4-all450\[n=10,d=0,routes=64\] `,
	} {
		if !regexp.MustCompile(want).Match(table) {
			t.Errorf("table.txt lacks %s:\n%s", want, table)
		}
	}
	if strings.Contains(string(table), "\nC1-n0[n=10,d=0,routes=64] ") {
		t.Errorf("the failed scene has a row:\n%s", table)
	}
	var diag strings.Builder
	for _, l := range strings.Split(strings.TrimRight(string(table), "\n"), "\n") {
		diag.WriteString(strings.TrimRight("# "+l, " ") + "\n")
	}
	if !strings.Contains(tap.String(), diag.String()) {
		t.Errorf("the TAP does not hold the table it wrote:\n%s", tap.String())
	}

	// -analyze prints table.txt and writes nothing (report's tests
	// check the contents too); -analyze DIR -out NEW writes NEW only.
	before := modTimes(t, out)
	stdout, errOut, code := runSuite(t, "-analyze", out)
	if code != 0 || stdout != string(table) {
		t.Errorf("-analyze: exit %d (stderr %q), output differs from table.txt:\n%s", code, errOut, stdout)
	}
	again := filepath.Join(t.TempDir(), "again")
	if _, _, code := runSuite(t, "-analyze", out, "-out", again); code != 0 || !maps.Equal(modTimes(t, out), before) {
		t.Fatalf("-analyze -out: exit %d, or DIR changed", code)
	}
	if t2, _ := os.ReadFile(filepath.Join(again, report.TableFile)); string(t2) != string(table) {
		t.Errorf("-analyze -out NEW: table differs:\n%s", t2)
	}
}

// -inject-stray: a datagram on a socket that must receive nothing, found
// after the round, fails the scene; its samples, taken before the check,
// are marked with the check's own message.
func TestStrayDeliveryMarksTheSceneSamples(t *testing.T) {
	needRoot(t)
	out := filepath.Join(t.TempDir(), "res")
	tap, _, code := runSuite(t, append([]string{"-scene", "C4-all450", "-inject-stray", "-out", out}, small...)...)
	if code != 1 || !strings.Contains(tap, "-inject-stray: one NLMSG_NOOP sent to socket \"f0\" in netns F1") ||
		!strings.Contains(tap, "not ok 1 netlink_mcast_bench.C4-all450[n=10,d=0,routes=64]") {
		t.Fatalf("exit %d:\n%s", code, tap)
	}
	samples := readSamples(t, out)
	if len(samples) != 2 {
		t.Fatalf("%d samples, want the warm-up and the sample", len(samples))
	}
	for _, s := range samples {
		if !regexp.MustCompile(`^not ok: state (U|P0) round 0: socket "f0" in netns F1, which must receive nothing, has a`).MatchString(s.Failed) {
			t.Errorf("sample %d: failed %q", s.Sample, s.Failed)
		}
	}
	table, _ := os.ReadFile(filepath.Join(out, report.TableFile))
	if !strings.Contains(string(table), "0 formal samples") || !strings.Contains(string(table), "nothing to analyse") {
		t.Errorf("table.txt:\n%s", table)
	}
}

// A run whose scenes fail before their first sample writes a results
// directory that says so, with none of an earlier run's figures (CheckNew
// refuses a directory with results in it).
func TestNoSamplesSaysSo(t *testing.T) {
	needRoot(t)
	out := filepath.Join(t.TempDir(), "res")
	// A receive buffer too small for one batch: the warm-up overruns.
	tap, _, code := runSuite(t, "-scene", "C1-n0", "-rounds", "1", "-samples", "1", "-routes", "264", "-rcvbuf", "4096", "-out", out)
	if code != 1 || !strings.Contains(tap, "overrun (ENOBUFS)") {
		t.Fatalf("exit %d:\n%s", code, tap)
	}
	table, _ := os.ReadFile(filepath.Join(out, report.TableFile))
	jsonl, _ := os.ReadFile(filepath.Join(out, report.SamplesFile))
	if !strings.HasPrefix(string(table), "netlink_mcast_bench: 0 formal samples") || !strings.Contains(string(table), "nothing to analyse") || len(jsonl) != 0 {
		t.Errorf("table.txt:\n%s\nsamples.jsonl %q", table, jsonl)
	}
	if !strings.Contains(tap, "# results in "+out+"\n# netlink_mcast_bench: 0 formal samples") {
		t.Errorf("the TAP:\n%s", tap)
	}
}

// PAR's two senders need two CPUs: on one they would take turns, and the
// scene SKIPs saying so.
func TestParallelSceneSkipsOnOneCPU(t *testing.T) {
	needRoot(t)
	out, code := runChild(t, childOpts{oneCPU: true}, append([]string{"-scene", "PAR-n900,C1-n0"}, small...)...)
	if code != 0 || !strings.Contains(out, "ok 1 netlink_mcast_bench.PAR-n900[n=10,d=0,routes=64] # SKIP two senders at once need two CPUs, and this program may run on 1: they would take turns") ||
		!strings.Contains(out, "\nok 2 netlink_mcast_bench.C1-n0[n=10,d=0,routes=64] # time=") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// childOpts say how to start the bench in a process of its own.
type childOpts struct {
	stdout   *os.File                     // nil: a pipe read into the output
	userns   bool                         // in a new user and network namespace, as unshare -Urn
	drop     []uintptr                    // capabilities dropped from the bounding set
	oneCPU   bool                         // pinned to one CPU (the first it may use)
	nofile   int                          // > 0: RLIMIT_NOFILE, soft and hard, from the child's start
	onSample func(*os.Process, io.Closer) // called on the first "# sample:" line
}

// runChild runs the bench (this test binary, TestMain) with args and
// returns its stdout and stderr, and its exit code; killed by a signal is
// a test failure.
func runChild(t *testing.T, o childOpts, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	if o.nofile > 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d", nofileEnv, o.nofile))
	}
	var errs bytes.Buffer
	cmd.Stderr = &errs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var pipe io.ReadCloser
	if o.stdout != nil {
		cmd.Stdout = o.stdout
	} else {
		var err error
		if pipe, err = cmd.StdoutPipe(); err != nil {
			t.Fatal(err)
		}
	}
	if err := childproc.Start(cmd, childproc.Limits{Drop: o.drop, OneCPU: o.oneCPU, UserNS: o.userns}); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(2*time.Minute, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	defer timer.Stop()
	var out strings.Builder
	if pipe != nil {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		called := false
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			if o.onSample != nil && !called && strings.HasPrefix(sc.Text(), "# sample: ") {
				called = true
				o.onSample(cmd.Process, pipe)
			}
		}
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws := ee.Sys().(syscall.WaitStatus); ws.Signaled() {
			t.Fatalf("killed by %v:\n%s\nstderr:\n%s", ws.Signal(), out.String(), errs.String())
		}
	} else if err != nil && !strings.Contains(err.Error(), "file already closed") {
		t.Fatal(err)
	}
	return out.String() + "stderr:\n" + errs.String(), cmd.ProcessState.ExitCode()
}

// Without a privilege the bench needs, the whole program SKIPs (exit 4)
// with the reason; without one it does not need (CAP_NET_BROADCAST), it
// runs; without CAP_SYSLOG it cannot read the kernel log, says so once,
// and runs (it used to panic on the nil watcher).
func TestPrivileges(t *testing.T) {
	needRoot(t)
	args := append([]string{"-scene", "C4-all450,C1-n0"}, small...)
	for _, c := range []struct {
		name string
		o    childOpts
		args []string
		code int
		want string
	}{
		{"unshare -Urn", childOpts{userns: true}, args, 4, "1..0 # SKIP needs CAP_NET_ADMIN in the initial user namespace (SO_RCVBUFFORCE)"},
		{"no CAP_NET_ADMIN", childOpts{drop: []uintptr{unix.CAP_NET_ADMIN}}, args, 4, "1..0 # SKIP must be run as root (needs CAP_NET_ADMIN)"},
		{"no CAP_SYS_ADMIN", childOpts{drop: []uintptr{unix.CAP_SYS_ADMIN}}, args, 4, "1..0 # SKIP must be run as root (needs CAP_SYS_ADMIN)"},
		// C4 sets NETLINK_LISTEN_ALL_NSID, which needs it; C1 does not.
		{"no CAP_NET_BROADCAST", childOpts{drop: []uintptr{unix.CAP_NET_BROADCAST}}, args, 0,
			"\nok 1 netlink_mcast_bench.C4-all450[n=10,d=0,routes=64] # SKIP NETLINK_LISTEN_ALL_NSID needs CAP_NET_BROADCAST, which this process lacks time="}, // and exit 0: C1 passed
		{"no CAP_SYSLOG", childOpts{drop: []uintptr{unix.CAP_SYSLOG}}, args, 0, "\nok 2 netlink_mcast_bench.C1-n0[n=10,d=0,routes=64] # "},
		// A file limit too low for a scene's sockets SKIPs the scene.
		{"RLIMIT_NOFILE 64", childOpts{nofile: 64}, []string{"-scene", "C4-all450", "-n", "200", "-rounds", "1", "-samples", "1", "-routes", "64"}, 4,
			"\nok 1 netlink_mcast_bench.C4-all450[n=200,d=0,routes=64] # SKIP RLIMIT_NOFILE (64, hard 64) is too low for this scene's sockets: "},
	} {
		if why := childproc.UserNamespaces(); c.o.userns && why != "" {
			t.Logf("%s: not tried, this kernel makes no user namespaces (%s)", c.name, why)
			continue
		}
		out, code := runChild(t, c.o, c.args...)
		if code != c.code || !strings.Contains(out, c.want) || strings.Contains(out, "panic") {
			t.Errorf("%s: exit %d (want %d), want %q:\n%s", c.name, code, c.code, c.want, out)
		}
		if c.name == "no CAP_SYSLOG" && !strings.Contains(out, "# kernel log not watched: open /dev/kmsg: operation not permitted\n") {
			t.Logf("without CAP_SYSLOG the kernel log was still readable (kernel.dmesg_restrict=0?):\n%s", out)
		} else if c.name == "no CAP_SYSLOG" && !strings.Contains(out, "\nok 2 netlink_mcast_bench.C1-n0[n=10,d=0,routes=64] # kernel log not watched: open /dev/kmsg: operation not permitted time=") {
			t.Errorf("%s: the passing scene's line does not say the log was not watched:\n%s", c.name, out)
		}
	}
}

// A stop signal (the kselftest runner's SIGTERM, ^C, a closed terminal's
// SIGHUP) during a scene ends that scene as interrupted, with its result
// line and the Totals last, restores the switch, and writes the results
// directory with the samples gathered so far, marked. stdout closed
// under the bench (`| head`) or full ends it the same way, exit 1, and
// stderr says why: never a death by SIGPIPE.
func TestStopsEndTheRunCleanly(t *testing.T) {
	needRoot(t)
	before := selftests.RouteMCIndex()
	// -boot 1 starts with P1: on a kernel with the switch (default 0) the
	// bench holds it at 1 when the stop comes, and must write 0 back.
	long := []string{"-scene", "C1-n0", "-rounds", "1", "-samples", "1000000", "-routes", "64", "-boot", "1"}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		name := unix.SignalName(sig)
		out := filepath.Join(t.TempDir(), "res")
		got, code := runChild(t, childOpts{onSample: func(p *os.Process, _ io.Closer) { p.Signal(sig) }},
			append(long, "-out", out)...)
		tap, _, _ := strings.Cut(got, "stderr:\n")
		if code != 1 || !strings.Contains(tap, "\nnot ok 1 netlink_mcast_bench.C1-n0[routes=64] # interrupted by "+name+" time=") ||
			!strings.HasSuffix(tap, "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0\n") {
			t.Errorf("%s: exit %d:\n%s", name, code, got)
			continue
		}
		samples := readSamples(t, out)
		if len(samples) == 0 {
			t.Errorf("%s: no samples kept", name)
		}
		for _, s := range samples {
			if s.Failed != "not ok: interrupted by "+name {
				t.Errorf("%s: sample %d marked %q", name, s.Sample, s.Failed)
				break
			}
		}
		if after := selftests.RouteMCIndex(); after != before {
			t.Errorf("%s: the switch was %s, is %s", name, before, after)
		}
	}

	// stdout closed after the first sample: EPIPE, not SIGPIPE.
	out := filepath.Join(t.TempDir(), "res")
	got, code := runChild(t, childOpts{onSample: func(_ *os.Process, pipe io.Closer) { pipe.Close() }}, append(long, "-out", out)...)
	if code != 1 || !strings.Contains(got, "netlink_mcast_bench: writing TAP to stdout: write /dev/stdout: broken pipe") {
		t.Errorf("stdout closed: exit %d:\n%s", code, got)
	}
	if samples := readSamples(t, out); len(samples) == 0 {
		t.Error("stdout closed: no samples kept")
	} else if samples[0].Failed != "not ok: interrupted by stdout closed (EPIPE)" {
		t.Errorf("stdout closed: %d samples kept, the first marked %q", len(samples), samples[0].Failed)
	}

	// stdout on /dev/full: nothing can be printed, and stderr says so.
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	got, code = runChild(t, childOpts{stdout: full}, append([]string{"-scene", "C1-n0"}, small...)...)
	if code != 1 || !strings.Contains(got, "netlink_mcast_bench: writing TAP to stdout: write /dev/stdout: no space left on device") {
		t.Errorf("stdout on /dev/full: exit %d:\n%s", code, got)
	}
}

// The sample records carry the CPUs the bench could use.
func TestSamplesRecordCPUs(t *testing.T) {
	needRoot(t)
	tap, _, code := runSuite(t, append([]string{"-scene", "C1-n0"}, small...)...)
	var s sample.Sample
	for _, l := range strings.Split(tap, "\n") {
		if js, ok := strings.CutPrefix(l, "# sample: "); ok {
			if err := json.Unmarshal([]byte(js), &s); err != nil {
				t.Fatal(err)
			}
		}
	}
	if code != 0 || s.CPUs != usableCPUs() || s.CPUs < 1 {
		t.Errorf("exit %d, cpus %d (want %d):\n%s", code, s.CPUs, usableCPUs(), tap)
	}
}
