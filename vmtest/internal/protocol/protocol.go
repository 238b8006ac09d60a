// SPDX-License-Identifier: GPL-2.0

// Package protocol is the contract between the vmtest host command and the
// guest /init it boots: the marker lines the init prints, where it prints the
// suite's TAP, and how the host hands it the suite arguments and settings.
//
// Both sides import it so that a change to the protocol cannot leave one side
// behind.
package protocol

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MarkerPrefix starts every line the init writes for the host rather than for
// the TAP reader. Suite output is indented by "# ", so it can never start a
// line with this prefix.
const MarkerPrefix = "nlmc-vmtest: "

// InitStarted is printed by the init first thing, on the console and again on
// the TAP channel once it is open. It lets the host tell "never reached
// /init" from "hung in a test".
const InitStarted = MarkerPrefix + "init started"

// exitPrefix starts the last line the init writes: the overall status.
const exitPrefix = MarkerPrefix + "exit="

// TAPDevice is the guest's device for the TAP channel unless TAPParam names
// another: an x86 guest's second serial port. The host wires it to a socket
// of its own, so the TAP stream never shares a wire with kernel messages,
// which would otherwise land in the middle of TAP lines.
const TAPDevice = "/dev/ttyS1"

// TAPParam is the kernel command line key that names the TAP channel's
// device, as in "nlmc.tap=/dev/hvc0" (an arm64 guest's virtio console,
// since QEMU's virt machine has one UART only).
const TAPParam = "nlmc.tap"

// ArgsFile holds the arguments for every suite binary, one per line. A file
// in the initramfs survives spaces and quotes that the kernel command line
// would mangle.
const ArgsFile = "/etc/nlmc-args"

// ProgArgsDir holds, for a program that was given arguments of its own, a
// file named after the program with those arguments in ArgsFile's format;
// they follow the arguments for every program.
const ProgArgsDir = "/etc/nlmc-args.d"

// TimeoutParam is the kernel command line key for the per-program timeout in
// seconds, as in "nlmc.timeout=600".
const TimeoutParam = "nlmc.timeout"

// LastParam returns the value of the last KEY=VALUE for key on a kernel
// command line: as with the kernel's own parameters, the last one counts.
func LastParam(cmdline, key string) (string, bool) {
	value, found := "", false
	for _, f := range strings.Fields(cmdline) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			value, found = v, true
		}
	}
	return value, found
}

// DefaultProgramTimeout is the per-program timeout without TimeoutParam: the
// kselftest runner's default.
const DefaultProgramTimeout = 300 * time.Second

// NetnsParam, as "nlmc.netns=1" on the kernel command line, has the init
// start every program in a network namespace of its own with lo up, as
// run_kselftest.sh -n does.
const NetnsParam = "nlmc.netns"

// taintPrefix starts the line that reports the kernel's taint mask when the
// init started and after the last program, as "taint=0,512".
const taintPrefix = MarkerPrefix + "taint="

// SuiteName is the collection name in the init's kselftest-runner TAP, as in
// "ok 1 selftests: netlink_mcast: netlink_mcast_semantics".
const SuiteName = "netlink_mcast"

// ProgramHeader starts the comment line the init prints before running a
// program; the rest of the line is the program's name.
const ProgramHeader = "# selftests: " + SuiteName + ": "

// ExitLine is the marker that reports the overall status.
func ExitLine(status int) string {
	return exitPrefix + strconv.Itoa(status)
}

// ParseExitLine returns the status carried by an ExitLine.
func ParseExitLine(line string) (status int, ok bool) {
	rest, found := strings.CutPrefix(line, exitPrefix)
	if !found {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil {
		return 0, false
	}
	return n, true
}

// TaintLine is the marker that reports the taint mask (/proc/sys/kernel/
// tainted) when the init started and after the last program.
func TaintLine(before, after uint64) string {
	return taintPrefix + strconv.FormatUint(before, 10) + "," + strconv.FormatUint(after, 10)
}

// ParseTaintLine returns the masks carried by a TaintLine.
func ParseTaintLine(line string) (before, after uint64, ok bool) {
	rest, found := strings.CutPrefix(line, taintPrefix)
	if !found {
		return 0, 0, false
	}
	b, a, found := strings.Cut(rest, ",")
	if !found {
		return 0, 0, false
	}
	before, err1 := strconv.ParseUint(b, 10, 64)
	after, err2 := strconv.ParseUint(a, 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return before, after, true
}

// kmemleakPrefix starts the line that reports, after a program, how many
// objects the kernel's leak detector suspects leaked while it ran, as
// "kmemleak: 2 suspected leaks after netlink_mcast_semantics (scanned in
// 7.1s)".
const kmemleakPrefix = MarkerPrefix + "kmemleak: "

// KmemleakLine is the marker that reports kmemleak's suspects after a
// program, and how long the check took.
func KmemleakLine(program string, suspects int, took time.Duration) string {
	return fmt.Sprintf("%s%d suspected leaks after %s (scanned in %.1fs)", kmemleakPrefix, suspects, program, took.Seconds())
}

// ParseKmemleakLine returns what a KmemleakLine carries.
func ParseKmemleakLine(line string) (program string, suspects int, ok bool) {
	rest, found := strings.CutPrefix(line, kmemleakPrefix)
	if !found {
		return "", 0, false
	}
	n, program, found := strings.Cut(rest, " suspected leaks after ")
	program, _, _ = strings.Cut(program, " (")
	if !found || program == "" {
		return "", 0, false
	}
	suspects, err := strconv.Atoi(n)
	if err != nil || suspects < 0 {
		return "", 0, false
	}
	return program, suspects, true
}

// netnsLeftPrefix starts the line that reports, after a program, that the
// kernel was still tearing down network namespaces when the init stopped
// waiting, as "netns: namespaces still there 120s after
// netlink_mcast_semantics".
const netnsLeftPrefix = MarkerPrefix + "netns: namespaces still there "

// NetnsLeftLine is the marker that reports network namespaces the kernel
// had not torn down yet, waited after a program's exit.
func NetnsLeftLine(program string, waited time.Duration) string {
	return fmt.Sprintf("%s%.0fs after %s", netnsLeftPrefix, waited.Seconds(), program)
}

// ParseNetnsLeftLine returns the program a NetnsLeftLine names.
func ParseNetnsLeftLine(line string) (program string, ok bool) {
	rest, found := strings.CutPrefix(line, netnsLeftPrefix)
	if !found {
		return "", false
	}
	_, program, found = strings.Cut(rest, "s after ")
	if !found || program == "" {
		return "", false
	}
	return program, true
}

// EncodeArgs renders args as the contents of ArgsFile.
func EncodeArgs(args []string) ([]byte, error) {
	var b strings.Builder
	for _, a := range args {
		if strings.ContainsAny(a, "\n\x00") {
			return nil, fmt.Errorf("suite argument %q: newlines and NUL bytes cannot be passed", a)
		}
		b.WriteString(a)
		b.WriteByte('\n')
	}
	return []byte(b.String()), nil
}

// DecodeArgs parses the contents of ArgsFile.
func DecodeArgs(data []byte) []string {
	// Every argument ends with a newline, so the last field is always empty;
	// dropping it keeps an empty-string argument distinct from no argument.
	fields := strings.Split(string(data), "\n")
	if len(fields) <= 1 {
		return nil
	}
	return fields[:len(fields)-1]
}
