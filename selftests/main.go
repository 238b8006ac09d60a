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
	return Run(s, os.Args[1:], os.Stdout, os.Stderr)
}

// options are the shared flags, parsed.
type options struct {
	list     bool
	only     []string
	deadline time.Duration
	explicit bool // -deadline was given: it overrides Case.Timeout
	jobs     int
}

// Run is Main with the arguments and outputs given: for a program's tests.
func Run(s Suite, args []string, stdout, stderr io.Writer) int {
	// The handler comes first (also when init installed one already):
	// from here on a stop signal ends the program through the one path
	// below, with TAP and the Totals line last. The kselftest runner may
	// send more than one SIGTERM; only the first counts.
	defer catchSignals()()

	opt, usage, code, ok := parseArgs(s, args, stderr)
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
		return list(s, cases, stdout, stderr)
	}
	defer verbose.Store(false)

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
func parseArgs(s Suite, args []string, stderr io.Writer) (opt options, usage func(io.Writer), code int, ok bool) {
	fs := flag.NewFlagSet(s.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are printed below, quoted
	fs.BoolVar(&opt.list, "l", false, "list the case names (with -v: and what each checks) and exit")
	v := fs.Bool("v", false, "print every socket's transcript and every detail, also when it is as expected")
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
			usage(stderr)
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
	verbose.Store(*v)
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
// flags, the program's own and the old spellings, each group sorted.
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
	}{
		{"Flags of every netlink_mcast program:", func(n string) bool { return shared[n] }},
		{"Flags of " + s.Name + ":", func(n string) bool { return !shared[n] && !aliases[n] }},
		{"Old spellings, kept as aliases:", func(n string) bool { return aliases[n] }},
	}
	for _, g := range groups {
		var lines []string
		fs.VisitAll(func(f *flag.Flag) {
			if g.in(f.Name) {
				lines = append(lines, flagUsage(f))
			}
		})
		if len(lines) == 0 {
			continue
		}
		sort.Strings(lines)
		fmt.Fprintf(&b, "\n%s\n%s", g.title, strings.Join(lines, ""))
	}
	b.WriteString("  -h\n    \tprint this help and exit\n")
	io.WriteString(out, b.String())
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

// list prints the case names, one a line; with -v, what each checks.
func list(s Suite, cases []Case, stdout, stderr io.Writer) int {
	for _, c := range cases {
		line := c.Name
		if Verbose() && c.About != "" {
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
func runProgram(s Suite, cases []Case, w *ktap.Writer, opt options) int {
	if err := routeSocketProbe(); err != nil {
		w.Plan(0)
		w.BailOut(err.Error())
		return w.Finish()
	}
	if reason := preflight(); reason != "" {
		return w.SkipAll(reason)
	}
	if s.Needs != nil {
		if reason := s.Needs(); reason != "" {
			return w.SkipAll(reason)
		}
	}
	h := watchKernel(s.Name)
	w.Plan(len(cases))
	h.sayUnwatched(w)
	w.Diag("netlink_route_mc_index=%s", RouteMCIndex())
	teardown, err := setUp(s, w)
	if err != nil {
		w.Diag("setup: %v", err)
		for _, c := range cases {
			w.Result(s.Name+"."+c.Name, ktap.Fail, "setup failed", -1)
			if s.AfterCase != nil {
				s.AfterCase(c.Name, ktap.Fail, "setup failed")
			}
		}
	} else {
		runCases(s, cases, w, opt, h)
	}
	if err := teardown(); err != nil {
		w.Diag("%v", err)
		w.BailOut(err.Error())
	}
	h.finish(w)
	return w.Finish()
}

// setUp holds the switch (Suite.Switch) and runs Suite.Setup. The
// teardown it returns is never nil: it undoes whatever was set up, in
// reverse order, and reports the first error.
func setUp(s Suite, w *ktap.Writer) (teardown func() error, err error) {
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
		release, err := holdSwitch(w.Diag)
		if err != nil {
			return teardown, err
		}
		undo = append(undo, func() error { release(); return nil })
	}
	if s.Setup != nil {
		td, err := s.Setup(w.Diag)
		if err != nil {
			return teardown, err
		}
		if td != nil {
			undo = append(undo, td)
		}
	}
	return teardown, nil
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
	ns, err := netns.New("nsdeath-witness")
	if err != nil {
		return "cannot create a network namespace: " + err.Error()
	}
	// The namespace that shows one can be made is the teardown witness's
	// (watchKernel): one namespace fewer to make and tear down.
	probed.Store(ns)
	return ""
}

// probed is the namespace cannotRun made, for watchKernel.
var probed atomic.Pointer[netns.NS]

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
