// SPDX-License-Identifier: GPL-2.0

// Command netlink_mcast_stress is the stress run of the "netlink: optional
// per-netns ROUTE multicast index" series: NETLINK_ROUTE notifications
// under concurrent socket, membership, option and namespace churn, with
// net.core.netlink_route_mc_index held at 0, held at 1, and flipped as
// fast as the kernel takes it, checked exactly at stable receivers while
// the kernel log is watched for reports.
//
// Each mode is one kselftest TAP result, netlink_mcast_stress.<mode>. It
// passes when every stable receiver got exactly what the senders' ACKed
// requests imply (no loss, no duplicate, per-sender order, the right nsid),
// every churn socket got only what it was allowed to, every sender
// completed -min-batches batches (and, switch mode, the writer -min-writes
// verified writes), and the kernel reported nothing while it ran. A mode
// runs for -duration and then on until those minima are reached, at most
// -max-duration.
//
// Self-tests of the detectors (not for normal runs): -inject-duplicate
// makes a user-space socket multicast one copy of a message sender S0
// already caused into the stable receivers' queues halfway through each
// mode, which must then fail with a duplicate diagnosis;
// -inject-warning writes a WARNING line to /dev/kmsg halfway through each
// mode, which must then fail with a kernel report; use it only in a VM,
// since every other watcher of that machine's kernel log sees the line.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/ktap"
	"nlmcast/selftests/mcswitch"
)

const program = "netlink_mcast_stress"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	// Signals first: from here on SIGTERM and SIGINT end the current
	// mode, and the switch is restored on the way out.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer func() {
		signal.Stop(sigs)
		close(sigs)
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var caught atomic.Value
	go func() {
		s, ok := <-sigs
		if ok {
			caught.Store(signalName(s))
			cancel()
		}
	}()

	cfg, selected, code, ok := parseFlags(args, stdout, stderr)
	if !ok {
		return code
	}

	// The kernel log is watched from the program's start.
	health, healthNote := openHealth()
	if health != nil {
		defer health.close()
	}

	tw := ktap.New(stdout)
	if os.Geteuid() != 0 {
		return tw.SkipAll("needs root: CAP_NET_ADMIN (namespaces, SO_RCVBUFFORCE, nsids, the switch) and CAP_NET_BROADCAST (NETLINK_LISTEN_ALL_NSID)")
	}
	tw.Plan(len(selected))
	if healthNote != "" {
		tw.Diag("%s", healthNote)
	}

	sw, restore, skip, err := mcswitch.Hold(tw.Diag)
	if err != nil {
		for _, m := range selected {
			tw.Diag("%s: %v", m.name, err)
			tw.Result(program+"."+m.name, ktap.Fail, "", -1)
		}
		return tw.Finish()
	}
	var restoreOnce sync.Once
	restoreSwitch := func() {
		if restore != nil {
			restoreOnce.Do(restore)
		}
	}
	defer restoreSwitch()
	if sw == nil {
		tw.Diag("%s: fixed0 runs the only walk this kernel has; fixed1 and switch skip", skip)
	}

	cpus, err := allowedCPUs()
	if err != nil {
		tw.Diag("sched_getaffinity: %v; all senders on CPU 0", err)
		cpus = []int{0}
	}
	if len(cpus) < cfg.senders {
		tw.Diag("%d CPUs for %d senders: senders share CPUs (sender i on CPU %v[i mod %d])", len(cpus), cfg.senders, cpus, len(cpus))
	}

	for _, m := range selected {
		name := program + "." + m.name
		if s, _ := caught.Load().(string); s != "" {
			tw.Result(name, ktap.Skip, "not run: interrupted by "+s, -1)
			continue
		}
		if m.value != "0" && sw == nil {
			tw.Result(name, ktap.Skip, skip, -1)
			continue
		}
		tw.Diag("%s: %s; %d senders, %s, %d cycles per batch", m.name, m.about, cfg.senders, cfg.duration, cfg.cycles)
		start := time.Now()
		out := runMode(ctx, cfg, m, sw, cpus)
		if health != nil {
			reports, note := health.take()
			for _, r := range reports {
				out.report.KernelReports++
				out.fail("kernel report during %s: %s", m.name, r)
			}
			if note != "" {
				out.notes = append(out.notes, note)
			}
		}
		for _, n := range out.notes {
			tw.Diag("%s", n)
		}
		out.report.Problems = len(out.problems)
		result := ktap.Pass
		out.report.Result = "pass"
		if s, _ := caught.Load().(string); s != "" {
			out.report.Result = "interrupted"
			result = ktap.Fail
			tw.Diag("%s interrupted by %s", m.name, s)
		} else if len(out.problems) > 0 {
			out.report.Result = "fail"
			result = ktap.Fail
		}
		for _, p := range out.problems {
			tw.Diag("FAIL: %s", p)
		}
		for _, l := range out.report.lines() {
			tw.Diag("%s", l)
		}
		tw.Diag("stress-json: %s", out.report.json())
		tw.Result(name, result, "", time.Since(start))
	}
	restoreSwitch()
	return tw.Finish()
}

func signalName(s os.Signal) string {
	if n, ok := s.(syscall.Signal); ok {
		return strings.ToUpper(unix.SignalName(n))
	}
	return s.String()
}

// parseFlags validates the command line. ok false means: exit with code.
func parseFlags(args []string, stdout, stderr io.Writer) (cfg config, selected []mode, code int, ok bool) {
	fs := flag.NewFlagSet(program, flag.ContinueOnError)
	fs.SetOutput(stderr)
	modeFlag := fs.String("mode", "all", "mode to run: fixed0, fixed1, switch, or all (the three in turn)")
	fs.DurationVar(&cfg.duration, "duration", 60*time.Second, "how long each mode runs at least; it goes on until the minima are reached")
	fs.DurationVar(&cfg.maxDuration, "max-duration", 0, "how long each mode may run to reach -min-batches and -min-writes; short of them then, it fails (default 4 × -duration)")
	fs.IntVar(&cfg.senders, "senders", 2, "sender threads, each in its own namespace, pinned to one CPU")
	fs.IntVar(&cfg.minBatches, "min-batches", 100, "batches every sender must complete for the mode to pass")
	fs.Int64Var(&cfg.minWrites, "min-writes", 1000, "verified switch writes the switch mode must make")
	fs.IntVar(&cfg.cycles, "cycles", 4, "event cycles per batch (address add, route replace, stats switch, address delete each)")
	fs.IntVar(&cfg.idle, "idle", 256, "idle subscribers in foreign namespaces (they make every walk of the global list long)")
	fs.DurationVar(&cfg.nsPace, "netns-pace", 50*time.Millisecond, "at most one churn namespace per this interval")
	fs.BoolVar(&cfg.injectDup, "inject-duplicate", false, "SELF-TEST of the checker: halfway through each mode, multicast one duplicate of a message S0 caused; the mode must fail")
	fs.BoolVar(&cfg.injectWarning, "inject-warning", false, "SELF-TEST of the kernel watch: halfway through each mode, write a WARNING line to /dev/kmsg; the mode must fail (VMs only: other watchers of the kernel log see it too)")
	list := fs.Bool("l", false, "list the modes and exit")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s [flags]\n", program)
		fmt.Fprintln(stderr, "Stress of NETLINK_ROUTE multicast delivery under churn, with net.core.netlink_route_mc_index held at 0, at 1, and flipping.")
		fmt.Fprintln(stderr, "Exit status: 0 all passed, 1 a failure, 4 all skipped.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, nil, ktap.ExitPass, false
		}
		return cfg, nil, ktap.ExitFail, false
	}
	if *list {
		for _, m := range modes {
			fmt.Fprintf(stdout, "%s.%s\t%s\n", program, m.name, m.about)
		}
		return cfg, nil, ktap.ExitPass, false
	}
	bad := func(f string, a ...any) (config, []mode, int, bool) {
		fmt.Fprintf(stderr, "%s: %s\n", program, fmt.Sprintf(f, a...))
		fs.Usage()
		return cfg, nil, ktap.ExitFail, false
	}
	switch {
	case fs.NArg() > 0:
		return bad("unexpected arguments %q", fs.Args())
	case cfg.duration <= 0:
		return bad("-duration %s: must be positive", cfg.duration)
	case cfg.maxDuration < 0 || (cfg.maxDuration > 0 && cfg.maxDuration < cfg.duration):
		return bad("-max-duration %s: must be at least -duration %s", cfg.maxDuration, cfg.duration)
	case cfg.senders < 1 || cfg.senders > 64:
		return bad("-senders %d: want 1..64", cfg.senders)
	case cfg.minBatches < 0:
		return bad("-min-batches %d: must not be negative", cfg.minBatches)
	case cfg.minWrites < 0:
		return bad("-min-writes %d: must not be negative", cfg.minWrites)
	case cfg.cycles < 1 || cfg.cycles > 64:
		return bad("-cycles %d: want 1..64", cfg.cycles)
	case cfg.idle < 0:
		return bad("-idle %d: must not be negative", cfg.idle)
	case cfg.nsPace <= 0:
		return bad("-netns-pace %s: must be positive", cfg.nsPace)
	}
	if cfg.maxDuration == 0 {
		cfg.maxDuration = 4 * cfg.duration
	}
	if *modeFlag == "all" {
		return cfg, modes, 0, true
	}
	for _, m := range modes {
		if m.name == *modeFlag {
			return cfg, []mode{m}, 0, true
		}
	}
	return bad("-mode %q: want fixed0, fixed1, switch or all", *modeFlag)
}

// allowedCPUs lists the CPUs the program may run on.
func allowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, err
	}
	var cpus []int
	for i := 0; i < len(set)*64; i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	if len(cpus) == 0 {
		return nil, errors.New("empty CPU set")
	}
	return cpus, nil
}
