// SPDX-License-Identifier: GPL-2.0

// Command netlink_mcast_bench measures what a NETLINK_ROUTE multicast
// notification costs with subscribers in unrelated namespaces: the table of
// the cover letter "netlink: optional per-netns ROUTE multicast index"
// (12 scenes), on the running kernel, in the states that kernel has: U
// without net.core.netlink_route_mc_index, P0 and P1 (switch 0 and 1,
// alternating round by round) with it.
//
// A work unit replaces every route of a source namespace through existing
// nexthop objects (RTM_NEWROUTE, NLM_F_REPLACE, RTA_NH_ID alternating
// between two nexthops), checks every ACK, then drains and validates every
// recipient. Each sample is printed as a TAP diagnostic line
// "# sample: {json}", one TAP result per scene; -out DIR also writes the
// results directory (the samples of a scene that did not pass are kept
// there, marked, and left out of the table), and -analyze DIR prints the
// analysis of one without changing it.
//
// Exit status, as every kselftest: 0 success (some scenes may have
// skipped), 1 a failure or a usage error, 4 nothing could run.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"nlmcast/bench/internal/report"
	"nlmcast/bench/internal/sample"
	"nlmcast/ktap"
	"nlmcast/selftests"
)

const program = "netlink_mcast_bench"

func main() { os.Exit(selftests.Main(suite)) }

// f is the command line, filled in by the program's flags.
var f flags

var suite = selftests.Suite{
	Name: program,
	About: "Measures what a NETLINK_ROUTE multicast notification costs with subscribers in unrelated namespaces:\n" +
		"the cover letter's table, in the states the running kernel has (U; or P0 and P1, alternating round by round).",
	Flags:     f.register,
	Check:     f.check,
	Aliases:   []selftests.Alias{{Name: "list", For: "l"}},
	Switch:    true,
	Needs:     needs,
	Setup:     setUp,
	MakeCases: sceneCases,
	Instead:   analyzeOnly,
	AfterCase: judged,
	// Every scene's Timeout (sceneCases).
	CaseDeadlines: "1h0m0s a scene",
}

type flags struct {
	icount                bool
	scenes, sweep         string
	n, d                  int
	routes                int
	boot, rounds, samples int
	image, out, analyze   string
	seed                  uint64
	reps                  int
	injectStray           bool
}

// maxRoutes is how many routes a source namespace can hold: route i is
// 10.(i/256).(i%256).0/24 (routePrefix).
const maxRoutes = 1 << 16

// minReps is the fewest bootstrap replicates the bench accepts: an
// interval's ends are the 2.5 % and 97.5 % quantiles, which rest on the 25
// replicates beyond each; with fewer the ends are mostly the resampling's
// own noise (and with one, the "interval" is a single replicate that need
// not contain the point estimate).
const minReps = 1000

// register adds the program's own flags.
func (f *flags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.scenes, "scene", "", "the scenes (cases) to run: all (the letter's twelve, the default), related (the related series' scenes), memory (kernel memory per socket and per namespace), or scene names of any, comma-separated (a scene named twice runs once); -t picks among them")
	fs.IntVar(&f.n, "n", -1, "override every chosen scene's N (foreign subscribers; C2: local candidates); -1: the scene's own")
	fs.IntVar(&f.d, "d", -1, "override every chosen scene's D (foreign sockets per namespace, 0: one namespace); -1: the scene's own")
	fs.IntVar(&f.routes, "routes", defaultRoutes, fmt.Sprintf("routes replaced per batch (at most %d: route i is 10.(i/256).(i%%256).0/24); another than the letter's names the scenes SCENE[routes=N]", maxRoutes))
	fs.StringVar(&f.sweep, "sweep", "", "instead of the scenes (not with -scene), sweep the foreign subscribers: n=0,100,300,900,2700")
	fs.IntVar(&f.boot, "boot", 0, "number of this boot in the design (set by the orchestrator); rotates the P0/P1 order")
	fs.IntVar(&f.rounds, "rounds", 3, "rounds per state in this boot")
	fs.IntVar(&f.samples, "samples", 4, "samples per round, after one warm-up")
	fs.StringVar(&f.image, "image", "", "name of the kernel image, recorded with each sample")
	fs.BoolVar(&f.icount, "icount", false, "the guest runs under QEMU -icount shift=0: record that times are instructions")
	fs.StringVar(&f.out, "out", "", "also write a results directory `DIR` (samples.jsonl, table, SVG, benchfmt); a new one: checked writable before anything is measured, and one that holds an earlier run's results is refused")
	fs.StringVar(&f.analyze, "analyze", "", "only print the analysis of results directory `DIR` (no TAP), changing nothing in it; with -out, also write a new results directory from its samples")
	fs.Uint64Var(&f.seed, "seed", report.DefaultSeed, "bootstrap seed")
	fs.IntVar(&f.reps, "reps", report.DefaultReps, fmt.Sprintf("bootstrap replicates (at least %d)", minReps))
	fs.IntVar(&receiveBuffer, "rcvbuf", defaultReceiveBuffer, "SO_RCVBUFFORCE of every recipient (a small one shows the overrun check failing)")
	fs.BoolVar(&f.injectStray, "inject-stray", false, "SELF-TEST of the silence check: after each scene's first round, send one datagram to a socket that must receive nothing; the scene must fail, and its samples be marked and left out of the table")
}

// check validates the flags, and the results directory before anything
// is measured.
func (f *flags) check() error {
	switch {
	case f.rounds < 1 || f.samples < 1:
		return fmt.Errorf("-rounds %d -samples %d: each must be at least 1", f.rounds, f.samples)
	case f.routes < 1 || f.routes > maxRoutes:
		return fmt.Errorf("-routes %d: want 1 to %d (route i is 10.(i/256).(i%%256).0/24)", f.routes, maxRoutes)
	case f.n < -1 || f.d < -1:
		return fmt.Errorf("-n %d -d %d: want a count, or -1 for the scene's own", f.n, f.d)
	case f.reps < minReps:
		return fmt.Errorf("-reps %d: want at least %d (the interval's ends are its 2.5 %% and 97.5 %% quantiles)", f.reps, minReps)
	case f.boot < 0:
		return fmt.Errorf("-boot %d: want a boot number, 0 or more", f.boot)
	case receiveBuffer < 1:
		return fmt.Errorf("-rcvbuf %d: want a size in bytes", receiveBuffer)
	case f.sweep != "" && f.scenes != "":
		return fmt.Errorf("-sweep and -scene: the sweep makes its own scenes; give one of them")
	}
	if f.out == "" {
		return nil
	}
	if f.analyze != "" && filepath.Clean(f.analyze) == filepath.Clean(f.out) {
		return fmt.Errorf("-analyze %s -out %s: -analyze never writes into the directory it reads", f.analyze, f.out)
	}
	return report.CheckNew(f.out)
}

// sceneCases makes one case per chosen scene (the table, or -sweep's),
// with -n and -d applied.
func sceneCases() ([]selftests.Case, error) {
	var list []Scene
	var err error
	if f.sweep != "" {
		list, err = sweepScenes(f.sweep)
	} else {
		list, err = findScenes(f.scenes)
	}
	if err != nil {
		return nil, err
	}
	cases := make([]selftests.Case, len(list))
	for i := range list {
		sc := list[i].override(f.n, f.d).withRoutes(f.routes)
		about := fmt.Sprintf("n %d, d %d: %s", sc.N, sc.D, sc.Desc)
		if sc.Kind == parallelBatch {
			about += "; SKIPs with fewer than 2 CPUs, where its senders would take turns"
		}
		cases[i] = selftests.Case{
			Name:    sc.Label(),
			About:   about,
			Timeout: sceneDeadline,
			Settle:  true,
			Run:     func(t selftests.T) { runSceneCase(t, sc) },
		}
	}
	return cases, nil
}

// sceneDeadline bounds one scene: the largest (E1, 1800 sockets) at the
// letter's design (3 rounds per state, 4 samples) on the KASAN+lockdep
// kernel under TCG.
const sceneDeadline = 60 * 60e9

// analyzeOnly is -analyze DIR: the analysis of a results directory,
// printed without TAP; DIR is only read. With -out NEW it also writes
// NEW's results directory from DIR's samples.
func analyzeOnly(stdout io.Writer) (int, bool) {
	if f.analyze == "" {
		return 0, false
	}
	opts := report.Options{Seed: f.seed, Reps: f.reps}
	table, err := reanalyzeResults(f.analyze, opts)
	if err == nil && f.out != "" {
		err = copyResults(f.analyze, f.out, opts)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", program, err)
		return ktap.ExitFail, true
	}
	if _, err := io.WriteString(stdout, table); err != nil {
		fmt.Fprintf(os.Stderr, "%s: writing the table to stdout: %v\n", program, err)
		return ktap.ExitFail, true
	}
	return ktap.ExitPass, true
}

// run is the state of the measurement: the design, the sender threads,
// every sample taken and each scene's verdict.
var run struct {
	d       design
	senders []*sender
	mu      sync.Mutex
	all     []sample.Sample
	// failure is the check that failed a scene, by scene: its result
	// line gives no reason for it, the sample marks do.
	failure map[string]string
	// verdicts is each scene's final result ("" passed, else why not),
	// from the frame (judged).
	verdicts map[string]string
}

// setUp starts the two sender threads, says what the design is, and
// returns the teardown that stops them and writes the results directory.
func setUp(log func(format string, args ...any)) (func() error, error) {
	raiseFileLimit()
	sw, skip := selftests.HeldSwitch()
	run.d = design{boot: f.boot, rounds: f.rounds, samples: f.samples, routes: f.routes,
		kernel: kernelName(), image: f.image, icount: f.icount, cpus: usableCPUs(), injectStray: f.injectStray}
	run.all, run.failure, run.verdicts = nil, map[string]string{}, map[string]string{}
	states := "U (no net.core.netlink_route_mc_index: " + skip + ")"
	if sw != nil {
		states = "P0 and P1, alternating round by round"
	}
	log("kernel %s; states %s; boot %d, %d rounds per state x %d samples + 1 warm-up; %d routes per batch; %d CPU(s)",
		run.d.kernel, states, run.d.boot, run.d.rounds, run.d.samples, run.d.routes, run.d.cpus)
	run.senders = []*sender{newSender(), newSender()}
	return func() error {
		for _, s := range run.senders {
			s.stop()
		}
		if f.out == "" {
			return nil
		}
		run.mu.Lock()
		defer run.mu.Unlock()
		table, err := writeResults(f.out, markSamples(run.all, run.verdicts), run.verdicts, report.Options{Seed: f.seed, Reps: f.reps})
		if err != nil {
			return fmt.Errorf("results directory %s: %w", f.out, err)
		}
		log("results in %s", filepath.Clean(f.out))
		log("%s", strings.TrimRight(table, "\n"))
		return nil
	}, nil
}

// judged records a scene's final result (Suite.AfterCase): its own checks
// and the kernel's health during it.
func judged(name string, res ktap.Result, reason string) {
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.verdicts == nil { // the switch could not be held: setUp never ran
		run.verdicts = map[string]string{}
	}
	switch res {
	case ktap.Pass:
		run.verdicts[name] = ""
	case ktap.Skip:
		run.verdicts[name] = sample.NotPassed("SKIP", reason)
	case ktap.XFail:
		run.verdicts[name] = sample.NotPassed("XFAIL", reason)
	default:
		if reason == "" {
			reason = run.failure[name]
		}
		run.verdicts[name] = sample.NotPassed("not ok", reason)
	}
}

// markSamples returns all, each sample of a scene that did not pass (or
// has no verdict: still running at the end) marked with why.
func markSamples(all []sample.Sample, verdicts map[string]string) []sample.Sample {
	out := make([]sample.Sample, len(all))
	for i, s := range all {
		why, ok := verdicts[s.Scene]
		if !ok {
			why = sample.NoResult
		}
		s.Failed = why
		out[i] = s
	}
	return out
}

// runSceneCase measures one scene: every sample is a record of its own,
// and kept for the results directory.
func runSceneCase(t selftests.T, sc Scene) {
	if sc.Kind == memSockets || sc.Kind == memNetns {
		runMemoryCase(t, sc)
		return
	}
	sw, _ := selftests.HeldSwitch()
	emit := func(s sample.Sample) {
		selftests.Record(t, "%s", sample.Line(s))
		run.mu.Lock()
		run.all = append(run.all, s)
		run.mu.Unlock()
	}
	err := runScene(emit, t.Logf, selftests.Done(t), run.d, sw, run.senders, sc)
	if reason, ok := isSkip(err); ok {
		t.Skipf("%s", reason)
	}
	if err != nil {
		run.mu.Lock()
		run.failure[sc.Label()] = err.Error()
		run.mu.Unlock()
		t.Fatalf("%v", err)
	}
}

// needs says why the bench cannot run here: its recipients force their
// receive buffers (SO_RCVBUFFORCE), which needs CAP_NET_ADMIN over the
// initial user namespace.
func needs() string {
	if !selftests.InInitialUserNS() {
		return "needs CAP_NET_ADMIN in the initial user namespace (SO_RCVBUFFORCE); this process is root of a child user namespace only"
	}
	return ""
}

func kernelName() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Version[:])
}

// usableCPUs is how many CPUs the program may run on (its affinity mask).
func usableCPUs() int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return runtime.NumCPU()
	}
	return set.Count()
}

// raiseFileLimit lifts the soft RLIMIT_NOFILE to the hard one: the larger
// scenes hold a few thousand sockets.
func raiseFileLimit() {
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) == nil && rl.Cur < rl.Max {
		rl.Cur = rl.Max
		_ = unix.Setrlimit(unix.RLIMIT_NOFILE, &rl)
	}
}
