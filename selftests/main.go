// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	"golang.org/x/sys/unix"

	"nlmcast/ktap"
	"nlmcast/selftests/mcswitch"
	"nlmcast/selftests/netns"
)

// defaultDeadline is the per-case deadline unless -deadline or
// Case.Timeout says otherwise. The slowest case, netns_churn on the
// KASAN+lockdep kernel under TCG on a loaded 2-CPU host, took 14 s, and a
// failing case also waits out its polling deadlines (10 s for a
// namespace's death, 5 s for a reply): 90 s is over 6 times the first and
// leaves most of the runner's 300 s to the other cases.
const defaultDeadline = 90 * time.Second

// verbose is -v: every transcript is logged, also when it is as expected.
var verbose atomic.Bool

// inProgram is set while Run runs a program: its own -v alone then
// decides, whatever flags the process was started with (a program's
// tests run it under go test, whose -test.v is not the program's -v).
var inProgram atomic.Bool

// Verbose reports whether matching transcripts are logged too: -v of a
// kselftest program, or, for cases run by go test, go test -v.
func Verbose() bool {
	if inProgram.Load() {
		return verbose.Load()
	}
	f := flag.Lookup("test.v")
	return f != nil && f.Value.String() != "false"
}

// Main runs the suite with the program's arguments and returns the exit code.
func Main(s Suite) int {
	return Run(s, os.Args[1:], os.Stdout, os.Stderr)
}

// options are the shared flags, parsed.
type options struct {
	list     bool
	only     []string
	deadline time.Duration
	explicit bool // -deadline was given: it overrides Case.Timeout
	jobs     int
	verbose  bool
}

// Run is Main with the arguments and outputs given: for a program's tests.
func Run(s Suite, args []string, stdout, stderr io.Writer) int {
	// The handler comes first (also when init installed one already):
	// from here on a stop signal ends the program through the one path
	// below, with TAP and the Totals line last. The kselftest runner may
	// send more than one SIGTERM; only the first counts.
	defer catchSignals()()
	inProgram.Store(true)
	defer inProgram.Store(false)
	defer verbose.Store(false)

	opt, usage, code, ok := parseArgs(s, args, stdout, stderr)
	if !ok {
		return code
	}
	if s.Instead != nil {
		if code, ran := s.Instead(stdout); ran {
			return code
		}
	}
	cases, err := suiteCases(s)
	if err == nil {
		cases, err = selectCases(cases, opt.only)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", s.Name, err)
		usage(stderr)
		return ktap.ExitFail
	}
	if opt.list {
		return list(s, cases, opt.verbose, stdout, stderr)
	}

	w := ktap.New(stdout)
	w.OnError(stdoutFailed)
	code = runProgram(s, cases, w, opt)
	if err := w.Err(); err != nil {
		fmt.Fprintf(stderr, "%s: writing TAP to stdout: %v\n", s.Name, err)
		return ktap.ExitFail
	}
	return code
}

// parseArgs parses the shared flags, the program's own and the aliases.
// ok false means: exit with code (help, or a usage error already said).
// Help goes to stdout (`prog -h | less`), exit 0; a usage error goes to
// stderr with the usage, exit 1 (KSFT_FAIL), so that the runner's log
// shows it.
func parseArgs(s Suite, args []string, stdout, stderr io.Writer) (opt options, usage func(io.Writer), code int, ok bool) {
	fs := flag.NewFlagSet(s.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are printed below, quoted
	fs.BoolVar(&opt.list, "l", false, "list the case names (with -v: and what each checks) and exit")
	fs.BoolVar(&opt.verbose, "v", false, "print every socket's transcript and every detail, also when it is as expected")
	fs.DurationVar(&opt.deadline, "deadline", defaultDeadline, "fail a case still running after `D` and go on to the next (overrides a case's own deadline)")
	fs.IntVar(&opt.jobs, "j", defaultJobs(), "run up to `N` independent cases at once (1: one at a time)")
	fs.Func("t", "run only case `NAME` (repeatable; -l lists the names)", func(v string) error {
		opt.only = append(opt.only, v)
		return nil
	})
	shared := map[string]bool{"l": true, "v": true, "deadline": true, "j": true, "t": true}
	if s.Flags != nil {
		s.Flags(fs)
	}
	aliases := map[string]bool{}
	for _, a := range s.Aliases {
		addAlias(fs, a, &opt)
		aliases[a.Name] = true
	}
	usage = func(out io.Writer) { printUsage(out, s, fs, shared, aliases) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			var b strings.Builder
			usage(&b)
			if _, err := io.WriteString(stdout, b.String()); err != nil {
				fmt.Fprintf(stderr, "%s: writing the help to stdout: %v\n", s.Name, err)
				return opt, usage, ktap.ExitFail, false
			}
			return opt, usage, ktap.ExitPass, false
		}
		fmt.Fprintf(stderr, "%s: %s\n", s.Name, flagError(err))
		usage(stderr)
		return opt, usage, ktap.ExitFail, false
	}
	fs.Visit(func(f *flag.Flag) { opt.explicit = opt.explicit || f.Name == "deadline" })
	bad := func(format string, a ...any) (options, func(io.Writer), int, bool) {
		fmt.Fprintf(stderr, "%s: %s\n", s.Name, fmt.Sprintf(format, a...))
		usage(stderr)
		return opt, usage, ktap.ExitFail, false
	}
	switch {
	case fs.NArg() > 0:
		return bad("unexpected argument %q", fs.Arg(0))
	case opt.deadline <= 0:
		return bad("-deadline %v: want a positive duration", opt.deadline)
	case opt.jobs < 1:
		return bad("-j %d: want at least 1", opt.jobs)
	}
	if s.Check != nil {
		if err := s.Check(); err != nil {
			return bad("%v", err)
		}
	}
	verbose.Store(opt.verbose)
	return opt, usage, 0, true
}

// defaultJobs is -j's default: one more than the CPUs the program may
// use, since the cases that take longest wait for the kernel (namespace
// teardown) rather than for a CPU. Measured (median of 20 runs): the
// semantics program natively on 2 CPUs, -j 2 368 ms, -j 3 370 ms; both
// suites on P in TCG with 2 CPUs, -j 2 9.9 s, -j 3 9.1 s.
func defaultJobs() int { return runtime.GOMAXPROCS(0) + 1 }

// addAlias defines an old spelling of a shared flag.
func addAlias(fs *flag.FlagSet, a Alias, opt *options) {
	switch a.For {
	case "l":
		fs.BoolFunc(a.Name, "old spelling of -l", func(string) error {
			opt.list = true
			return nil
		})
	case "t":
		what := "-t NAME"
		if a.List {
			what = "-t for each NAME of a comma-separated list"
		}
		if a.All != "" {
			what += fmt.Sprintf("; %q: every case", a.All)
		}
		fs.Func(a.Name, "old spelling of "+what, func(v string) error {
			if v == a.All && a.All != "" {
				return nil
			}
			names := []string{v}
			if a.List {
				names = strings.Split(v, ",")
			}
			for _, n := range names {
				if n = strings.TrimSpace(n); n != "" {
					opt.only = append(opt.only, n)
				}
			}
			return nil
		})
	default:
		panic(fmt.Sprintf("selftests: alias -%s for unknown flag -%s", a.Name, a.For))
	}
}

// printUsage prints -h: the program, the exit codes, then the shared
// flags (-h among them), the program's own and the old spellings, each
// group sorted.
func printUsage(out io.Writer, s Suite, fs *flag.FlagSet, shared, aliases map[string]bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: %s [flags]\n\n", s.Name)
	if s.About != "" {
		fmt.Fprintf(&b, "%s\n\n", s.About)
	}
	fmt.Fprintf(&b, "A kselftest: prints TAP, exits 0 (pass, some cases skipped), 1 (a failure) or 4 (every case\n"+
		"skipped). Under the kselftest runner, pass flags with %s.\n", argsVariable(s.Name))
	groups := []struct {
		title string
		in    func(name string) bool
		more  []string
	}{
		{"Flags of every netlink_mcast program:", func(n string) bool { return shared[n] }, []string{"  -h\n    \tprint this help and exit\n"}},
		{"Flags of " + s.Name + ":", func(n string) bool { return !shared[n] && !aliases[n] }, nil},
		{"Old spellings, kept as aliases:", func(n string) bool { return aliases[n] }, nil},
	}
	for _, g := range groups {
		lines := g.more
		fs.VisitAll(func(f *flag.Flag) {
			switch {
			case !g.in(f.Name):
			case f.Name == "deadline":
				lines = append(lines, deadlineUsage(f, s))
			default:
				lines = append(lines, flagUsage(f))
			}
		})
		if len(lines) == 0 {
			continue
		}
		sort.Strings(lines)
		fmt.Fprintf(&b, "\n%s\n%s", g.title, strings.Join(lines, ""))
	}
	io.WriteString(out, b.String())
}

// deadlineUsage is -deadline's entry, with the deadline the program's
// cases really get without it: the frame's default, unless the program
// says otherwise (Suite.CaseDeadlines, for a table made from its flags)
// or cases of its table set their own (Case.Timeout).
func deadlineUsage(f *flag.Flag, s Suite) string {
	name, usage := flag.UnquoteUsage(f)
	def := s.CaseDeadlines
	if def == "" {
		def = tableDeadlines(s.Cases)
	}
	text := fmt.Sprintf("%s (default: %s)", usage, def)
	return fmt.Sprintf("  -%s %s\n    \t%s\n", f.Name, name, strings.ReplaceAll(text, "\n", "\n    \t"))
}

// tableDeadlines says what deadline each case of a table gets without
// -deadline: defaultDeadline, and each other Timeout with the cases that
// set it.
func tableDeadlines(cases []Case) string {
	var timeouts []time.Duration
	byTimeout := map[time.Duration][]string{}
	for _, c := range cases {
		if c.Timeout > 0 && c.Timeout != defaultDeadline {
			if byTimeout[c.Timeout] == nil {
				timeouts = append(timeouts, c.Timeout)
			}
			byTimeout[c.Timeout] = append(byTimeout[c.Timeout], c.Name)
		}
	}
	parts := []string{defaultDeadline.String() + " a case"}
	sort.Slice(timeouts, func(i, j int) bool { return timeouts[i] < timeouts[j] })
	for _, d := range timeouts {
		parts = append(parts, fmt.Sprintf("%v for %s", d, strings.Join(byTimeout[d], ", ")))
	}
	return strings.Join(parts, "; ")
}

// flagUsage is one flag's entry, as flag.PrintDefaults formats it.
func flagUsage(f *flag.Flag) string {
	name, usage := flag.UnquoteUsage(f)
	line := "  -" + f.Name
	if name != "" {
		line += " " + name
	}
	line += "\n    \t" + strings.ReplaceAll(usage, "\n", "\n    \t")
	switch def := f.DefValue; {
	case def == "" || def == "false" || def == "0" || def == "0s":
	case isString(f):
		line += fmt.Sprintf(" (default %q)", def)
	default:
		line += fmt.Sprintf(" (default %s)", def)
	}
	return line + "\n"
}

func isString(f *flag.Flag) bool {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	_, str := g.Get().(string)
	return str
}

// argsVariable is the environment variable through which the kselftest
// runner passes a program its arguments: KSELFTEST_<NAME>_ARGS, NAME
// upper-cased with every other character than [A-Za-z0-9_] made '_'.
func argsVariable(program string) string {
	b := []byte(strings.ToUpper(program))
	for i, c := range b {
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	return "KSELFTEST_" + string(b) + "_ARGS"
}

// suiteCases returns the program's case table, checked: every case named,
// no name twice.
func suiteCases(s Suite) ([]Case, error) {
	cases := s.Cases
	if s.MakeCases != nil {
		var err error
		if cases, err = s.MakeCases(); err != nil {
			return nil, err
		}
	}
	if err := CheckCases(cases); err != nil {
		return nil, fmt.Errorf("the case table: %w", err)
	}
	return cases, nil
}

// CheckCases reports a case table's mistakes: a case without a name or a
// Run, a name used twice, a name TAP cannot carry.
func CheckCases(cases []Case) error {
	seen := map[string]bool{}
	for i, c := range cases {
		switch {
		case c.Name == "":
			return fmt.Errorf("case %d has no name", i+1)
		case c.Run == nil:
			return fmt.Errorf("case %q has no Run", c.Name)
		case seen[c.Name]:
			return fmt.Errorf("two cases are named %q", c.Name)
		case ktap.Name(c.Name) != c.Name || strings.ContainsAny(c.Name, " \t"):
			return fmt.Errorf("case name %q has characters a TAP result name cannot carry", c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

// list prints the case names, one a line; with -v (the program's, never
// go test's), what each checks.
func list(s Suite, cases []Case, verbose bool, stdout, stderr io.Writer) int {
	for _, c := range cases {
		line := c.Name
		if verbose && c.About != "" {
			line += "\t" + c.About
		}
		if _, err := fmt.Fprintln(stdout, line); err != nil {
			fmt.Fprintf(stderr, "%s: writing the list to stdout: %v\n", s.Name, err)
			return ktap.ExitFail
		}
	}
	return ktap.ExitPass
}

// runProgram prints the TAP stream of cases and returns the exit code.
// The privilege checks, which only read the process's own state, come
// first: a program that cannot run at all says so in its plan (`1..0 #
// SKIP`). The plan comes next, before anything that waits on the kernel
// or on another program; each step from there to the first case has a
// deadline (await), and a step that does not return in time ends the
// stream with a Bail out! naming it.
func runProgram(s Suite, cases []Case, w *ktap.Writer, opt options) int {
	if reason := preflight(); reason != "" {
		return w.SkipAll(reason)
	}
	if s.Needs != nil {
		if reason := s.Needs(); reason != "" {
			return w.SkipAll(reason)
		}
	}
	w.Plan(len(cases))
	bail := func(why string) int {
		w.BailOut(why)
		return w.Finish()
	}
	var err error
	if g := await(w, "a NETLINK_ROUTE socket in the program's network namespace", stepDeadline, func() { err = routeSocketProbe() }); g != "" {
		return bail(g)
	}
	if err != nil {
		return bail(err.Error())
	}
	var ns *netns.NS
	if g := await(w, "a network namespace (the check that one can be made)", stepDeadline, func() { ns, err = probeNamespace() }); g != "" {
		return bail(g)
	}
	if err != nil {
		skipEvery(s, cases, w, "cannot create a network namespace: "+err.Error())
		return w.Finish()
	}
	h, g := watchKernel(s.Name, ns, w)
	if g != "" {
		return bail(g)
	}
	h.sayUnwatched(w)
	var index string
	if g := await(w, "net.core.netlink_route_mc_index to be read", stepDeadline, func() { index = readRouteMCIndex() }); g != "" {
		h.close()
		return bail(g)
	}
	w.Diag("netlink_route_mc_index=%s", index)
	teardown, err, g := setUp(s, w)
	switch {
	case g != "":
		if err := teardown(); err != nil {
			w.Diag("%v", err)
		}
		h.close()
		return bail(g)
	case err != nil:
		w.Diag("setup: %v", err)
		for _, c := range cases {
			w.Result(s.Name+"."+c.Name, ktap.Fail, "setup failed", -1)
			if s.AfterCase != nil {
				s.AfterCase(c.Name, ktap.Fail, "setup failed")
			}
		}
	default:
		runCases(s, cases, w, opt, h)
	}
	if err := teardown(); err != nil {
		w.Diag("%v", err)
		w.BailOut(err.Error())
	}
	h.finish(w)
	return w.Finish()
}

// skipEvery reports every case skipped, for why: the program cannot run
// here, found after its plan was printed.
func skipEvery(s Suite, cases []Case, w *ktap.Writer, why string) {
	for _, c := range cases {
		w.Result(s.Name+"."+c.Name, ktap.Skip, why, -1)
		if s.AfterCase != nil {
			s.AfterCase(c.Name, ktap.Skip, why)
		}
	}
}

// setUp holds the switch (Suite.Switch) and runs Suite.Setup, each a step
// with its deadline (await). The teardown it returns is never nil: it
// undoes whatever was set up, in reverse order, and reports the first
// error. gaveUp says which step did not return in time, or is "".
func setUp(s Suite, w *ktap.Writer) (teardown func() error, err error, gaveUp string) {
	var undo []func() error
	teardown = func() error {
		var first error
		for i := len(undo) - 1; i >= 0; i-- {
			if err := undo[i](); err != nil && first == nil {
				first = err
			}
		}
		undo = nil
		return first
	}
	if s.Switch {
		var release func()
		var herr error
		if g := await(w, "net.core.netlink_route_mc_index: its lock (an flock another program of the suite may hold) and its value", switchDeadline, func() { release, herr = takeSwitch(w.Diag) }); g != "" {
			return teardown, nil, g
		}
		if herr != nil {
			return teardown, herr, ""
		}
		undo = append(undo, func() error { release(); return nil })
	}
	if s.Setup != nil {
		var td func() error
		var serr error
		if g := await(w, "the program's set-up", stepDeadline, func() { td, serr = s.Setup(w.Diag) }); g != "" {
			return teardown, nil, g
		}
		if serr != nil {
			return teardown, serr, ""
		}
		if td != nil {
			undo = append(undo, td)
		}
	}
	return teardown, nil, ""
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

// routeSocketProbe opens a NETLINK_ROUTE socket in the program's network
// namespace before the program makes any namespace. Tests replace it.
var routeSocketProbe = openRouteSocket

// openRouteSocket: whatever namespaces came and went before the program, the
// one it runs in gives a NETLINK_ROUTE socket. A protocol's table outlives
// its kernel sockets but the last: netlink_release() of a kernel socket
// frees the table only when nl_table[].registered drops to 0, and
// netlink_create() refuses a socket (EPROTONOSUPPORT) while it is 0. The
// program's cases make namespaces first, which registers the table again,
// so only a socket opened before that sees a table torn down too early.
func openRouteSocket() error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("socket(AF_NETLINK, NETLINK_ROUTE) in the program's network namespace, before it made any: %v: the kernel refuses the protocol there", err)
	}
	return unix.Close(fd)
}

// preflight returns why no case can run here, or "". Tests replace it.
var preflight = cannotRun

// cannotRun returns why no case can run here for want of privilege, or
// "": it reads the process's own capabilities, and waits for nothing.
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
	return ""
}

// probeNamespace makes a network namespace, which shows that the cases
// can make theirs; it becomes the teardown witness's (watchKernel), one
// namespace fewer to make and tear down. Tests replace it (nil: the
// witness makes its own).
var probeNamespace = func() (*netns.NS, error) { return netns.New("nsdeath-witness") }

// takeSwitch is holdSwitch. Tests replace it.
var takeSwitch = holdSwitch

// readRouteMCIndex is RouteMCIndex. Tests replace it.
var readRouteMCIndex = RouteMCIndex

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
