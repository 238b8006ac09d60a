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
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/bench/internal/report"
	"nlmcast/bench/internal/sample"
	"nlmcast/ktap"
	"nlmcast/selftests/kmsg"
	"nlmcast/selftests/mcswitch"
	"nlmcast/selftests/netns"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

type flags struct {
	list, icount          bool
	scenes, sweep         string
	n, d                  int
	routes                int
	boot, rounds, samples int
	image, out, analyze   string
	seed                  uint64
	reps                  int
}

func parse(args []string, stderr io.Writer) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("netlink_mcast_bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&f.list, "list", false, "print the scenes with their parameters and exit")
	fs.StringVar(&f.scenes, "scene", "all", "comma-separated scene names (see -list)")
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
	fs.StringVar(&f.analyze, "analyze", "", "only re-run the analysis of results directory `DIR` and print its table")
	fs.Uint64Var(&f.seed, "seed", report.DefaultSeed, "bootstrap seed")
	fs.IntVar(&f.reps, "reps", report.DefaultReps, "bootstrap replicates")
	fs.IntVar(&receiveBuffer, "rcvbuf", receiveBuffer, "SO_RCVBUFFORCE of every recipient (a small one shows the overrun check failing)")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if f.rounds < 1 || f.samples < 1 || f.routes < 1 {
		return f, fmt.Errorf("-rounds, -samples and -routes must be at least 1")
	}
	return f, nil
}

func chosenScenes(f flags) ([]Scene, error) {
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
	for i := range list {
		list[i] = list[i].override(f.n, f.d)
	}
	return list, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	f, err := parse(args, stderr)
	if err == flag.ErrHelp {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "netlink_mcast_bench:", err)
		return 2
	}
	if f.analyze != "" {
		table, err := report.WriteDir(f.analyze, nil, report.Options{Seed: f.seed, Reps: f.reps})
		if err != nil {
			fmt.Fprintln(stderr, "netlink_mcast_bench:", err)
			return 1
		}
		io.WriteString(stdout, table)
		return 0
	}
	list, err := chosenScenes(f)
	if err != nil {
		fmt.Fprintln(stderr, "netlink_mcast_bench:", err)
		return 2
	}
	if f.list {
		printList(stdout, list, f)
		return 0
	}
	return bench(f, list, stdout)
}

func printList(w io.Writer, list []Scene, f flags) {
	fmt.Fprintf(w, "%-18s %5s %2s  %s\n", "scene", "n", "d", "layout (each batch: "+fmt.Sprint(f.routes)+" route replaces, nexthops alternating)")
	for _, s := range list {
		fmt.Fprintf(w, "%-18s %5d %2d  %s\n", s.Label(), s.N, s.D, s.Desc)
	}
}

func kernelName() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Version[:])
}

// kernelReporter is what bench needs of a kmsg.Watcher; tests supply
// their own.
type kernelReporter interface {
	Poll() []kmsg.Report
	Close() error
}

// openKernelLog starts watching the kernel log. Tests replace it.
var openKernelLog = func() (kernelReporter, error) { return kmsg.Open() }

func bench(f flags, list []Scene, stdout io.Writer) int {
	w := ktap.New(stdout)
	if err := privileged(); err != "" {
		return w.SkipAll(err)
	}
	raiseFileLimit()
	sw, restore, skip, err := mcswitch.Hold(func(format string, args ...any) { w.Diag(format, args...) })
	if err != nil {
		w.Plan(len(list))
		w.Diag("netlink_route_mc_index: %v", err)
		return ktap.ExitFail
	}
	var once sync.Once
	restoreOnce := func() {
		if restore != nil {
			once.Do(restore)
		}
	}
	defer restoreOnce()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		sig := <-sigs
		w.Diag("%v: restoring the switch and exiting", sig)
		restoreOnce()
		os.Exit(ktap.ExitFail)
	}()

	d := design{boot: f.boot, rounds: f.rounds, samples: f.samples, routes: f.routes,
		kernel: kernelName(), image: f.image, icount: f.icount}
	w.Plan(len(list))
	states := "U (no net.core.netlink_route_mc_index: " + skip + ")"
	if sw != nil {
		states = "P0 and P1, alternating round by round"
	}
	w.Diag("kernel %s; states %s; boot %d, %d rounds per state x %d samples + 1 warm-up; %d routes per batch",
		d.kernel, states, d.boot, d.rounds, d.samples, d.routes)

	// A measurement taken while the kernel complained is no measurement:
	// a report during a scene fails it, as in the suites.
	kernelLog, err := openKernelLog()
	if err != nil {
		w.Diag("kernel log not watched: %v", err)
	} else {
		defer kernelLog.Close()
	}
	senders := []*sender{newSender(), newSender()}
	defer senders[0].stop()
	defer senders[1].stop()
	var all []sample.Sample
	for _, sc := range list {
		start := time.Now()
		name := "netlink_mcast_bench." + sc.Label() // <prog>.<case>, as the suites and ksft.py name results
		got, err := runScene(w, d, sw, senders, sc)
		if kernelLog != nil {
			if reps := kmsg.Sift(kernelLog.Poll(), w.Diag); len(reps) > 0 {
				for _, r := range reps {
					w.Diag("%s: kernel report during the scene: %s", sc.Label(), r)
					for _, l := range r.Lines {
						w.Diag("  | %s", l)
					}
				}
				w.Result(name, ktap.Fail, "kernel report during the scene: "+reps[0].Kind, time.Since(start))
				continue
			}
		}
		all = append(all, got...)
		if reason, ok := isSkip(err); ok {
			w.Result(name, ktap.Skip, reason, time.Since(start))
			continue
		}
		if err != nil {
			w.Diag("%s: %v", sc.Label(), err)
			w.Result(name, ktap.Fail, "", time.Since(start))
			continue
		}
		w.Result(name, ktap.Pass, "", time.Since(start))
	}
	restoreOnce()
	if f.out != "" {
		table, err := report.WriteDir(f.out, all, report.Options{Seed: f.seed, Reps: f.reps})
		if err != nil {
			w.Diag("results directory %s: %v", f.out, err)
			return ktap.ExitFail
		}
		w.Diag("results in %s", filepath.Clean(f.out))
		w.Diag("%s", strings.TrimRight(table, "\n"))
	}
	return w.Finish()
}

// privileged returns the SKIP reason when the program cannot create
// namespaces or force receive buffers.
func privileged() string {
	ns, err := netns.New("probe")
	if err != nil {
		return "needs CAP_SYS_ADMIN and CAP_NET_ADMIN (root): " + err.Error()
	}
	ns.Close()
	return ""
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
