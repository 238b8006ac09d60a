// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"flag"
	"io"

	"nlmcast/ktap"
)

// Suite is a kselftest program: its name (the TAP prefix of every case),
// its cases, and what the program adds to the frame every program shares
// (Main: the flags -l, -t, -v, -deadline and -h, signals and exit codes,
// the switch guard, the kernel-health watch, one TAP writer).
type Suite struct {
	Name string
	// About says in a sentence or two what the program checks; -h prints it.
	About string

	// Cases are the program's cases in run order. MakeCases, when set,
	// returns them instead, once the flags are parsed and checked: for a
	// program whose own flags decide its cases (the bench's -n, -sweep).
	Cases     []Case
	MakeCases func() ([]Case, error)
	// CaseDeadlines says, for -h, what deadline the cases get without
	// -deadline, for a program whose table MakeCases makes (from the
	// flags) with cases that set their own (Case.Timeout): "1h0m0s a
	// scene". For a table in Cases, -h derives it.
	CaseDeadlines string

	// Flags adds the program's own flags to the shared ones (durations,
	// sizes, self-tests). Check validates them once parsed; its error is
	// a usage error (exit 1, with the usage).
	Flags func(fs *flag.FlagSet)
	Check func() error
	// Aliases are old spellings of shared flags, kept so that existing
	// command lines go on working; -h says what each stands for.
	Aliases []Alias

	// Switch says the program changes net.core.netlink_route_mc_index:
	// before the first case Main takes the switch's flock (copies of the
	// programs take turns), saves its value and, on every way out
	// (after the last case, a failure, a panic, a signal, stdout gone),
	// writes the value back. Cases reach it with HeldSwitch.
	Switch bool

	// Needs returns why no case of this program can run here, beyond what
	// every program needs (root: CAP_SYS_ADMIN and CAP_NET_ADMIN, and a
	// network namespace), or "": the whole program then SKIPs with it.
	// It runs before the plan, without a deadline: it only reads the
	// process's own state (capabilities, its user namespace).
	Needs func() string

	// Setup runs once before the first case, after the privilege checks
	// and the switch guard, with a deadline (a minute: a Setup still
	// running then ends the stream with Bail out!). The teardown it returns runs on every way out
	// of Main, before the Totals line; an error from it ends the stream
	// with Bail out! (a result the program could not deliver, such as the
	// bench's results directory).
	Setup func(log func(format string, args ...any)) (teardown func() error, err error)

	// AfterCase, when set, is called with each case's final result right
	// after its result line is printed: the verdict of its own checks as
	// judged with the kernel's health (a report during the case fails it),
	// an interruption or a deadline included, and the line's reason ("" for
	// a failed check, whose message is a diagnostic; for a pass, a note on
	// what the kernel watch could not see, or ""). name is the case's
	// Name, without the program's prefix. It runs on the goroutine that
	// prints results, one call at a time, in result order; the bench marks
	// the samples of a scene that did not pass.
	AfterCase func(name string, res ktap.Result, reason string)

	// Instead runs a mode of the program that its flags chose and that
	// runs no case and prints no TAP (the bench's -analyze): ran false
	// means run the cases.
	Instead func(stdout io.Writer) (code int, ran bool)
}

// Alias is an old spelling of a shared flag.
type Alias struct {
	Name string // the old flag, without '-': "mode"
	// For is the shared flag it stands for: "t" (its value names cases)
	// or "l" (a boolean).
	For string
	// List: the value is a comma-separated list of case names, each
	// given to -t (the bench's -scene A,B).
	List bool
	// All is the value that selects every case ("all"), as no -t does.
	All string
}
