// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// options are the command's flags and arguments, checked.
type options struct {
	kernel       string
	bins         []string
	initPath     string // prebuilt guest init; empty means build it
	extraCmdline string
	suiteArgs    []string
	timeout      time.Duration
	accel        string // resolved: accelTCG or accelKVM
	memMiB       int
	cpus         int
	qemu         string
	verbose      bool
}

// errUsage marks mistakes in the command line, which exit with status 2.
var errUsage = errors.New("usage error")

func parseOptions(args []string, stderr io.Writer) (options, error) {
	var o options
	var accel, rawArgs string
	fs := flag.NewFlagSet("vmtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go run ./vmtest [flags] -kernel BZIMAGE BIN...")
		fmt.Fprintln(stderr, "Boots BZIMAGE in QEMU with the static test programs BIN... and prints their kselftest TAP.")
		fmt.Fprintln(stderr, "Exit status: 0 all passed, 1 a failure (or a broken boot), 4 all skipped.")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.kernel, "kernel", "", "kernel `bzImage` to boot (required)")
	fs.StringVar(&o.extraCmdline, "append", "", "extra kernel command line, e.g. sysctl.net.core.netlink_route_mc_index=1 or nlmc.timeout=SECONDS")
	fs.StringVar(&rawArgs, "args", "", "arguments for every test program, split like a shell does (quotes, no expansion)")
	fs.DurationVar(&o.timeout, "timeout", 300*time.Second, "wall-clock limit for the whole VM run")
	fs.StringVar(&accel, "accel", accelAuto, "accelerator: auto (= tcg, see doc), tcg or kvm")
	fs.IntVar(&o.memMiB, "mem", 1024, "guest memory in MiB")
	fs.IntVar(&o.cpus, "smp", 2, "guest CPUs")
	fs.StringVar(&o.qemu, "qemu", "qemu-system-x86_64", "QEMU `binary`")
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
	if o.accel, err = resolveAccel(accel); err != nil {
		return o, fmt.Errorf("%w: %v", errUsage, err)
	}
	if err := o.check(); err != nil {
		return o, err
	}
	return o, nil
}

// check rejects what would only fail later inside the guest, where the
// reason is much harder to see.
func (o *options) check() error {
	switch {
	case o.kernel == "":
		return fmt.Errorf("%w: -kernel is required", errUsage)
	case len(o.bins) == 0:
		return fmt.Errorf("%w: name at least one test program to run", errUsage)
	case o.timeout <= 0:
		return fmt.Errorf("%w: -timeout must be positive", errUsage)
	case o.memMiB < 128:
		return fmt.Errorf("%w: -mem %d: want at least 128 MiB", errUsage, o.memMiB)
	case o.cpus < 1:
		return fmt.Errorf("%w: -smp %d: want at least 1", errUsage, o.cpus)
	}
	if _, err := os.Stat(o.kernel); err != nil {
		return fmt.Errorf("-kernel: %w", err)
	}
	if _, err := exec.LookPath(o.qemu); err != nil {
		return fmt.Errorf("QEMU not found (on Debian: apt-get install qemu-system-x86): %w", err)
	}
	seen := map[string]string{}
	for _, bin := range o.bins {
		if err := checkGuestBinary(bin); err != nil {
			return err
		}
		name := filepath.Base(bin)
		if other, dup := seen[name]; dup {
			return fmt.Errorf("%s and %s would both be /bin/%s in the guest", other, bin, name)
		}
		seen[name] = bin
	}
	if o.initPath != "" {
		if err := checkGuestBinary(o.initPath); err != nil {
			return fmt.Errorf("-init: %w", err)
		}
	}
	return nil
}
