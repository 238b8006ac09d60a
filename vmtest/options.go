// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"nlmcast/vmtest/internal/protocol"
	"nlmcast/vmtest/kimage"
)

// options are the command's flags and arguments, checked.
type options struct {
	kernel       string
	arch         kimage.Arch // of the kernel, from its boot header
	machine      machine     // how QEMU boots that architecture
	bins         []string
	ksftDir      string // -kselftest: an installed kselftest copy, run by its runner
	busybox      string // -busybox: the shell and tools for that runner
	initPath     string // prebuilt guest init; empty means build it
	extraCmdline string
	suiteArgs    []string            // for every program
	progArgs     map[string][]string // for one program (by file name), after suiteArgs
	progTimeout  time.Duration       // per program, in the guest; 0: the guest's default
	timeout      time.Duration       // the whole VM run; resolved from 0 by parseOptions
	netns        bool
	icount       bool
	accel        string // resolved: accelTCG or accelKVM
	memMiB       int
	cpus         int
	qemu         string // resolved: -qemu, or the machine's
	verbose      bool
}

// Guest-side defaults the host's automatic -timeout is computed from.
const (
	bootAllowance = 120 * time.Second // boot, power-off and kill grace, under TCG
	// icountSlowdown: under -icount the guest clock advances 1 ns per
	// instruction, and TCG runs fewer than 10^9 instructions a second, so
	// a guest-time timeout takes longer than that in wall-clock time.
	icountSlowdown = 4
)

// progArgsFlag collects the repeatable -prog-args NAME=ARGS.
type progArgsFlag []string

func (p *progArgsFlag) String() string     { return strings.Join(*p, " ") }
func (p *progArgsFlag) Set(v string) error { *p = append(*p, v); return nil }

// errUsage marks mistakes in the command line, which exit with status 2.
var errUsage = errors.New("usage error")

func parseOptions(args []string, stderr io.Writer) (options, error) {
	var o options
	var accel, rawArgs string
	var rawProgArgs progArgsFlag
	fs := flag.NewFlagSet("vmtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go run ./vmtest [flags] -kernel IMAGE BIN...")
		fmt.Fprintln(stderr, "Boots IMAGE (an x86 bzImage or an arm64 Image) in QEMU with the static test programs BIN...")
		fmt.Fprintln(stderr, "(built for the image's architecture) and prints their kselftest TAP.")
		fmt.Fprintln(stderr, "Exit status: 0 all passed, 1 a failure (or a broken boot), 4 all skipped.")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.kernel, "kernel", "", "kernel `image` to boot: an x86 bzImage or an arm64 Image (required); its header chooses QEMU, machine and console")
	fs.StringVar(&o.extraCmdline, "append", "", "extra kernel command line, e.g. sysctl.net.core.netlink_route_mc_index=1 or nlmc.timeout=SECONDS")
	fs.StringVar(&rawArgs, "args", "", "arguments for every test program, split like a shell does (quotes, no expansion)")
	fs.Var(&rawProgArgs, "prog-args", "`NAME=ARGS`: more arguments for the program NAME only, after -args (repeatable), e.g. 'netlink_mcast_stress=-duration 10s -mode fixed0'")
	fs.DurationVar(&o.progTimeout, "prog-timeout", 0, "per-program timeout in the guest, whole seconds (default 300s, the kselftest runner's; sets "+protocol.TimeoutParam+")")
	fs.DurationVar(&o.timeout, "timeout", 0, "wall-clock limit for the whole VM run (default: 120s plus the per-program timeout for each program, times 4 with -icount)")
	fs.BoolVar(&o.netns, "netns", false, "run each program in a network namespace of its own with lo up, as run_kselftest.sh -n does")
	fs.BoolVar(&o.icount, "icount", false, "deterministic guest clock: QEMU -icount shift=0,sleep=off (1 ns per guest instruction; TCG only)")
	fs.StringVar(&accel, "accel", accelAuto, "accelerator: auto (= tcg, see doc), tcg or kvm")
	fs.IntVar(&o.memMiB, "mem", 1024, "guest memory in MiB")
	fs.IntVar(&o.cpus, "smp", 2, "guest CPUs (1 by default with -icount)")
	fs.StringVar(&o.qemu, "qemu", "", "QEMU `binary` (default: qemu-system-x86_64 or qemu-system-aarch64, after the image)")
	fs.StringVar(&o.ksftDir, "kselftest", "", "instead of BIN...: run the kernel's kselftest runner (run_kselftest.sh, given -args) over this installed copy (`DIR`, from make -C tools/testing/selftests TARGETS=... install); needs -busybox")
	fs.StringVar(&o.busybox, "busybox", "", "static busybox `binary` for the image's architecture: the shell and tools of the -kselftest runner (Debian: busybox-static)")
	fs.StringVar(&o.initPath, "init", "", "prebuilt static guest init `binary` (default: build ./vmtest/guestinit)")
	fs.BoolVar(&o.verbose, "v", false, "also copy the kernel console to stderr")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, fmt.Errorf("%w: %v", errUsage, err)
	}
	o.bins = fs.Args()

	var err error
	if o.suiteArgs, err = splitArgs(rawArgs); err != nil {
		return o, fmt.Errorf("%w: %v", errUsage, err)
	}
	if o.progArgs, err = parseProgArgs(rawProgArgs, o.bins); err != nil {
		return o, fmt.Errorf("%w: %v", errUsage, err)
	}
	if o.accel, err = resolveAccel(accel); err != nil {
		return o, fmt.Errorf("%w: %v", errUsage, err)
	}
	timeoutSet, smpSet := false, false
	fs.Visit(func(f *flag.Flag) {
		timeoutSet = timeoutSet || f.Name == "timeout"
		smpSet = smpSet || f.Name == "smp"
	})
	// Under -icount shift=0,sleep=off, a 2-CPU guest of QEMU 7.2 never gets
	// past "smp: Bringing up secondary CPUs" (a 1-CPU guest boots in a
	// second of guest time): -icount asks for one CPU unless told.
	if o.icount && !smpSet {
		o.cpus = 1
	}
	if timeoutSet && o.timeout <= 0 {
		return o, fmt.Errorf("%w: -timeout must be positive", errUsage)
	}
	if err := o.check(); err != nil {
		return o, err
	}
	if !timeoutSet {
		o.timeout = autoTimeout(o)
	}
	return o, nil
}

// autoTimeout is the -timeout default: long enough for every program to use
// its whole guest timeout, so that a program that hangs is reported by the
// guest, by name, rather than by the host killing QEMU.
func autoTimeout(o options) time.Duration {
	per := o.progTimeout
	if per == 0 {
		per = protocol.DefaultProgramTimeout
		if secs, ok := protocol.LastParam(o.extraCmdline, protocol.TimeoutParam); ok {
			if n, err := strconv.Atoi(secs); err == nil && n > 0 {
				per = time.Duration(n) * time.Second
			}
		}
	}
	programs := len(o.bins)
	if o.ksftDir != "" {
		programs = 1 // the runner, which the guest times as one program
	}
	t := time.Duration(programs) * per
	if o.icount {
		t *= icountSlowdown
	}
	return t + bootAllowance
}

func hasParam(cmdline, key string) bool {
	_, ok := protocol.LastParam(cmdline, key)
	return ok
}

// parseProgArgs parses -prog-args values, NAME=ARGS, where NAME is the file
// name of one of bins. Repeated NAMEs add up.
func parseProgArgs(values []string, bins []string) (map[string][]string, error) {
	if len(values) == 0 {
		return nil, nil
	}
	names := map[string]bool{}
	for _, b := range bins {
		names[filepath.Base(b)] = true
	}
	out := map[string][]string{}
	for _, v := range values {
		name, raw, ok := strings.Cut(v, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("-prog-args %q: want NAME=ARGS", v)
		}
		if !names[name] {
			return nil, fmt.Errorf("-prog-args %q: no program named %q among %s", v, name, strings.Join(slices.Sorted(maps.Keys(names)), ", "))
		}
		args, err := splitArgs(raw)
		if err != nil {
			return nil, fmt.Errorf("-prog-args %q: %v", v, err)
		}
		out[name] = append(out[name], args...)
	}
	return out, nil
}

// guestParams are the kernel command line settings for the guest init.
func (o *options) guestParams() string {
	var p []string
	if o.netns {
		p = append(p, protocol.NetnsParam+"=1")
	}
	if o.progTimeout > 0 {
		p = append(p, fmt.Sprintf("%s=%d", protocol.TimeoutParam, int(o.progTimeout/time.Second)))
	}
	return strings.Join(p, " ")
}

// check rejects what would only fail later inside the guest, where the
// reason is much harder to see.
func (o *options) check() error {
	switch {
	case o.kernel == "":
		return fmt.Errorf("%w: -kernel is required", errUsage)
	case len(o.bins) == 0 && o.ksftDir == "":
		return fmt.Errorf("%w: name at least one test program to run", errUsage)
	case len(o.bins) > 0 && o.ksftDir != "":
		return fmt.Errorf("%w: -kselftest runs the installed programs: name no BIN", errUsage)
	case o.ksftDir != "" && o.busybox == "":
		return fmt.Errorf("%w: -kselftest needs -busybox: the runner is a shell script, and the guest has no shell (Debian: busybox-static; for arm64 apt-get download busybox-static:arm64)", errUsage)
	case o.busybox != "" && o.ksftDir == "":
		return fmt.Errorf("%w: -busybox is for -kselftest", errUsage)
	case o.progTimeout < 0 || o.progTimeout%time.Second != 0 || o.progTimeout > 0 && o.progTimeout < time.Second:
		return fmt.Errorf("%w: -prog-timeout %v: want a positive whole number of seconds", errUsage, o.progTimeout)
	case o.progTimeout > 0 && hasParam(o.extraCmdline, protocol.TimeoutParam):
		return fmt.Errorf("%w: -prog-timeout and %s= in -append both set the per-program timeout", errUsage, protocol.TimeoutParam)
	case o.icount && o.accel != accelTCG:
		return fmt.Errorf("%w: -icount needs -accel tcg", errUsage)
	case o.memMiB < 128:
		return fmt.Errorf("%w: -mem %d: want at least 128 MiB", errUsage, o.memMiB)
	case o.cpus < 1:
		return fmt.Errorf("%w: -smp %d: want at least 1", errUsage, o.cpus)
	}
	if _, err := os.Stat(o.kernel); err != nil {
		return fmt.Errorf("-kernel: %w", err)
	}
	var err error
	if o.arch, err = kimage.Detect(o.kernel); err != nil {
		return fmt.Errorf("-kernel: %w", err)
	}
	o.machine = machines[o.arch.Name]
	if o.qemu == "" {
		o.qemu = o.machine.qemu
	}
	if _, err := exec.LookPath(o.qemu); err != nil {
		return fmt.Errorf("QEMU for %s not found (on Debian: apt-get install %s): %w", o.arch.Name, o.machine.qemuPkg, err)
	}
	seen := map[string]string{}
	for _, bin := range o.bins {
		if err := kimage.CheckProgram(bin, o.arch, o.kernel); err != nil {
			return err
		}
		name := filepath.Base(bin)
		if other, dup := seen[name]; dup {
			return fmt.Errorf("%s and %s would both be /bin/%s in the guest", other, bin, name)
		}
		seen[name] = bin
	}
	if o.initPath != "" {
		if err := kimage.CheckProgram(o.initPath, o.arch, o.kernel); err != nil {
			return fmt.Errorf("-init: %w", err)
		}
	}
	if o.ksftDir != "" {
		if err := kimage.CheckProgram(o.busybox, o.arch, o.kernel); err != nil {
			return fmt.Errorf("-busybox: %w", err)
		}
		if err := checkKselftestDir(o.ksftDir, o.arch, o.kernel); err != nil {
			return err
		}
	}
	return nil
}
