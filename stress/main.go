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
// -max-duration; a mode short of a minimum then, whose checks all passed,
// SKIPs: it proved less than asked, which says nothing about the kernel.
// Unless it is far slower than fixed0 in the same run: fixed1 and switch
// fail below paceBound of fixed0's notification rate, and switch when
// its writes are below writeBound of a sysctl's like it.
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
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	semantics "nlmcast/semantics/cases"
)

const program = "netlink_mcast_stress"

func main() { os.Exit(selftests.Main(suite)) }

// cfg is the command line, filled in by the program's flags.
var cfg config

var suite = selftests.Suite{
	Name: program,
	About: "Stress of NETLINK_ROUTE multicast delivery under socket, membership, option and namespace churn,\n" +
		"with net.core.netlink_route_mc_index held at 0, at 1, and flipping, checked exactly at stable receivers.\n\n" + minimaHelp,
	Flags:     cfg.register,
	Check:     cfg.check,
	Aliases:   []selftests.Alias{{Name: "mode", For: "t", All: "all"}},
	Switch:    true,
	Needs:     needs,
	Setup:     findCPUs,
	MakeCases: modeCases,
	// The modes' Timeout (modeCases); the failnth cases keep the frame's.
	CaseDeadlines: "a mode -max-duration + 5m0s: 9m0s, 13m0s with KSFT_MACHINE_SLOW=yes, less when\n" +
		"$kselftest_override_timeout caps -max-duration; 1m30s a failnth case",
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
	return append(cases, semantics.FaultInjectionInModes()...), nil
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
	for _, w := range cfg.weaknesses() {
		log("this run proves less: %s", w)
	}
	return nil, nil
}

// writerCPU is the CPU the switch writer is pinned to, the first of cpus
// after the senders' (sender i runs on cpus[i]), or why there is none:
// sharing a sender's CPU, its flips would land between that sender's
// broadcasts, not during them.
func writerCPU(cpus []int, senders int) (cpu int, skip string) {
	if len(cpus) < senders+1 {
		return -1, fmt.Sprintf("the switch writer is pinned to a CPU no sender uses, so that its flips land while broadcasts run: %d senders and the writer need %d CPUs, this program may use %d (%v)",
			senders, senders+1, len(cpus), cpus)
	}
	return cpus[senders], ""
}

// runModeCase runs one mode as a case: its problems fail it, its notes and
// report are diagnostics, and its JSON summary is a record of its own.
func runModeCase(t selftests.T, m mode) {
	sw, skip := selftests.HeldSwitch()
	if m.value != "0" && sw == nil {
		t.Skipf("%s", skip)
	}
	if sw == nil {
		t.Logf("%s: %s runs the only walk this kernel has", skip, m.name)
	}
	writer := -1
	if m.flipping() {
		var skip string
		if writer, skip = writerCPU(cpus, cfg.senders); skip != "" {
			t.Skipf("%s", skip)
		}
	}
	var inj injector
	var slab *failslab
	var leaks *kmemleak
	if m.faults {
		f, skip, err := openInjection()
		switch {
		case err != nil:
			t.Fatalf("%v", err)
		case skip != "":
			t.Skipf("%s", skip)
		}
		if f.unlocked != "" {
			t.Logf("%s", f.unlocked)
		}
		t.Cleanup(func() {
			if err := f.close(); err != nil {
				t.Errorf("put failslab's settings back: %v", err)
				return
			}
			t.Logf("failslab's settings put back: %s", f.savedSettings())
		})
		inj, slab = f, f
		k, ok, err := openKmemleak()
		if err != nil {
			t.Fatalf("%v", err)
		}
		if ok {
			leaks = k
		} else {
			t.Logf("no %s: leaks are not looked for", kmemleakFile)
		}
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
	cycles := cfg.cycles
	if m.flipping() {
		cycles = cfg.switchCycles
	}
	t.Logf("%s; %d senders, %s, %d cycles per batch", m.about, cfg.senders, cfg.duration, cycles)
	prog := newProgress("starting")
	stopProgress := selftests.Every(cfg.progressEvery, func() { t.Logf("%s", prog.line()) })
	defer stopProgress() // also when the mode ends in a Fatalf
	out := runMode(ctx, cfg, m, sw, cpus, writer, inj, prog)
	if slab != nil && !out.report.Interrupted {
		prog.set("reading failslab's and kmemleak's findings")
		afterFaults(t, &out, slab, leaks)
	}
	stopProgress()
	out.report.Problems = len(out.problems)
	out.report.Checks = out.verdict()
	out.report.Shortfalls = out.shortfalls
	if out.report.Interrupted {
		out.report.Checks = "interrupted"
	}
	keepBaseline(&out.report)
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
		return
	}
	if len(out.problems) > 0 {
		for _, s := range out.shortfalls {
			t.Logf("also short of a minimum: %s", s)
		}
		return
	}
	if len(out.shortfalls) > 0 {
		// Every check passed, but on less than the run was asked to
		// prove: a slow machine, not a kernel failure; never a pass.
		t.Skipf("%s", skipReason(out.shortfalls))
	}
}

// skipReason says why a mode in which every check passed SKIPs: what it
// fell short of, with the rates it reached.
func skipReason(shortfalls []string) string {
	return "every check passed, but the run proved less than asked (a slow machine?): " + strings.Join(shortfalls, "; ")
}

// kmemleakMinAge is how old kmemleak wants an unreferenced object before
// it reports it (jiffies_min_age, 5 s): a scan sooner after the teardown
// would miss what the teardown leaked.
const kmemleakMinAge = 5 * time.Second

// afterFaults checks what a fault mode must have done: failures were
// injected (how many hit the broadcast, runMode judges), and once the
// kernel has torn down the mode's namespaces, no object leaked.
func afterFaults(t selftests.T, out *outcome, inj *failslab, leaks *kmemleak) {
	n, err := inj.injected()
	if err != nil {
		out.fail("%v", err)
	}
	out.report.Injected = n
	if n == 0 && err == nil && out.report.DurationS > 0 && len(out.problems) == 0 {
		out.fail("no allocation failure was injected: the mode proved nothing about the kernel's failure paths")
	}
	if leaks == nil {
		return
	}
	if err := selftests.AwaitTeardown(t); err != nil {
		out.fail("waiting for the teardown before the leak scan: %v", err)
		return
	}
	select {
	case <-time.After(kmemleakMinAge):
	case <-selftests.Done(t):
		return
	}
	suspects, err := leaks.scan()
	if errors.Is(err, unix.EPERM) && bootedWith("kmemleak=off") {
		// kmemleak_write() refuses a scan while kmemleak is disabled.
		out.notes = append(out.notes, "the kernel was booted with kmemleak=off: leaks are not looked for")
		return
	}
	if err != nil {
		out.fail("%v", err)
		return
	}
	out.report.Kmemleak = len(suspects)
	for i, s := range suspects {
		if i == 10 {
			out.fail("kmemleak: %d suspects in all (%s)", len(suspects), kmemleakFile)
			break
		}
		out.fail("kmemleak: %s", s)
	}
}

// bootedWith says the kernel's command line has the parameter p.
func bootedWith(p string) bool {
	b, err := os.ReadFile("/proc/cmdline")
	return err == nil && slices.Contains(strings.Fields(string(b)), p)
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
			return "needs " + selftests.CapName(c) + ", which this process lacks"
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
	fs.DurationVar(&c.maxDuration, "max-duration", 0, "how long each mode may run to reach -min-batches, -min-writes and -min-failures; short of one then, it SKIPs (default 4 × -duration, 8 × with KSFT_MACHINE_SLOW=yes)")
	fs.IntVar(&c.senders, "senders", 2, "sender threads, each in its own namespace, pinned to one CPU")
	fs.IntVar(&c.minBatches, "min-batches", 100, "batches every sender must complete for the mode to pass")
	fs.Int64Var(&c.minWrites, "min-writes", 1000, "verified switch writes the switch mode must make")
	fs.IntVar(&c.cycles, "cycles", 4, "event cycles per batch (address add, route replace, stats switch, address delete each)")
	fs.IntVar(&c.switchCycles, "switch-cycles", 16, "event cycles per batch in the modes that flip the switch: batches long enough that the writer flips while most of them are in the kernel, even on an emulated CPU that the host deschedules for tens of milliseconds")
	fs.IntVar(&c.idle, "idle", 256, "idle subscribers in foreign namespaces (they make every walk of the global list long)")
	fs.DurationVar(&c.progressEvery, "progress", 10*time.Second, "how often a running mode prints a progress line (its phase, batches and switch writes), so that a slow mode is not taken for a stuck one; 0: never")
	fs.DurationVar(&c.nsPace, "netns-pace", 50*time.Millisecond, "at most one churn namespace per this interval")
	fs.BoolVar(&c.injectDup, "inject-duplicate", false, "SELF-TEST of the checker: halfway through each mode, multicast one duplicate of a message S0 caused; the mode must fail")
	fs.BoolVar(&c.injectWarning, "inject-warning", false, "SELF-TEST of the kernel watch: halfway through each mode, write a WARNING line to /dev/kmsg; the mode must fail (VMs only: other watchers of the kernel log see it too)")
	fs.BoolVar(&c.injectTeardownWarning, "inject-teardown-warning", false, "SELF-TEST of the kernel watch: write a WARNING line to /dev/kmsg once a mode has released its namespaces, while the kernel tears them down; that mode (not the next) must fail (VMs only)")
	fs.BoolVar(&c.injectLoss, "inject-loss", false, "SELF-TEST of the checker: the drainers of a stable receiver and of an option-churn socket each throw away one message they read; the mode must fail, naming both")
	fs.BoolVar(&c.injectIdle, "inject-idle", false, "SELF-TEST of the checker: halfway through each mode, send one message to an idle subscriber; the mode must fail")
	fs.BoolVar(&c.injectOverrun, "inject-overrun", false, "SELF-TEST of the checker: halfway through each mode, make a stable receiver overrun; the mode must fail (the fault modes account for overruns: there it must pass)")
	fs.BoolVar(&c.injectSetupFailure, "inject-setup-failure", false, "SELF-TEST of the run: sender S0's CPU pinning fails before it marks its thread; the mode must fail at once, injecting nothing")
	fs.IntVar(&c.failPercent, "fail-percent", 20, "fault modes: the percentage of the senders' socket buffer allocations that fail (20 reached -min-failures 100 in 100-150 s a mode on P-fault, KASAN under TCG on a loaded host; 5 hit the broadcast 0.2-0.5 times a second there)")
	fs.Int64Var(&c.minFailures, "min-failures", 100, "fault modes: failures that must hit the NETLINK_ROUTE walk, counted as ENOBUFS at the foreign LISTEN_ALL_NSID observer, which only a failed clone in the walk overruns; each NETLINK_USERSOCK receiver kind needs a 50th of it; none on ROUTE while the usersock kinds reached theirs fails the mode")
}

// minimaHelp is the -h text on the count minima (-min-batches,
// -min-writes, -min-failures, half the batches with a flip): they are
// promises about what a run proves, not about the kernel. netdev CI sets
// KSFT_MACHINE_SLOW=yes on slow runners.
const minimaHelp = "Count minima (-min-batches, -min-writes, -min-failures): a mode short of one by -max-duration, with every check passed, SKIPs\n" +
	"saying what it missed and the rates reached. Rates are also judged against fixed0's in the same run: fixed1 and switch\n" +
	"fail below 1/16 of its notifications per second, and switch when its writes take over twice a reference sysctl's.\n" +
	"KSFT_MACHINE_SLOW=yes makes -max-duration default to 8 × -duration;\n" +
	"$kselftest_override_timeout (seconds) caps -max-duration so that the six modes fit in it."

// modeOverhead is what a mode takes besides its run, on a slow kernel:
// building the topology, judging it, the teardown wait and kmemleak's scans.
const modeOverhead = 60 * time.Second

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
	case c.switchCycles < 1 || c.switchCycles > 64:
		return fmt.Errorf("-switch-cycles %d: want 1..64", c.switchCycles)
	case c.idle < 0:
		return fmt.Errorf("-idle %d: must not be negative", c.idle)
	case c.nsPace <= 0:
		return fmt.Errorf("-netns-pace %s: must be positive", c.nsPace)
	case c.duration > maxDuration || c.maxDuration > maxDuration:
		return fmt.Errorf("-duration %s, -max-duration %s: at most %s each (run the program again for more)", c.duration, c.maxDuration, maxDuration)
	case c.failPercent < 1 || c.failPercent > 100:
		return fmt.Errorf("-fail-percent %d: want 1..100", c.failPercent)
	case c.minFailures < 0:
		return fmt.Errorf("-min-failures %d: must not be negative", c.minFailures)
	}
	c.slow = os.Getenv("KSFT_MACHINE_SLOW") == "yes"
	if c.maxDuration == 0 {
		factor := time.Duration(4)
		if c.slow {
			factor = 8
		}
		c.maxDuration = min(factor*c.duration, maxDuration)
	}
	if v := os.Getenv("kselftest_override_timeout"); v != "" {
		secs, err := strconv.Atoi(v)
		if err != nil || secs <= 0 {
			return fmt.Errorf("kselftest_override_timeout=%q: want a number of seconds", v)
		}
		c.fitTimeout(time.Duration(secs) * time.Second)
	}
	return nil
}

// fitTimeout caps -max-duration so that every mode, its overhead
// included, ends within the runner's timeout; never below -duration.
func (c *config) fitTimeout(timeout time.Duration) {
	fit := timeout/time.Duration(len(modes)) - modeOverhead
	if fit >= c.maxDuration {
		return
	}
	c.maxDuration = max(fit, c.duration)
	c.capped = fmt.Sprintf("-max-duration cut to %s so that %d modes fit in kselftest_override_timeout=%s", c.maxDuration, len(modes), timeout)
	if fit < c.duration {
		c.capped += fmt.Sprintf(" (it should be %s: -duration %s does not fit)", fit, c.duration)
	}
}

// maxDuration bounds -duration and -max-duration: a week, far more than
// any run needs, and far from where 4 × -duration overflows.
const maxDuration = 7 * 24 * time.Hour

// weaknesses are what the flags make a run prove less than its modes'
// names say, for a note at the start.
func (c *config) weaknesses() []string {
	var w []string
	if c.senders == 1 {
		w = append(w, "-senders 1: no two senders' broadcasts overlap in the kernel")
	}
	if c.minBatches == 0 {
		w = append(w, "-min-batches 0: a mode may pass with senders that completed no batch")
	}
	if c.minWrites == 0 {
		w = append(w, "-min-writes 0: the switch mode may pass without a verified flip")
	}
	if c.idle == 0 {
		w = append(w, "-idle 0: the walks of the global lists are short")
	}
	if c.capped != "" {
		w = append(w, c.capped)
	}
	return w
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
