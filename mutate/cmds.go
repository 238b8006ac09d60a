// SPDX-License-Identifier: GPL-2.0

package main

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"nlmcast/mutate/internal/cfunc"
	"nlmcast/semantics/cases"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func cmdPrepare(args []string) int {
	fs := flag.NewFlagSet("mutate prepare", flag.ContinueOnError)
	var patches, configs listFlag
	tarball := fs.String("tarball", "/usr/src/linux-source-6.1.tar.xz", "kernel source `tarball` (Debian's linux-source)")
	fs.Var(&patches, "patch", "patch to apply with -p1 (repeatable)")
	fs.Var(&configs, "config", "configuration fragment merged over tinyconfig (repeatable)")
	src := fs.String("src", "", "source tree `dir` to create (kept if it has a Makefile already)")
	build := fs.String("build", "", "build `dir` (O=); the source dir for an in-tree build")
	jobs := fs.Int("j", 2, "make -j")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *src == "" || *build == "" {
		fmt.Fprintln(os.Stderr, "mutate prepare: -src and -build are required")
		return 2
	}
	if err := prepareTree(*tarball, patches, kernelTree{src: *src, build: *build, jobs: *jobs}, configs, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "mutate prepare: %v\n", err)
		return 1
	}
	return 0
}

func cmdList(args []string) int {
	fs := flag.NewFlagSet("mutate list", flag.ContinueOnError)
	src := fs.String("src", "", "kernel source tree")
	set := fs.String("set", defaultSet, "function set: "+strings.Join(setNames(), ", "))
	summary := fs.Bool("summary", false, "print the set's size per function and operator instead of the mutants")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ms, err := setMutants(*src, *set)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mutate list: %v\n", err)
		return 1
	}
	if *summary {
		writeSummary(os.Stdout, ms)
		return 0
	}
	for _, m := range ms {
		fmt.Printf("%s\t%s:%d\t%q -> %q\n", m.ID, m.File, m.Line, m.Orig, m.Repl)
	}
	fmt.Fprintf(os.Stderr, "%d mutants\n", len(ms))
	return 0
}

// runOptions are run's flags.
type runOptions struct {
	tree         kernelTree
	out          string
	set          string
	seed         int64
	n            int
	ids          []string
	equivalent   string
	commit       bool
	tarball      string
	patches      []string
	configs      []string
	tiers        []string
	patternBuild string
	debugBuild   string
	faultBuild   string
	failFast     bool
	silence      time.Duration
	progTimeout  time.Duration
	expect       []string
	baseline     bool
	stressArgs   string
	toolsDir     string
	plan         bool
	icount       bool
	// allowSuiteChange lets a campaign be resumed at another suite commit.
	allowSuiteChange bool
	heldOut          bool
}

func cmdRun(args []string) int {
	var o runOptions
	fs := flag.NewFlagSet("mutate run", flag.ContinueOnError)
	var patches, configs listFlag
	var ids, tiers, expect string
	fs.StringVar(&o.tree.src, "src", "", "kernel source tree (a git tree; made with -tarball and -patch when missing)")
	fs.StringVar(&o.tree.build, "build", "", "build directory (O=), configured and built once; the source tree for an in-tree build")
	fs.IntVar(&o.tree.jobs, "j", 2, "make -j")
	fs.StringVar(&o.out, "out", "", "results `dir`: campaign.json, records/ID.json, table.md; resumed when it exists")
	fs.StringVar(&o.set, "set", defaultSet, "function set: "+strings.Join(setNames(), ", "))
	fs.Int64Var(&o.seed, "seed", 0, "sample -n mutants of the set with this seed (0: every mutant, or -ids)")
	fs.IntVar(&o.n, "n", 0, "sample size with -seed")
	fs.StringVar(&ids, "ids", "", "comma-separated mutant IDs to run, in this order (instead of a sample)")
	fs.StringVar(&o.equivalent, "equivalent", "mutate/equivalent.txt", "the equivalence arguments, by mutant ID")
	fs.BoolVar(&o.commit, "commit", false, "git commit the results directory after every mutant")
	fs.StringVar(&o.tarball, "tarball", "", "to rebuild a missing -src/-build: the kernel source tarball")
	fs.Var(&patches, "patch", "with -tarball: patch to apply (repeatable)")
	fs.Var(&configs, "config", "with -tarball: configuration fragment over tinyconfig (repeatable)")
	fs.StringVar(&tiers, "tiers", "base,pattern,debug,stress,fault", "tiers in order; a survivor of one goes on to the next")
	fs.StringVar(&o.patternBuild, "pattern-build", "", "build dir configured as -build but with CONFIG_INIT_STACK_ALL_PATTERN=y for the pattern tier (uninitialised stack bytes 0xfe, not GCC 12's zero); without it that tier is not run")
	fs.StringVar(&o.debugBuild, "debug-build", "", "build dir configured with debug.config (KASAN, lockdep, DEBUG_LIST) for the debug tier; without it that tier is not run")
	fs.StringVar(&o.faultBuild, "fault-build", "", "build dir configured with debug.config and fault.config for the fault tier; without it that tier is not run")
	fs.BoolVar(&o.failFast, "fail-fast", true, "end a boot at its first failed case")
	fs.DurationVar(&o.silence, "silence", 60*time.Second, "a boot whose TAP is silent this long is hung")
	fs.DurationVar(&o.progTimeout, "prog-timeout", 120*time.Second, "per-program limit in the guest")
	fs.StringVar(&expect, "expect", "", "comma-separated classes, one per -ids mutant: exit 1 unless each is classified so (the CI smoke)")
	fs.BoolVar(&o.baseline, "baseline", true, "first boot the unmutated tree and stop unless it passes")
	fs.StringVar(&o.stressArgs, "stress-args", "-duration 10s -min-batches 20 -min-writes 200", "the stress program's arguments in the stress and fault tiers")
	fs.BoolVar(&o.icount, "icount", false, "boot with vmtest -icount: the guest's clock counts instructions, so that the cases' own deadlines do not fail on a loaded host (one guest CPU)")
	fs.BoolVar(&o.plan, "plan", false, "write campaign.json and table.md (the sample) and stop, building and booting nothing: a campaign another run (or machine) carries out")
	fs.BoolVar(&o.heldOut, "held-out", false, "a held-out sample (with -seed and -n): the suite must be a clean commit, which the whole campaign is decided at; its score is the one to quote")
	fs.BoolVar(&o.allowSuiteChange, "allow-suite-change", false, "resume a campaign although the suite's commit is not the one it started at (its score then mixes commits, and says so)")
	fs.StringVar(&o.toolsDir, "tools", "", "`dir` with vmtest, init (vmtest/guestinit) and the programs, built already (default: build them)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	o.patches, o.configs = patches, configs
	o.tiers = splitList(tiers)
	o.ids = splitList(ids)
	o.expect = splitList(expect)
	switch {
	case o.tree.src == "" || o.tree.build == "" || o.out == "":
		fmt.Fprintln(os.Stderr, "mutate run: -src, -build and -out are required")
		return 2
	case len(o.expect) > 0 && len(o.expect) != len(o.ids):
		fmt.Fprintln(os.Stderr, "mutate run: -expect needs one class per -ids mutant")
		return 2
	case o.seed != 0 && o.n <= 0:
		fmt.Fprintln(os.Stderr, "mutate run: -seed needs -n")
		return 2
	case o.heldOut && (o.seed == 0 || len(o.ids) > 0):
		fmt.Fprintln(os.Stderr, "mutate run: -held-out needs -seed and -n, not -ids: a sample nobody chose")
		return 2
	}
	for _, t := range o.tiers {
		if !slices.Contains([]string{"base", "pattern", "debug", "stress", "fault"}, t) {
			fmt.Fprintf(os.Stderr, "mutate run: unknown tier %q\n", t)
			return 2
		}
	}
	g := newGuard(filepath.Join(o.tree.build, ".mutate"))
	ctx, exitCode := restoreOnSignal(g)
	// The command a campaign records is the one that carries it out.
	var carry []string
	for _, a := range args {
		if a != "-plan" && a != "--plan" && a != "-plan=true" {
			carry = append(carry, a)
		}
	}
	code := run(ctx, o, g, strings.Join(append([]string{"go run ./mutate run"}, quoteArgs(carry)...), " "))
	return exitCode(code)
}

// restoreOnSignal makes SIGINT, SIGTERM and SIGHUP put the source back at
// once and cancel the context, so that the run ends its children (make,
// vmtest and QEMU) and returns; it forces the exit if that takes too
// long. exitCode restores once more (a normal end) and gives the status:
// 128+signal after a signal.
func restoreOnSignal(g *guard) (context.Context, func(int) int) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	caught := make(chan os.Signal, 1)
	go func() {
		s := <-sigs
		caught <- s
		cancel()
		if err := g.Restore(); err != nil {
			fmt.Fprintf(os.Stderr, "mutate: %v\n", err)
		}
		fmt.Fprintf(os.Stderr, "mutate: %v: source restored, stopping\n", s)
		time.AfterFunc(30*time.Second, func() { os.Exit(128 + int(s.(syscall.Signal))) })
	}()
	return ctx, func(code int) int {
		defer cancel()
		if err := g.Restore(); err != nil {
			fmt.Fprintf(os.Stderr, "mutate: %v\n", err)
			code = 1
		}
		select {
		case s := <-caught:
			return 128 + int(s.(syscall.Signal))
		default:
		}
		return code
	}
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func quoteArgs(args []string) []string {
	var out []string
	for _, a := range args {
		if strings.ContainsAny(a, " \t'\"") {
			a = "'" + a + "'"
		}
		out = append(out, a)
	}
	return out
}

// tools are the binaries a run builds once: vmtest, its guest init and the
// programs for the guest.
type tools struct {
	vmtest, init               string
	semantics, switchp, stress string
}

func toolsIn(dir string) tools {
	return tools{
		vmtest:    filepath.Join(dir, "vmtest"),
		init:      filepath.Join(dir, "init"),
		semantics: filepath.Join(dir, "netlink_mcast_semantics"),
		switchp:   filepath.Join(dir, "netlink_mcast_switch"),
		stress:    filepath.Join(dir, "netlink_mcast_stress"),
	}
}

func buildTools(dir string) (tools, error) {
	t := toolsIn(dir)
	for out, pkg := range map[string]string{t.vmtest: "./vmtest", t.init: "./vmtest/guestinit", t.semantics: "./semantics", t.switchp: "./switchtest", t.stress: "./stress"} {
		cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-o", out, pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
		if b, err := cmd.CombinedOutput(); err != nil {
			return t, fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	return t, nil
}

// tierPlan is one tier: where its mutant is built and how it boots.
type tierPlan struct {
	name    string
	tree    kernelTree // the build dir; base's for the stress tier
	rebuild bool       // the mutant must be built in tree first
	plan    bootPlan
	skip    string // why the tier cannot run
}

// bootAppend is the kernel command line every tier adds (see tierPlans).
const bootAppend = "oops=panic no_timer_check"

// faultAppend is what the fault tier adds: the stress program's fault
// modes need skbuff_head_cache marked for failslab.
const faultAppend = "slub_debug=A,skbuff_head_cache"

// failnthCases are the stress program's cases that need fault injection
// (fail-nth), by the names it runs them under.
func failnthCases() string {
	var l []string
	for _, c := range cases.FaultInjectionInModes() {
		l = append(l, c.Name)
	}
	return strings.Join(l, ",")
}

func tierPlans(o runOptions, tl tools) []tierPlan {
	suite := []string{tl.semantics, tl.switchp}
	timeout := fmt.Sprintf("%ds", int(o.progTimeout.Seconds()))
	base := bootPlan{vmtest: tl.vmtest, init: tl.init, progs: suite, failFast: o.failFast,
		silence: o.silence, limit: 2*o.progTimeout + 2*time.Minute,
		// oops=panic: an Oops ends the boot at once (panic=-1 and QEMU's
		// -no-reboot), instead of leaving the oopsed program's locks held
		// and the guest silent until the watchdog. no_timer_check: on a
		// loaded host TCG can run the early IO-APIC timer check too slowly,
		// and the kernel then panics ("IO-APIC + timer doesn't work!")
		// before any netlink code has run; seen on a baseline boot.
		args: []string{"-prog-timeout", timeout, "-append", bootAppend}}
	// The debug kernel runs several times slower.
	debug := base
	// The same silence: a case prints its line when it ends, and each
	// tier's own baseline boot shows its cases end well within it.
	debug.limit = 6*o.progTimeout + 2*time.Minute
	debug.args = []string{"-prog-timeout", fmt.Sprintf("%ds", 3*int(o.progTimeout.Seconds())), "-append", bootAppend}
	stressPlan := func(modes string, from bootPlan, cmdline string) bootPlan {
		p := from
		p.progs = []string{tl.stress}
		// The stress program's own arguments: -args would give them to
		// every program of the boot.
		p.args = []string{"-prog-timeout", "900s", "-append", cmdline,
			"-prog-args", filepath.Base(tl.stress) + "=" + o.stressArgs + " -t " + strings.ReplaceAll(modes, ",", " -t ")}
		p.limit = 20 * time.Minute
		// The same silence as the other tiers: a mode prints a progress
		// line every 10 s while it sets up, runs, judges and closes, and
		// the program says so while the kernel tears its namespaces down.
		p.silence = o.silence
		return p
	}
	if o.icount {
		for _, p := range []*bootPlan{&base, &debug} {
			p.args = append(p.args, "-icount")
		}
	}
	var out []tierPlan
	for _, name := range o.tiers {
		t := tierPlan{name: name}
		switch name {
		case "base":
			t.tree, t.rebuild, t.plan = o.tree, true, base
		case "pattern":
			// A production kernel whose locals start as 0xfe bytes: a
			// deleted initialisation, which INIT_STACK_ALL_ZERO (the
			// default with GCC 12) turns into the zero the code wrote,
			// becomes a wrong value or a wild pointer.
			t.tree, t.rebuild, t.plan = kernelTree{src: o.tree.src, build: o.patternBuild, jobs: o.tree.jobs}, true, base
			if o.patternBuild == "" {
				t.skip = "no -pattern-build"
			}
		case "debug":
			t.tree, t.rebuild, t.plan = kernelTree{src: o.tree.src, build: o.debugBuild, jobs: o.tree.jobs}, true, debug
			if o.debugBuild == "" {
				t.skip = "no -debug-build"
			}
		case "stress":
			t.tree, t.plan = o.tree, stressPlan("fixed0,fixed1,switch", base, bootAppend)
		case "fault":
			t.tree, t.rebuild = kernelTree{src: o.tree.src, build: o.faultBuild, jobs: o.tree.jobs}, true
			// The fault modes fail allocations from skbuff_head_cache
			// only, which 6.1 marks for failslab at boot alone: without
			// the mark they SKIP.
			// The fail-nth cases (a notification's allocation made to
			// fail) SKIP on every other tier's kernel: here they run,
			// first (seconds, against the fault modes' minutes).
			t.plan = stressPlan(failnthCases()+",faults0,faults1,faultswitch", debug, bootAppend+" "+faultAppend)
			if o.faultBuild == "" {
				t.skip = "no -fault-build"
			}
		}
		out = append(out, t)
	}
	return out
}

func run(ctx context.Context, o runOptions, g *guard, command string) int {
	logf := func(format string, a ...any) { fmt.Fprintf(os.Stderr, "mutate: "+format+"\n", a...) }
	if f, err := g.Recover(); err != nil {
		logf("recover: %v", err)
		return 1
	} else if f != "" {
		logf("restored %s, left mutated by a run that was killed", f)
	}
	if _, err := os.Stat(o.tree.image()); err != nil && !o.plan {
		if o.tarball == "" {
			logf("%s: no built image and no -tarball to prepare the tree from", o.tree.build)
			return 1
		}
		logf("preparing %s and %s (a clean build: about 11 minutes on 2 cores)", o.tree.src, o.tree.build)
		if err := prepareTree(o.tarball, o.patches, o.tree, o.configs, os.Stderr); err != nil {
			logf("prepare: %v", err)
			return 1
		}
	}
	all, err := setMutants(o.tree.src, o.set)
	if err != nil {
		logf("%v", err)
		return 1
	}
	byID := map[string]cfunc.Mutant{}
	for _, m := range all {
		byID[m.ID] = m
	}
	equiv, err := readEquivalences(o.equivalent)
	if err != nil {
		logf("%v", err)
		return 1
	}
	buildConfig, err := configSet(filepath.Join(o.tree.build, ".config"))
	if err != nil {
		logf("the build's config, for the equivalence arguments: %v", err)
		return 1
	}
	text, err := os.ReadFile(filepath.Join(o.tree.src, funcSets[o.set].file))
	if err != nil {
		logf("%v", err)
		return 1
	}
	fileSum := fmt.Sprintf("%x", sha256.Sum256(text))
	rd := resultsDir{dir: o.out}
	c, resumed, err := rd.readCampaign()
	if err != nil {
		logf("%v", err)
		return 1
	}
	if !resumed {
		c = campaign{Command: command, Set: o.set, File: funcSets[o.set].file, Kernel: o.tree.version(),
			Commit: o.tree.commit(), FileSHA256: fileSum, Config: strings.Join(o.configs, " "), SetSize: len(all), Seed: o.seed,
			Tiers: o.tiers, Started: time.Now().UTC(), SuiteCommit: suiteCommit()}
		if o.heldOut {
			if strings.HasSuffix(c.SuiteCommit, "-dirty") || c.SuiteCommit == "unknown" {
				logf("-held-out: the suite is %s: commit first, a held-out campaign is decided at one commit", c.SuiteCommit)
				return 2
			}
			c.HeldOut, c.CasesCommit = true, lastCaseChange()
		}
		if c.Config == "" {
			c.Config = "(the build dir's .config)"
		}
		switch {
		case len(o.ids) > 0:
			c.Sample = o.ids
		case o.seed != 0:
			r := rand.New(rand.NewPCG(uint64(o.seed), 0))
			for _, i := range r.Perm(len(all))[:min(o.n, len(all))] {
				c.Sample = append(c.Sample, all[i].ID)
			}
		default:
			for _, m := range all {
				c.Sample = append(c.Sample, m.ID)
			}
		}
		if err := rd.writeJSON(filepath.Join(o.out, "campaign.json"), c); err != nil {
			logf("%v", err)
			return 1
		}
	} else {
		logf("resuming %s: %s, %d mutants in the sample", o.out, c.Set, len(c.Sample))
		if c.Set != o.set {
			logf("%s is a campaign on set %s, not %s", o.out, c.Set, o.set)
			return 2
		}
		if c.FileSHA256 != fileSum {
			logf("%s in %s is not the campaign's (sha256 %s, the campaign's %s)", c.File, o.tree.src, fileSum, c.FileSHA256)
			return 1
		}
		// Every record of a campaign went through the same tiers.
		if strings.Join(c.Tiers, ",") != strings.Join(o.tiers, ",") {
			logf("the campaign's tiers are %s: -tiers %s ignored", strings.Join(c.Tiers, ","), strings.Join(o.tiers, ","))
			o.tiers = c.Tiers
		}
	}
	for _, id := range c.Sample {
		if _, ok := byID[id]; !ok {
			logf("mutant %s is not in set %s of this tree (%d mutants)", id, o.set, len(all))
			return 1
		}
	}
	recs, err := rd.records()
	if err != nil {
		logf("%v", err)
		return 1
	}
	if o.plan {
		if err := rd.writeTable(c, recs); err != nil {
			logf("%v", err)
			return 1
		}
		logf("%s: the campaign's sample of %d mutants is written; nothing built or booted (-plan)", o.out, len(c.Sample))
		return 0
	}
	tl := toolsIn(o.toolsDir)
	if o.toolsDir == "" {
		binDir, err := os.MkdirTemp("", "mutate-bin-")
		if err != nil {
			logf("%v", err)
			return 1
		}
		defer os.RemoveAll(binDir)
		if tl, err = buildTools(binDir); err != nil {
			logf("%v", err)
			return 1
		}
	}
	plans := tierPlans(o, tl)
	// Each mutant's build and boot output, with the time of every TAP
	// line, goes to a log of its own in the build dir (not the results).
	logDir := filepath.Join(o.tree.build, ".mutate", "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		logf("%v", err)
		return 1
	}
	openLog := func(name string) (*os.File, error) {
		return os.Create(filepath.Join(logDir, strings.ReplaceAll(name, "/", "_")+".log"))
	}
	logf("logs of each build and boot: %s", logDir)
	srcFile := filepath.Join(o.tree.src, funcSets[o.set].file)
	pristine, err := os.ReadFile(srcFile)
	if err != nil {
		logf("%v", err)
		return 1
	}
	stamp := recordStamp{SuiteCommit: suiteCommit(), Kernel: o.tree.version(), ConfigSHA256: fileSHA256(filepath.Join(o.tree.build, ".config"))}
	if c.HeldOut && c.SuiteCommit != stamp.SuiteCommit {
		logf("%s is a held-out campaign at suite commit %s, this is %s: its records are decided at that commit alone (check it out in a worktree to go on)",
			o.out, c.SuiteCommit, stamp.SuiteCommit)
		return 2
	}
	if c.SuiteCommit != "" && c.SuiteCommit != stamp.SuiteCommit && !o.allowSuiteChange {
		logf("%s is a campaign at suite commit %s, this is %s: every record of a campaign is decided by one commit (-allow-suite-change to go on regardless)",
			o.out, c.SuiteCommit, stamp.SuiteCommit)
		return 2
	}
	bl := &baseliner{o: o, tl: tl, logf: logf, openLog: openLog, done: map[string]bool{}, objs: map[string]string{}, file: funcSets[o.set].file}
	if o.baseline {
		// A baseline that fails would make every mutant "killed".
		t0 := time.Now()
		r, err := bl.boot(ctx, plans, 0)
		if err != nil {
			logf("%v", err)
			return 1
		}
		// The program limit follows the baseline, so that a loaded host
		// (TCG slows down with it) does not turn a slow program into a
		// TIMEOUT; the silence does not: a hang is known after -silence.
		o.progTimeout = max(o.progTimeout, time.Duration(3*r.seconds)*time.Second)
		bl.o = o
		ran := plans[0].plan.ranBefore
		plans = tierPlans(o, tl)
		plans[0].plan.ranBefore = ran
		logf("base: baseline took %.0f s; a mutant's boot is hung after %v without a TAP line; program limit %v",
			time.Since(t0).Seconds(), o.silence.Round(time.Second), o.progTimeout.Round(time.Second))
		// The stress tier boots the base build's image: its baseline must
		// run now, while that image is the unmutated one.
		for i := range plans {
			if plans[i].name == "stress" && plans[i].skip == "" {
				if _, err := bl.boot(ctx, plans, i); err != nil {
					logf("%v", err)
					return 1
				}
			}
		}
	}
	ensureBaseline := func(i int) (bool, error) {
		if !o.baseline {
			return false, nil
		}
		if !bl.done[plans[i].name] {
			if _, err := bl.boot(ctx, plans, i); err != nil {
				return false, err
			}
		}
		return true, nil
	}
	start := time.Now()
	doneNow := 0
	todo := 0
	for _, id := range c.Sample {
		if rec, ok := recs[id]; !ok || rec.Status == statusError {
			todo++
		}
	}
	logf("%d of %d mutants to run (%d recorded already)", todo, len(c.Sample), len(c.Sample)-todo)
	for _, id := range c.Sample {
		if rec, ok := recs[id]; ok && rec.Status != statusError {
			continue // a host failure's record is done again
		}
		if ctx.Err() != nil {
			break
		}
		m := byID[id]
		mlog, err := openLog(id)
		if err != nil {
			logf("%v", err)
			return 1
		}
		rec, err := runMutant(ctx, m, pristine, srcFile, plans, g, bl.objs, ensureBaseline, mlog)
		mlog.Close()
		rec.recordStamp = stamp
		if ctx.Err() != nil {
			break // an interrupted mutant is not recorded: the next run does it again
		}
		if err != nil {
			logf("%s: %v", id, err)
			return 1
		}
		if _, why := rec.argue(equiv, buildConfig, c.Kernel); why != "" {
			logf("%s: %s: not applied", id, why)
		}
		recs[id] = rec
		if err := rd.writeJSON(rd.recordPath(id), rec); err != nil {
			logf("%v", err)
			return 1
		}
		if err := rd.writeTable(c, recs); err != nil {
			logf("%v", err)
			return 1
		}
		if o.commit {
			if err := rd.commit(fmt.Sprintf("mutation: %s: %s %s", filepath.Base(o.out), id, rec.Status)); err != nil {
				logf("%v", err)
			}
		}
		doneNow++
		per := time.Since(start) / time.Duration(doneNow)
		left := todo - doneNow
		logf("[%d/%d] %s: %s %s (%.0f s); %v per mutant, about %v left", len(c.Sample)-todo+doneNow, len(c.Sample),
			id, rec.Status, rec.DecidedBy, rec.Seconds, per.Round(time.Second), (per * time.Duration(left)).Round(time.Minute))
	}
	if err := rd.writeTable(c, recs); err != nil {
		logf("%v", err)
	}
	if now, err := os.ReadFile(srcFile); err != nil || string(now) != string(pristine) {
		logf("%s differs from its original after the run", srcFile)
		return 1
	}
	if ctx.Err() != nil {
		return 1
	}
	if len(o.expect) > 0 {
		bad := 0
		for i, id := range o.ids {
			got := recs[id].Status
			ok := got == o.expect[i]
			if !ok {
				bad++
			}
			logf("expect %s %s: got %s%s", id, o.expect[i], got, map[bool]string{true: "", false: "  MISMATCH"}[ok])
		}
		if bad > 0 {
			return 1
		}
	}
	return 0
}

// identicalObject is the decision of a mutant that compiles to the
// unmutated object file: DecidedBy and the base tier's status.
const identicalObject = "identical object"

// runMutant builds m in each tier's build dir and boots it until a tier
// kills it or every tier has run. A tier whose build compiles the mutant
// to the unmutated object (sha256 pristineObjs[tier], taken at the tier's
// baseline build) boots nothing: the compiler proved that the mutant
// changes nothing there (dead code, a value the optimiser already knew, a
// lock that is a no-op in that configuration). The mutant goes on to the
// next tier, whose configuration may differ; identical in every tier that
// ran, it is equivalent.
func runMutant(ctx context.Context, m cfunc.Mutant, pristine []byte, srcFile string, plans []tierPlan, g *guard, pristineObjs map[string]string,
	ensureBaseline func(tier int) (bool, error), buildLog io.Writer) (record, error) {
	t0 := time.Now()
	rec := record{ID: m.ID, File: m.File, Func: m.Func, Line: m.Line, Op: m.Op, Orig: m.Orig, Repl: m.Repl, Source: m.Source}
	mutated, err := m.Apply(pristine)
	if err != nil {
		return rec, err
	}
	rec.Status = statusSurvived
	sameObj := map[string]bool{} // by build dir: the mutant's object is the unmutated one's
	var identical []string       // the tiers that found so
	booted := false
	for i, t := range plans {
		tr := tierResult{Tier: t.name}
		if t.skip != "" {
			tr.Status, tr.Detail = "not run", t.skip
			rec.Tiers = append(rec.Tiers, tr)
			continue
		}
		// The tier's own unmutated boot comes before its first mutant.
		if tr.Baseline, err = ensureBaseline(i); err != nil {
			return rec, err
		}
		tr.ConfigSHA256 = fileSHA256(filepath.Join(t.tree.build, ".config"))
		if t.rebuild {
			b0 := time.Now()
			if err := g.Mutate(srcFile, mutated); err != nil {
				return rec, err
			}
			errs, err := t.tree.buildImage(ctx, buildLog)
			if rerr := g.Restore(); rerr != nil {
				return rec, rerr
			}
			tr.Build = time.Since(b0).Seconds()
			if err != nil {
				return rec, err
			}
			if len(errs) > 0 {
				rec.Status, rec.BuildErrors, rec.DecidedBy = statusBuildFail, errs, t.name
				tr.Status = statusBuildFail
				rec.Tiers = append(rec.Tiers, tr)
				break
			}
			if want := pristineObjs[t.name]; want != "" {
				sum, err := t.tree.objectSum(m.File)
				if err != nil {
					return rec, err
				}
				sameObj[t.tree.build] = sum == want
			}
		}
		if sameObj[t.tree.build] {
			// This tier's kernel would be its unmutated one: nothing to
			// boot here, but a tier built otherwise (debug's lockdep and
			// PROVE_RCU) may still compile the mutant differently.
			tr.Status = identicalObject
			rec.Tiers = append(rec.Tiers, tr)
			identical = append(identical, t.name)
			continue
		}
		r := bootTwice(func() bootResult { return boot(ctx, t.plan, t.tree.image(), buildLog) })
		if ctx.Err() != nil {
			return rec, ctx.Err()
		}
		tr.Status, tr.Failed, tr.Detail, tr.Boot = r.status, r.failed, r.detail, r.seconds
		if r.status != statusSurvived && r.status != statusKilled {
			tr.Console = r.tail
		}
		rec.Tiers = append(rec.Tiers, tr)
		booted = true
		if r.status != statusSurvived {
			rec.Status, rec.DecidedBy = r.status, t.name
			break
		}
	}
	if rec.Status == statusSurvived && !booted && len(identical) > 0 {
		rec.Status, rec.DecidedBy = statusEquivalent, identicalObject
		rec.Equivalence = fmt.Sprintf("the compiler makes the unmutated object: %s is byte for byte the unmutated source's in the build of every tier that ran (%s), each in its own configuration, so every kernel booted would be the unmutated one",
			objectName(m.File), strings.Join(identical, ", "))
	}
	rec.Seconds = time.Since(t0).Seconds()
	rec.Finished = time.Now().UTC()
	return rec, nil
}

// cmdArgue applies the equivalence arguments to a results directory's
// survivors without building or booting anything: whether an argument
// holds depends only on the mutant's source line, the build's
// configuration and the kernel version, all of which the records and
// campaign.json keep. A survivor an argument covers becomes equivalent;
// the table is rewritten.
func cmdArgue(args []string) int {
	fs := flag.NewFlagSet("mutate argue", flag.ContinueOnError)
	out := fs.String("out", "", "results `dir` of a campaign")
	dotConfig := fs.String("config", "", "the campaign build's .config `file`, for the arguments' unset: options")
	equivalent := fs.String("equivalent", "mutate/equivalent.txt", "the equivalence arguments, by mutant ID")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *out == "" || *dotConfig == "" {
		fmt.Fprintln(os.Stderr, "mutate argue: -out and -config are required")
		return 2
	}
	n, err := argue(resultsDir{dir: *out}, *equivalent, *dotConfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mutate argue: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "mutate argue: %s: %d survivors now equivalent\n", *out, n)
	return 0
}

// argue is cmdArgue's work; it returns how many records it changed.
func argue(rd resultsDir, equivalentPath, dotConfig string) (int, error) {
	c, ok, err := rd.readCampaign()
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, fmt.Errorf("%s: no campaign.json", rd.dir)
	}
	equiv, err := readEquivalences(equivalentPath)
	if err != nil {
		return 0, err
	}
	config, err := configSet(dotConfig)
	if err != nil {
		return 0, err
	}
	recs, err := rd.records()
	if err != nil {
		return 0, err
	}
	changed := 0
	for id, rec := range recs {
		applied, why := rec.argue(equiv, config, c.Kernel)
		if why != "" {
			fmt.Fprintf(os.Stderr, "mutate argue: %s: %s: not applied\n", id, why)
		}
		if !applied {
			continue
		}
		if err := rd.writeJSON(rd.recordPath(id), rec); err != nil {
			return changed, err
		}
		recs[id] = rec
		changed++
	}
	return changed, rd.writeTable(c, recs)
}

// baseliner boots each tier's unmutated build once, before the tier's
// first mutant: a tier whose unmutated kernel fails would kill every
// mutant, and one whose cases are silent longer than the tier's limit
// would call every mutant hung.
type baseliner struct {
	o       runOptions
	tl      tools
	logf    func(string, ...any)
	openLog func(string) (*os.File, error)
	done    map[string]bool
	// objs are the sha256 of the mutated file's unmutated object in each
	// rebuilt tier's build, by tier.
	objs map[string]string
	file string
}

// boot builds tier i's image from the unmutated source (a previous run
// leaves its last mutant's objects in every build dir) and boots it with
// generous limits; it must pass. The cases it ran become the tier's
// ranBefore.
func (b *baseliner) boot(ctx context.Context, plans []tierPlan, i int) (bootResult, error) {
	t := plans[i]
	log, err := b.openLog("baseline-" + t.name)
	if err != nil {
		return bootResult{}, err
	}
	defer log.Close()
	t0 := time.Now()
	if errs, err := t.tree.buildImage(ctx, log); err != nil || len(errs) > 0 {
		return bootResult{}, fmt.Errorf("%s: baseline build in %s failed: %v %v", t.name, t.tree.build, err, errs)
	}
	buildS := time.Since(t0).Seconds()
	if t.rebuild {
		if b.objs[t.name], err = t.tree.objectSum(b.file); err != nil {
			return bootResult{}, err
		}
	}
	calm := b.o
	calm.silence, calm.progTimeout = 10*time.Minute, 15*time.Minute
	calmPlan := tierPlans(calm, b.tl)[i].plan
	r := bootTwice(func() bootResult { return boot(ctx, calmPlan, t.tree.image(), log) })
	if ctx.Err() != nil {
		return r, ctx.Err()
	}
	b.logf("%s: baseline: unmutated %s built in %.0f s, booted in %.0f s (longest quiet stretch %v): %s %s",
		t.name, t.tree.build, buildS, r.seconds, r.maxGap.Round(time.Second), r.status, r.detail)
	if r.status != statusSurvived {
		return r, fmt.Errorf("%s: the unmutated tree does not pass: stopping", t.name)
	}
	if r.maxGap >= t.plan.silence {
		return r, fmt.Errorf("%s: the unmutated boot went %v without a TAP line, the tier's hang limit is %v: every mutant would be called hung (a quieter host, or -silence)",
			t.name, r.maxGap.Round(time.Second), t.plan.silence)
	}
	if t.name == "base" || t.name == "pattern" || t.name == "debug" {
		ran := map[string]bool{}
		for _, c := range r.ran {
			ran[c] = true
		}
		plans[i].plan.ranBefore = ran
	}
	b.done[t.name] = true
	return r, nil
}

// suitePaths are what a boot's verdict depends on: the whole tree but the
// records (a campaign commits its own there as it goes) and the prose.
var suitePaths = []string{":(top)", ":(top,exclude)evidence", ":(top,exclude)doc", ":(top,exclude,glob)**/*.md"}

// suiteCommit is the last commit that changed the suite's suitePaths,
// "-dirty" when such files differ from it: what the programs a campaign
// boots were built from.
func suiteCommit() string {
	out, err := exec.Command("git", append([]string{"log", "-1", "--format=%H", "--"}, suitePaths...)...).Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	st, err := exec.Command("git", append([]string{"status", "--porcelain", "--untracked-files=no", "--"}, suitePaths...)...).Output()
	if err == nil && len(strings.TrimSpace(string(st))) > 0 {
		c += "-dirty"
	}
	return c
}

// fileSHA256 is the hex sha256 of a file, "" when it cannot be read.
func fileSHA256(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

// caseDirs are the suite's directories whose changes change what a boot
// can kill: the programs' cases and the library they run on.
var caseDirs = []string{"semantics", "switchtest", "stress", "selftests"}

// lastCaseChange is the last commit that changed the cases.
func lastCaseChange() string {
	args := []string{"log", "-1", "--format=%H", "--"}
	for _, d := range caseDirs {
		args = append(args, ":(top)"+d)
	}
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
