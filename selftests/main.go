package selftests

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

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
	// The cleanup it returns runs on every way out of Main: after the
	// last case, after a case panicked, and on SIGTERM.
	Setup func(log func(format string, args ...any)) (cleanup func(), err error)
}

// interrupted is set by the first SIGTERM or SIGINT. Waits in the harness
// give up when they see it, so the running case ends quickly and cleans up.
var interrupted atomic.Bool

// Interrupted reports whether the program was asked to stop.
func Interrupted() bool { return interrupted.Load() }

// Main runs the suite with the program's arguments and returns the exit code.
func Main(s Suite) int {
	return run(s, os.Args[1:], os.Stdout, os.Stderr)
}

type nameList []string

func (l *nameList) String() string     { return strings.Join(*l, ",") }
func (l *nameList) Set(v string) error { *l = append(*l, v); return nil }

func run(s Suite, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(s.Name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	list := fs.Bool("l", false, "list the case names and exit")
	var only nameList
	fs.Var(&only, "t", "run only case `NAME` (repeatable)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s [-l] [-t NAME]...\n\nA kselftest: prints TAP, exits 0 (pass), 1 (fail) or 4 (skip).\n\n", s.Name)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 1
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", s.Name, fs.Arg(0))
		fs.Usage()
		return 1
	}
	if *list {
		for _, c := range s.Cases {
			fmt.Fprintln(stdout, c.Name)
		}
		return 0
	}
	cases, err := selectCases(s.Cases, only)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", s.Name, err)
		fs.Usage()
		return 1
	}

	w := ktap.New(stdout)
	if reason := preflight(); reason != "" {
		return w.SkipAll(reason)
	}

	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(signals)
	go func() {
		// The kselftest runner sends two SIGTERMs on a timeout: the first
		// asks us to stop and clean up, the second is ignored because
		// this goroutine keeps receiving.
		for sig := range signals {
			if !interrupted.Swap(true) {
				w.Diag("%v: stopping after the running case", sig)
			}
		}
	}()

	w.Plan(len(cases))
	w.Diag("netlink_route_mc_index=%s", RouteMCIndex())
	if s.Setup != nil {
		cleanup, err := s.Setup(w.Diag)
		if err != nil {
			w.Diag("setup: %v", err)
			for _, c := range cases {
				w.Result(s.Name+"."+c.Name, ktap.Fail, "", -1)
			}
			return w.Finish()
		}
		if cleanup != nil {
			defer cleanup()
		}
	}
	for _, c := range cases {
		if Interrupted() {
			w.Diag("interrupted: %s and the cases after it did not run", c.Name)
			break
		}
		start := time.Now()
		res, reason := runCase(c, w)
		w.Result(s.Name+"."+c.Name, res, reason, time.Since(start))
	}
	return w.Finish()
}

func selectCases(all []Case, only []string) ([]Case, error) {
	if len(only) == 0 {
		return all, nil
	}
	byName := map[string]Case{}
	for _, c := range all {
		byName[c.Name] = c
	}
	var out []Case
	for _, n := range only {
		c, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("no case named %q (-l lists them)", n)
		}
		out = append(out, c)
	}
	return out, nil
}

// preflight returns why no case can run here, or "". Tests replace it.
var preflight = cannotRun

// cannotRun returns why no case can run here, or "".
func cannotRun() string {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return "capget: " + err.Error()
	}
	for _, c := range []struct {
		bit  uint
		name string
	}{{unix.CAP_SYS_ADMIN, "CAP_SYS_ADMIN"}, {unix.CAP_NET_ADMIN, "CAP_NET_ADMIN"}} {
		if data[c.bit/32].Effective&(1<<(c.bit%32)) == 0 {
			return "must be run as root (needs " + c.name + ")"
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

// caseT is the T of a case run by Main. Like testing.T, FailNow, Fatalf and
// Skipf end the case's goroutine with runtime.Goexit; cleanups run in
// reverse order on every way out.
type caseT struct {
	name string
	w    *ktap.Writer

	mu       sync.Mutex
	failed   bool
	result   ktap.Result
	reason   string
	cleanups []func()
}

func (t *caseT) Helper()      {}
func (t *caseT) Name() string { return t.name }

func (t *caseT) Logf(format string, args ...any) {
	t.w.Diag("%s: %s", t.name, fmt.Sprintf(format, args...))
}

func (t *caseT) Errorf(format string, args ...any) {
	t.Logf(format, args...)
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
}

func (t *caseT) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	runtime.Goexit()
}

func (t *caseT) Skipf(format string, args ...any) {
	t.mu.Lock()
	if t.result == ktap.Pass {
		t.result, t.reason = ktap.Skip, fmt.Sprintf(format, args...)
	}
	t.mu.Unlock()
	runtime.Goexit()
}

func (t *caseT) xfail(reason string) {
	t.mu.Lock()
	t.result, t.reason = ktap.XFail, reason
	t.mu.Unlock()
	runtime.Goexit()
}

func (t *caseT) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}

func (t *caseT) Cleanup(fn func()) {
	t.mu.Lock()
	t.cleanups = append(t.cleanups, fn)
	t.mu.Unlock()
}

func (t *caseT) runCleanups() {
	for {
		t.mu.Lock()
		n := len(t.cleanups)
		if n == 0 {
			t.mu.Unlock()
			return
		}
		fn := t.cleanups[n-1]
		t.cleanups = t.cleanups[:n-1]
		t.mu.Unlock()
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("panic in cleanup: %v\n%s", p, debug.Stack())
				}
			}()
			fn()
		}()
	}
}

func runCase(c Case, w *ktap.Writer) (ktap.Result, string) {
	t := &caseT{name: c.Name, w: w}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer t.runCleanups()
		defer func() {
			if p := recover(); p != nil {
				t.Errorf("panic: %v\n%s", p, debug.Stack())
			}
		}()
		c.Run(t)
	}()
	<-done
	if t.failed {
		return ktap.Fail, ""
	}
	return t.result, t.reason
}
