// SPDX-License-Identifier: GPL-2.0

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"nlmcast/selftests/kmsg"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command; it returns the exit status so that deferred
// cleanup runs before the process exits.
func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseOptions(args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "vmtest: %v (see -help)\n", err)
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "vmtest: %v\n", err)
		return 1
	}

	ctx, stop := withInterrupts(context.Background())
	defer stop()
	status, err := runInVM(ctx, o, stdout, stderr)
	if err != nil {
		var interrupted interruptedError
		if errors.As(context.Cause(ctx), &interrupted) {
			status, _ = verdict(bootOutcome{stopCause: interrupted})
			err = interrupted
		}
		fmt.Fprintf(stderr, "vmtest: %v\n", err)
	}
	return status
}

// runInVM prepares the guest in a temporary directory, boots it and judges
// the outcome.
func runInVM(ctx context.Context, o options, stdout, stderr io.Writer) (int, error) {
	workDir, err := os.MkdirTemp("/tmp", "nlmc-vmtest-")
	if err != nil {
		return 1, fmt.Errorf("create work directory: %w", err)
	}
	defer os.RemoveAll(workDir)

	initPath := o.initPath
	if initPath == "" {
		if initPath, err = buildGuestInit(ctx, workDir, o.arch.GOARCH); err != nil {
			return 1, err
		}
	}
	initrd := filepath.Join(workDir, "initramfs.cpio")
	if err := writeInitramfs(initrd, initramfsContents{init: initPath, bins: o.bins, suiteArgs: o.suiteArgs, progArgs: o.progArgs,
		ksftDir: o.ksftDir, busybox: o.busybox}); err != nil {
		return 1, err
	}

	outcome, err := boot(ctx, o, initrd, workDir, stdout, stderr)
	if err != nil {
		return 1, err
	}
	for _, n := range outcome.notes {
		fmt.Fprintf(stderr, "vmtest: %s\n", n)
	}
	printReports(stderr, outcome.reports)
	if t := outcome.tap; t.taintSeen && t.taintBefore != 0 {
		fmt.Fprintf(stderr, "vmtest: note: the kernel was tainted already when /init started: %d (%s)\n", t.taintBefore, kmsg.Letters(t.taintBefore))
	}
	status, problem := verdict(outcome)
	if problem != "" {
		fmt.Fprintf(stderr, "vmtest: %s\n", problem)
		var interrupted interruptedError
		// When the guest ended normally, the reports say all there is.
		finished := outcome.tap.exitSeen && outcome.stopCause == nil && outcome.console.panicLine == ""
		if !o.verbose && !finished && !errors.As(outcome.stopCause, &interrupted) {
			printConsoleTail(stderr, outcome.console.tail)
		}
	}
	if o.verbose {
		fmt.Fprintf(stderr, "vmtest: QEMU ran for %v\n", outcome.duration.Round(time.Millisecond))
	}
	return status, nil
}

// printReports shows each kernel report with the lines the kernel logged.
func printReports(w io.Writer, reports []kmsg.Report) {
	for i, r := range reports {
		fmt.Fprintf(w, "vmtest: kernel report %d of %d: %s\n", i+1, len(reports), r)
		for _, line := range r.Lines {
			fmt.Fprintln(w, "  | "+line)
		}
	}
}

// printConsoleTail shows the end of the kernel console, which usually says
// why a boot went wrong, when -v has not shown it already.
func printConsoleTail(w io.Writer, tail []string) {
	if len(tail) == 0 {
		fmt.Fprintln(w, "vmtest: the kernel console stayed empty")
		return
	}
	fmt.Fprintln(w, "vmtest: last lines of the kernel console (all of it with -v):")
	for _, line := range tail {
		fmt.Fprintln(w, "  | "+line)
	}
}

// withInterrupts returns a context cancelled by SIGINT or SIGTERM, with an
// interruptedError as its cause.
func withInterrupts(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-sigs:
			cancel(interruptedError{sig})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		cancel(nil)
	}
}
