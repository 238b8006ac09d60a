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
// mode, and -inject-teardown-warning once the mode has released its
// namespaces (while the kernel tears them down), each of which must then
// fail that mode with a kernel report; use them only in a VM, since every
// other watcher of that machine's kernel log sees the line.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
)

const program = "netlink_mcast_stress"

func main() { os.Exit(selftests.Main(suite)) }

// cfg is the command line, filled in by the program's flags.
var cfg config

var suite = selftests.Suite{
	Name: program,
	About: "Stress of NETLINK_ROUTE multicast delivery under socket, membership, option and namespace churn,\n" +
		"with net.core.netlink_route_mc_index held at 0, at 1, and flipping, checked exactly at stable receivers.",
	Flags:     cfg.register,
	Check:     cfg.check,
	Aliases:   []selftests.Alias{{Name: "mode", For: "t", All: "all"}},
	Switch:    true,
	Needs:     needs,
	Setup:     findCPUs,
	MakeCases: modeCases,
}

// setupAllowance is what a mode may take beyond -max-duration before the
// frame gives up on it: building the topology (thousands of sockets,
// dozens of namespaces) and judging every receiver, on the slowest kernel
// it runs on (KASAN and lockdep under TCG).
const setupAllowance = 5 * time.Minute

// modeCases makes one case per mode. A mode waits, once it has ended,
// for the kernel to tear down every namespace it made (Settle), so that a
// report from their teardown fails it and not the next mode; and its
// verdict rests on the kernel log being read (RequireKernelLog).
func modeCases() ([]selftests.Case, error) {
	cases := make([]selftests.Case, len(modes))
	for i, m := range modes {
		cases[i] = selftests.Case{
			Name:             m.name,
			About:            m.about,
			Timeout:          cfg.maxDuration + setupAllowance,
			Settle:           true,
			RequireKernelLog: true,
			Run:              func(t selftests.T) { runModeCase(t, m) },
		}
	}
	return cases, nil
}

// cpus are the CPUs the program may run on (findCPUs).
var cpus []int

// findCPUs is the Setup: it finds the CPUs the senders are pinned to.
func findCPUs(log func(format string, args ...any)) (func() error, error) {
	var err error
	if cpus, err = allowedCPUs(); err != nil {
		log("sched_getaffinity: %v; all senders on CPU 0", err)
		cpus = []int{0}
	}
	if len(cpus) < cfg.senders {
		log("%d CPUs for %d senders: senders share CPUs (sender i on CPU %v[i mod %d])", len(cpus), cfg.senders, cpus, len(cpus))
	}
	return nil, nil
}

// runModeCase runs one mode as a case: its problems fail it, its notes and
// report are diagnostics, and its JSON summary is a record of its own.
func runModeCase(t selftests.T, m mode) {
	sw, skip := selftests.HeldSwitch()
	if m.value != "0" && sw == nil {
		t.Skipf("%s", skip)
	}
	if sw == nil {
		t.Logf("%s: fixed0 runs the only walk this kernel has", skip)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-selftests.Done(t):
			cancel()
		case <-ctx.Done():
		}
	}()
	t.Logf("%s; %d senders, %s, %d cycles per batch", m.about, cfg.senders, cfg.duration, cfg.cycles)
	out := runMode(ctx, cfg, m, sw, cpus)
	out.report.Problems = len(out.problems)
	out.report.Checks = "pass"
	switch {
	case out.report.Interrupted:
		out.report.Checks = "interrupted"
	case len(out.problems) > 0:
		out.report.Checks = "fail"
	}
	for _, n := range out.notes {
		t.Logf("%s", n)
	}
	for _, l := range out.report.lines() {
		selftests.Record(t, "%s", l)
	}
	selftests.Record(t, "stress-json: %s", out.report.json())
	for _, p := range out.problems {
		t.Errorf("%s", p)
	}
	if out.report.Interrupted {
		// Under a stop this reads "interrupted by SIGTERM"; at the
		// frame's deadline, the TIMEOUT says why.
		t.Errorf("stopped after %.1fs, before its minima were checked", out.report.DurationS)
	}
}

// needs says why the stress run cannot run here: its receivers force
// their buffers (SO_RCVBUFFORCE) and set nsids, which the kernel checks
// against CAP_NET_ADMIN over the initial user namespace, and subscribe
// with NETLINK_LISTEN_ALL_NSID, which needs CAP_NET_BROADCAST.
func needs() string {
	for _, c := range []int{unix.CAP_NET_ADMIN, unix.CAP_NET_BROADCAST} {
		has, err := selftests.HasCapability(c)
		switch {
		case err != nil:
			return err.Error()
		case !has:
			return "needs " + selftests.CapName(c) + " (run as root)"
		}
	}
	if !selftests.InInitialUserNS() {
		return "needs CAP_NET_ADMIN in the initial user namespace (SO_RCVBUFFORCE, nsids); this process is root of a child user namespace only"
	}
	return ""
}

// register adds the program's own flags.
func (c *config) register(fs *flag.FlagSet) {
	fs.DurationVar(&c.duration, "duration", 60*time.Second, "how long each mode runs at least; it goes on until the minima are reached")
	fs.DurationVar(&c.maxDuration, "max-duration", 0, "how long each mode may run to reach -min-batches and -min-writes; short of them then, it fails (default 4 × -duration)")
	fs.IntVar(&c.senders, "senders", 2, "sender threads, each in its own namespace, pinned to one CPU")
	fs.IntVar(&c.minBatches, "min-batches", 100, "batches every sender must complete for the mode to pass")
	fs.Int64Var(&c.minWrites, "min-writes", 1000, "verified switch writes the switch mode must make")
	fs.IntVar(&c.cycles, "cycles", 4, "event cycles per batch (address add, route replace, stats switch, address delete each)")
	fs.IntVar(&c.idle, "idle", 256, "idle subscribers in foreign namespaces (they make every walk of the global list long)")
	fs.DurationVar(&c.nsPace, "netns-pace", 50*time.Millisecond, "at most one churn namespace per this interval")
	fs.BoolVar(&c.injectDup, "inject-duplicate", false, "SELF-TEST of the checker: halfway through each mode, multicast one duplicate of a message S0 caused; the mode must fail")
	fs.BoolVar(&c.injectWarning, "inject-warning", false, "SELF-TEST of the kernel watch: halfway through each mode, write a WARNING line to /dev/kmsg; the mode must fail (VMs only: other watchers of the kernel log see it too)")
	fs.BoolVar(&c.injectTeardownWarning, "inject-teardown-warning", false, "SELF-TEST of the kernel watch: write a WARNING line to /dev/kmsg once a mode has released its namespaces, while the kernel tears them down; that mode (not the next) must fail (VMs only)")
}

// check validates the flags.
func (c *config) check() error {
	switch {
	case c.duration <= 0:
		return fmt.Errorf("-duration %s: must be positive", c.duration)
	case c.maxDuration < 0 || (c.maxDuration > 0 && c.maxDuration < c.duration):
		return fmt.Errorf("-max-duration %s: must be at least -duration %s", c.maxDuration, c.duration)
	case c.senders < 1 || c.senders > 64:
		return fmt.Errorf("-senders %d: want 1..64", c.senders)
	case c.minBatches < 0:
		return fmt.Errorf("-min-batches %d: must not be negative", c.minBatches)
	case c.minWrites < 0:
		return fmt.Errorf("-min-writes %d: must not be negative", c.minWrites)
	case c.cycles < 1 || c.cycles > 64:
		return fmt.Errorf("-cycles %d: want 1..64", c.cycles)
	case c.idle < 0:
		return fmt.Errorf("-idle %d: must not be negative", c.idle)
	case c.nsPace <= 0:
		return fmt.Errorf("-netns-pace %s: must be positive", c.nsPace)
	}
	if c.maxDuration == 0 {
		c.maxDuration = 4 * c.duration
	}
	return nil
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
