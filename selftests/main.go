// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"

	"golang.org/x/sys/unix"

	"nlmcast/ktap"
	"nlmcast/selftests/mcswitch"
	"nlmcast/selftests/netns"
)

// Suite is a kselftest program: a name (the TAP prefix of every case) and
// its cases, in the order they run.
type Suite struct {
	Name  string
	Cases []Case
	// Setup runs once before the first case, after the privilege checks.
	// The cleanup it returns runs on every way out of Main, before the
	// Totals line: after the last case, after a case failed, panicked or
	// passed its deadline, and on SIGTERM.
	Setup func(log func(format string, args ...any)) (cleanup func(), err error)
}

// DefaultDeadline is the per-case deadline unless -deadline or
// Case.Timeout says otherwise. The slowest case, netns_churn on the
// KASAN+lockdep kernel under TCG on a loaded 2-CPU host, took 14 s, and a
// failing case also waits out its polling deadlines (10 s for a
// namespace's death, 5 s for a reply): 90 s is over 6 times the first and
// leaves most of the runner's 300 s to the other cases.
const DefaultDeadline = 90 * time.Second

// stop is the first SIGTERM or SIGINT. Waits in the harness give up when
// they see it, so the running case ends quickly and cleans up.
var stop struct {
	once sync.Once
	done chan struct{} // closed by the first signal
	sig  atomic.Value  // os.Signal
}

func init() {
	stop.done = make(chan struct{})
	// A kselftest program catches the signals from its first moment (the
	// runtime's own start-up, a millisecond, is the only window left), so
	// that a SIGTERM during the pre-run checks still ends in TAP with a
	// Totals line. A go test binary (pkg.test) keeps the default ^C.
	if !strings.HasSuffix(os.Args[0], ".test") {
		catchSignals()
	}
}

// catchSignals notes the first SIGTERM or SIGINT until the program ends
// (or, from run, until run returns: the returned function stops it).
func catchSignals() (release func()) {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		for sig := range signals {
			noteSignal(sig)
		}
	}()
	return func() { signal.Stop(signals) }
}

// Interrupted reports whether the program was asked to stop.
func Interrupted() bool {
	select {
	case <-stop.done:
		return true
	default:
		return false
	}
}

// interruptedBy is the result note of a case the signal cut short.
func interruptedBy() string {
	name := "a signal"
	if s, ok := stop.sig.Load().(os.Signal); ok {
		name = signalName(s)
	}
	return "interrupted by " + name
}

func signalName(s os.Signal) string {
	if sig, ok := s.(syscall.Signal); ok {
		if n := unix.SignalName(sig); n != "" {
			return n
		}
	}
	return s.String()
}

func noteSignal(sig os.Signal) {
	stop.once.Do(func() {
		stop.sig.Store(sig)
		close(stop.done)
	})
}

// verbose is -v: every transcript is logged, also when it is as expected.
var verbose atomic.Bool

// Verbose reports whether matching transcripts are logged too: -v of a
// kselftest program, or go test -v.
func Verbose() bool {
	if verbose.Load() {
		return true
	}
	f := flag.Lookup("test.v")
	return f != nil && f.Value.String() != "false"
}

// Main runs the suite with the program's arguments and returns the exit code.
func Main(s Suite) int {
	return run(s, os.Args[1:], os.Stdout, os.Stderr)
}

type nameList []string

func (l *nameList) String() string     { return strings.Join(*l, ",") }
func (l *nameList) Set(v string) error { *l = append(*l, v); return nil }

func run(s Suite, args []string, stdout, stderr io.Writer) int {
	// The handler comes first (also when init installed one already):
	// from here on a SIGTERM or SIGINT ends the program through the one
	// path below, with TAP and the Totals line last. The kselftest runner
	// may send more than one; only the first counts.
	defer catchSignals()()

	fs := flag.NewFlagSet(s.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are printed below, quoted
	list := fs.Bool("l", false, "list the case names (with -t: the ones named) and exit")
	v := fs.Bool("v", false, "print every socket's transcript, also when it is as expected")
	deadline := fs.Duration("deadline", DefaultDeadline, "fail a case still running after `D` and go on to the next")
	var only nameList
	fs.Var(&only, "t", "run only case `NAME` (repeatable)")
	usage := func() {
		fmt.Fprintf(stderr, "usage: %s [-l] [-v] [-deadline D] [-t NAME]...\n\nA kselftest: prints TAP, exits 0 (pass), 1 (fail) or 4 (skip).\n\n", s.Name)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			usage()
			return ktap.ExitPass
		}
		fmt.Fprintf(stderr, "%s: %s\n", s.Name, flagError(err))
		usage()
		return ktap.ExitFail
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", s.Name, fs.Arg(0))
		usage()
		return ktap.ExitFail
	}
	if *deadline <= 0 {
		fmt.Fprintf(stderr, "%s: -deadline %v: want a positive duration\n", s.Name, *deadline)
		usage()
		return ktap.ExitFail
	}
	cases, err := selectCases(s.Cases, only)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", s.Name, err)
		usage()
		return ktap.ExitFail
	}
	if *list {
		for _, c := range cases {
			if _, err := fmt.Fprintln(stdout, c.Name); err != nil {
				fmt.Fprintf(stderr, "%s: writing the list to stdout: %v\n", s.Name, err)
				return ktap.ExitFail
			}
		}
		return ktap.ExitPass
	}
	verbose.Store(*v)
	defer verbose.Store(false)

	w := ktap.New(stdout)
	code := runSuite(s, cases, w, *deadline)
	if err := w.Err(); err != nil {
		fmt.Fprintf(stderr, "%s: writing TAP to stdout: %v\n", s.Name, err)
		return ktap.ExitFail
	}
	return code
}

// runSuite prints the TAP stream of cases and returns the exit code.
func runSuite(s Suite, cases []Case, w *ktap.Writer, deadline time.Duration) int {
	if reason := preflight(); reason != "" {
		return w.SkipAll(reason)
	}
	w.Plan(len(cases))
	w.Diag("netlink_route_mc_index=%s", RouteMCIndex())
	h := watchKernel(w)
	runCases(s, cases, w, deadline, h)
	h.finish(w)
	return w.Finish()
}

// runCases runs the suite's Setup, the cases and the Setup's cleanup, so
// that whatever the cleanup logs comes before the Totals line.
func runCases(s Suite, cases []Case, w *ktap.Writer, deadline time.Duration, h *health) {
	if s.Setup != nil {
		cleanup, err := s.Setup(w.Diag)
		if err != nil {
			w.Diag("setup: %v", err)
			for _, c := range cases {
				w.Result(s.Name+"."+c.Name, ktap.Fail, "setup failed", -1)
			}
			return
		}
		if cleanup != nil {
			defer cleanup()
		}
	}
	for i, c := range cases {
		if Interrupted() {
			w.Diag("%s: %s and the %d cases after it did not run", interruptedBy(), c.Name, len(cases)-i-1)
			return
		}
		start := time.Now()
		res, reason := runCase(c, w, deadline)
		res, reason = h.judge(w, c.Name, res, reason)
		w.Result(s.Name+"."+c.Name, res, reason, time.Since(start))
	}
}

// flagError is a flag parsing error for stderr, with the offending
// argument quoted so that control characters in it show as escapes.
func flagError(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return fmt.Sprintf("unknown flag %q", name)
	}
	if strings.IndexFunc(msg, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(msg)
	}
	return msg
}

// selectCases returns the cases -t names, in the order given, each once
// however often it is named; all of them without -t.
func selectCases(all []Case, only []string) ([]Case, error) {
	if len(only) == 0 {
		return all, nil
	}
	byName := map[string]Case{}
	for _, c := range all {
		byName[c.Name] = c
	}
	var out []Case
	seen := map[string]bool{}
	for _, n := range only {
		c, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("no case named %q (-l lists them)", n)
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, c)
		}
	}
	return out, nil
}

// preflight returns why no case can run here, or "". Tests replace it.
var preflight = cannotRun

// cannotRun returns why no case can run here, or "".
func cannotRun() string {
	for _, c := range []int{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN} {
		has, err := HasCapability(c)
		if err != nil {
			return err.Error()
		}
		if !has {
			return "must be run as root (needs " + CapName(c) + ")"
		}
	}
	ns, err := netns.New("probe")
	if err != nil {
		return "cannot create a network namespace: " + err.Error()
	}
	ns.Close()
	return ""
}

// RouteMCIndex reads net.core.netlink_route_mc_index in the initial
// network namespace: "0", "1", or "absent" on kernels without the feature.
func RouteMCIndex() string {
	sw, skip, err := mcswitch.Probe()
	switch {
	case err != nil:
		return "unknown (" + err.Error() + ")"
	case skip == mcswitch.NotSupported:
		return "absent"
	case sw == nil:
		return "unknown (" + skip + ")"
	}
	defer sw.Close()
	v, err := sw.Read()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return v
}
