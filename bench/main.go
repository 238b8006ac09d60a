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
// results directory, and -analyze DIR re-runs the analysis of one.
//
// Exit status: 0 success, 1 a validation failure, 4 nothing could run.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
}

// register adds the program's own flags.
func (f *flags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.scenes, "scene", "all", "the scenes (cases) to run: all (the letter's twelve), related (the related series' scenes), or scene names of either, comma-separated; -t picks among them")
	fs.IntVar(&f.n, "n", -1, "override every chosen scene's N (foreign subscribers; C2: local candidates)")
	fs.IntVar(&f.d, "d", -1, "override every chosen scene's D (foreign sockets per namespace, 0: one namespace)")
	fs.IntVar(&f.routes, "routes", 2640, "routes replaced per batch")
	fs.StringVar(&f.sweep, "sweep", "", "instead of the scenes, sweep the foreign subscribers: n=0,100,300,900,2700")
	fs.IntVar(&f.boot, "boot", 0, "number of this boot in the design (set by the orchestrator); rotates the P0/P1 order")
	fs.IntVar(&f.rounds, "rounds", 3, "rounds per state in this boot")
	fs.IntVar(&f.samples, "samples", 4, "samples per round, after one warm-up")
	fs.StringVar(&f.image, "image", "", "name of the kernel image, recorded with each sample")
	fs.BoolVar(&f.icount, "icount", false, "the guest runs under QEMU -icount shift=0: record that times are instructions")
	fs.StringVar(&f.out, "out", "", "also write a results directory here (samples.jsonl, table, SVG, benchfmt)")
	fs.StringVar(&f.analyze, "analyze", "", "only re-run the analysis of results directory `DIR` and print its table (no TAP)")
	fs.Uint64Var(&f.seed, "seed", report.DefaultSeed, "bootstrap seed")
	fs.IntVar(&f.reps, "reps", report.DefaultReps, "bootstrap replicates")
	fs.IntVar(&receiveBuffer, "rcvbuf", receiveBuffer, "SO_RCVBUFFORCE of every recipient (a small one shows the overrun check failing)")
}

// check validates the flags.
func (f *flags) check() error {
	if f.rounds < 1 || f.samples < 1 || f.routes < 1 {
		return fmt.Errorf("-rounds, -samples and -routes must be at least 1")
	}
	return nil
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
		sc := list[i].override(f.n, f.d)
		cases[i] = selftests.Case{
			Name:    sc.Label(),
			About:   fmt.Sprintf("n %d, d %d: %s", sc.N, sc.D, sc.Desc),
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

// analyzeOnly is -analyze DIR: the analysis of a results directory, printed
// without TAP.
func analyzeOnly(stdout io.Writer) (int, bool) {
	if f.analyze == "" {
		return 0, false
	}
	table, err := report.WriteDir(f.analyze, nil, report.Options{Seed: f.seed, Reps: f.reps})
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

// run is the state of the measurement: the design, the sender threads and
// every sample taken.
var run struct {
	d       design
	senders []*sender
	mu      sync.Mutex
	all     []sample.Sample
}

// setUp starts the two sender threads, says what the design is, and
// returns the teardown that stops them and writes the results directory.
func setUp(log func(format string, args ...any)) (func() error, error) {
	raiseFileLimit()
	sw, skip := selftests.HeldSwitch()
	run.d = design{boot: f.boot, rounds: f.rounds, samples: f.samples, routes: f.routes,
		kernel: kernelName(), image: f.image, icount: f.icount}
	states := "U (no net.core.netlink_route_mc_index: " + skip + ")"
	if sw != nil {
		states = "P0 and P1, alternating round by round"
	}
	log("kernel %s; states %s; boot %d, %d rounds per state x %d samples + 1 warm-up; %d routes per batch",
		run.d.kernel, states, run.d.boot, run.d.rounds, run.d.samples, run.d.routes)
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
		table, err := report.WriteDir(f.out, run.all, report.Options{Seed: f.seed, Reps: f.reps})
		if err != nil {
			return fmt.Errorf("results directory %s: %w", f.out, err)
		}
		log("results in %s", filepath.Clean(f.out))
		log("%s", strings.TrimRight(table, "\n"))
		return nil
	}, nil
}

// runSceneCase measures one scene: every sample is a record of its own,
// and kept for the results directory.
func runSceneCase(t selftests.T, sc Scene) {
	sw, _ := selftests.HeldSwitch()
	emit := func(s sample.Sample) {
		selftests.Record(t, "%s", sample.Line(s))
		run.mu.Lock()
		run.all = append(run.all, s)
		run.mu.Unlock()
	}
	err := runScene(emit, run.d, sw, run.senders, sc)
	if reason, ok := isSkip(err); ok {
		t.Skipf("%s", reason)
	}
	if err != nil {
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

// raiseFileLimit lifts the soft RLIMIT_NOFILE to the hard one: the larger
// scenes hold a few thousand sockets.
func raiseFileLimit() {
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) == nil && rl.Cur < rl.Max {
		rl.Cur = rl.Max
		_ = unix.Setrlimit(unix.RLIMIT_NOFILE, &rl)
	}
}
