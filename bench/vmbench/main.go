// SPDX-License-Identifier: GPL-2.0

// Command vmbench runs netlink_mcast_bench's full design in QEMU: for each
// boot pair it boots the unpatched image (state U) and the patched one
// (P0 and P1 alternating round by round, the switch live) with vmtest,
// the order of the two rotated from one pair to the next, collects every
// sample from the guest's TAP ("# sample: {json}" diagnostics) and writes
// the results directory: the samples (those of a scene that did not pass
// in a boot marked with why, and left out of the table), the table, the
// SVG, the benchfmt files, and each boot's TAP (bootN-U.tap, bootN-P.tap:
// the record of which scenes passed).
//
// Usage (from the module root; `make bench` does this):
//
//	go run ./bench/vmbench -kernel-u U.bzImage -kernel-p P.bzImage [-boots 3]
//	    [-rounds 3] [-samples 4] [-icount] [-args '-scene T1-n900-d0'] -out DIR
//
// The images are x86 bzImages or arm64 Images, both of one architecture:
// the bench is built for theirs (vmtest chooses QEMU and the machine).
//
// -icount passes vmtest's -icount: QEMU counts guest time in instructions
// (-icount shift=0,sleep=off), so the figures do not depend on host load.
//
// A sample line that holds no sample (the guest killed in the middle of
// it) is left out alone, counted and named, and fails the run; every other
// sample of the boot is kept.
//
// Exit status: 0 every scene passed (or skipped) in every boot, 1
// otherwise, a usage error included.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"nlmcast/bench/internal/kmem"
	"nlmcast/bench/internal/report"
	"nlmcast/bench/internal/sample"
	"nlmcast/vmtest/kimage"
)

func main() { os.Exit(run(os.Args[1:])) }

type options struct {
	kernelU, kernelP       string
	boots, rounds, samples int
	icount                 bool
	args, out, appendArgs  string
	timeout                time.Duration
	smp, mem, jobs         int
	firstBoot              int
}

func run(argv []string) int {
	var o options
	fs := flag.NewFlagSet("vmbench", flag.ContinueOnError)
	fs.StringVar(&o.kernelU, "kernel-u", "", "unpatched image (state U): an x86 bzImage or an arm64 Image; empty: no U boots")
	fs.StringVar(&o.kernelP, "kernel-p", "", "patched image (states P0, P1), of the same architecture; empty: no P boots")
	fs.IntVar(&o.boots, "boots", 3, "boot pairs")
	fs.IntVar(&o.firstBoot, "first-boot", 0, "number of the first boot pair, to add pairs to an earlier run (merge the samples.jsonl files, then -analyze)")
	fs.IntVar(&o.rounds, "rounds", 3, "rounds per state and boot")
	fs.IntVar(&o.samples, "samples", 4, "samples per round (after a warm-up)")
	fs.BoolVar(&o.icount, "icount", false, "deterministic mode: vmtest -icount, QEMU -icount shift=0,sleep=off (figures are instructions)")
	fs.StringVar(&o.args, "args", "", "more netlink_mcast_bench arguments, e.g. '-scene T1-n900-d0 -routes 660'")
	fs.StringVar(&o.appendArgs, "append", "", "more kernel command line for every boot, e.g. slub_debug=F for exact slab counts in the memory scenes")
	fs.StringVar(&o.out, "out", "", "results directory (required)")
	fs.DurationVar(&o.timeout, "timeout", 90*time.Minute, "limit for one boot")
	fs.IntVar(&o.smp, "smp", 0, "guest CPUs (default 2; 1 with -icount, where x86 6.1 with 2 CPUs never reaches /init, and so that arm64 and x86 tables compare)")
	fs.IntVar(&o.jobs, "jobs", 1, "boots run at once: only sensible with -icount, whose figures do not depend on host load")
	fs.IntVar(&o.mem, "mem", 1024, "guest memory in MiB")
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(argv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 1
	}
	if o.smp == 0 {
		o.smp = 2
		if o.icount {
			o.smp = 1
		}
	}
	o.jobs = max(o.jobs, 1)
	if o.out == "" || (o.kernelU == "" && o.kernelP == "") || o.boots < 1 || o.rounds < 1 || o.samples < 1 || o.firstBoot < 0 || o.smp < 1 || o.mem < 1 {
		fmt.Fprintln(os.Stderr, "vmbench: need -out and at least one of -kernel-u, -kernel-p; -boots, -rounds, -samples, -smp and -mem at least 1, -first-boot at least 0")
		fs.Usage()
		return 1
	}
	// Before the first boot: a directory that cannot take the results,
	// or holds an earlier run's, is found now, not hours later.
	if err := report.CheckNew(o.out); err != nil {
		fmt.Fprintln(os.Stderr, "vmbench:", err)
		return 1
	}
	status, err := orchestrate(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vmbench:", err)
		return 1
	}
	return status
}

// guestArch is the architecture of the images, which must agree: the one
// bench binary runs on both.
func guestArch(o options) (kimage.Arch, error) {
	var arch kimage.Arch
	var first string
	for _, k := range []string{o.kernelU, o.kernelP} {
		if k == "" {
			continue
		}
		a, err := kimage.Detect(k)
		if err != nil {
			return arch, err
		}
		if first != "" && a != arch {
			return arch, fmt.Errorf("%s is %s but %s is %s: a boot pair needs two images of one architecture", first, arch.Name, k, a.Name)
		}
		arch, first = a, k
	}
	return arch, nil
}

// tools builds the guest program (for the images' architecture) and
// vmtest (for the host) into dir.
func tools(dir string, arch kimage.Arch) (bench, vmtest string, err error) {
	bench = filepath.Join(dir, "netlink_mcast_bench")
	vmtest = filepath.Join(dir, "vmtest")
	for _, b := range []struct {
		out, pkg string
		env      []string
	}{
		{bench, "./bench", []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=" + arch.GOARCH}},
		{vmtest, "./vmtest", nil},
	} {
		cmd := exec.Command("go", "build", "-trimpath", "-o", b.out, b.pkg)
		cmd.Env = append(os.Environ(), b.env...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return "", "", fmt.Errorf("go build %s: %w", b.pkg, err)
		}
	}
	return bench, vmtest, nil
}

// boot is one VM run: an image and the states it measures.
type boot struct {
	index  int
	kernel string
	kind   string // "U" or "P"
}

// plan is the boots in order: pair i boots U then P for even i, P then U
// for odd i, so neither image always runs on a cold or a warm host.
func plan(o options) []boot {
	var out []boot
	for i := o.firstBoot; i < o.firstBoot+o.boots; i++ {
		pair := []boot{{i, o.kernelU, "U"}, {i, o.kernelP, "P"}}
		if i%2 == 1 {
			pair[0], pair[1] = pair[1], pair[0]
		}
		for _, b := range pair {
			if b.kernel != "" {
				out = append(out, b)
			}
		}
	}
	return out
}

func orchestrate(o options) (int, error) {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return 1, err
	}
	work, err := os.MkdirTemp("/tmp", "nlmc-vmbench-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(work)
	arch, err := guestArch(o)
	if err != nil {
		return 1, err
	}
	bench, vmtest, err := tools(work, arch)
	if err != nil {
		return 1, err
	}
	boots := plan(o)
	type outcome struct {
		samples []sample.Sample
		memory  []kmem.Record
		ok      bool
		err     error
	}
	results := make([]outcome, len(boots))
	slots := make(chan struct{}, o.jobs)
	var wg sync.WaitGroup
	for i, b := range boots {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			got, mem, ok, err := runBoot(o, b, bench, vmtest, "")
			if err == nil && !ok && len(got)+len(mem) == 0 {
				// The guest never ran the bench (under heavy host load
				// a TCG guest has failed to open its TAP port): one
				// more boot, kept apart in its own log.
				fmt.Fprintf(os.Stderr, "vmbench: boot %d %s produced no sample: booting it again\n", b.index, b.kind)
				got, mem, ok, err = runBoot(o, b, bench, vmtest, "-retry")
			}
			results[i] = outcome{got, mem, ok, err}
		}()
	}
	wg.Wait()
	// Samples in plan order whatever finished first, so the results
	// directory does not depend on timing.
	status := 0
	var all []sample.Sample
	var memory []kmem.Record
	for _, r := range results {
		if r.err != nil {
			return 1, r.err
		}
		if !r.ok {
			status = 1
		}
		all = append(all, r.samples...)
		memory = append(memory, r.memory...)
	}
	if len(all) > 0 || len(memory) == 0 {
		table, err := report.WriteDir(o.out, all, report.Options{Seed: report.DefaultSeed, Reps: report.DefaultReps})
		if err != nil {
			return 1, err
		}
		fmt.Print(table)
	}
	if len(memory) > 0 {
		table, err := kmem.WriteDir(o.out, memory)
		if err != nil {
			return 1, err
		}
		fmt.Print(table)
	}
	fmt.Printf("results in %s\n", o.out)
	if len(all)+len(memory) == 0 {
		return 1, errors.New("no samples came back")
	}
	return status, nil
}

// runBoot boots b.kernel with the bench, keeps the TAP in the results
// directory and returns the samples and the memory scenes' records; ok is
// false when a scene failed or the boot went wrong.
func runBoot(o options, b boot, bench, vmtest, logSuffix string) ([]sample.Sample, []kmem.Record, bool, error) {
	image := filepath.Base(b.kernel)
	benchArgs := fmt.Sprintf("-boot %d -rounds %d -samples %d -image %s", b.index, o.rounds, o.samples, image)
	if o.icount {
		benchArgs += " -icount"
	}
	benchArgs += " " + o.args
	args := []string{"-kernel", b.kernel, "-timeout", o.timeout.String(),
		"-smp", fmt.Sprint(o.smp), "-mem", fmt.Sprint(o.mem),
		"-append", strings.TrimSpace(fmt.Sprintf("nlmc.timeout=%d %s", int(o.timeout.Seconds())-30, o.appendArgs)),
		"-args", benchArgs}
	if o.icount {
		args = append(args, "-icount")
	}
	cmd := exec.Command(vmtest, append(args, bench)...)
	logPath := filepath.Join(o.out, fmt.Sprintf("boot%d-%s%s.tap", b.index, b.kind, logSuffix))
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, nil, false, err
	}
	defer logFile.Close()
	var tap bytes.Buffer
	cmd.Stdout = io.MultiWriter(&tap, logFile)
	cmd.Stderr = io.MultiWriter(os.Stderr, logFile)
	fmt.Fprintf(os.Stderr, "vmbench: boot %d %s: %s\n", b.index, image, strings.Join(cmd.Args, " "))
	start := time.Now()
	runErr := cmd.Run()
	fmt.Fprintf(os.Stderr, "vmbench: boot %d %s: done in %v (%v)\n", b.index, image, time.Since(start).Round(time.Second), runErr)
	samples, ok, err := collect(bytes.NewReader(tap.Bytes()), b, os.Stderr)
	if err != nil {
		return nil, nil, false, err
	}
	memory, err := collectMemory(bytes.NewReader(tap.Bytes()), b)
	return samples, memory, ok && runErr == nil, err
}

// collectMemory reads one boot's memory records, each marked with its
// scene's result in that boot as the samples are.
func collectMemory(tap io.Reader, b boot) ([]kmem.Record, error) {
	data, err := io.ReadAll(tap)
	if err != nil {
		return nil, err
	}
	records, err := kmem.ReadTAP(bytes.NewReader(data))
	if err != nil || len(records) == 0 {
		return nil, err
	}
	t, err := sample.ReadTAP(bytes.NewReader(data), benchProgram)
	if err != nil {
		return nil, err
	}
	for _, r := range records {
		if b.kind == "U" && r.State != "U" || b.kind == "P" && r.State == "U" {
			return nil, fmt.Errorf("%s (-kernel-%s) measured state %s: is it the right image?",
				b.kernel, strings.ToLower(b.kind), r.State)
		}
	}
	return kmem.Mark(records, t.Results), nil
}

// bench is the guest program: its TAP names each result bench.SCENE.
const benchProgram = "netlink_mcast_bench"

// collect reads one boot's TAP: its samples, each marked with its scene's
// result in that boot (sample.TAP.Marked); ok is false when a scene did not
// pass or a sample line was malformed (left out alone, and said on log).
func collect(tap io.Reader, b boot, log io.Writer) ([]sample.Sample, bool, error) {
	image := filepath.Base(b.kernel)
	t, err := sample.ReadTAP(tap, benchProgram)
	if err != nil {
		return nil, false, err
	}
	for _, s := range t.Samples {
		if b.kind == "U" && s.State != "U" || b.kind == "P" && s.State == "U" {
			return nil, false, fmt.Errorf("%s (-kernel-%s) measured state %s: is it the right image?",
				b.kernel, strings.ToLower(b.kind), s.State)
		}
	}
	ok := len(t.Malformed) == 0
	if !ok {
		fmt.Fprintf(log, "vmbench: boot %d %s: %d malformed sample line(s) left out (the other %d samples kept); the first: %q\n",
			b.index, image, len(t.Malformed), len(t.Samples), t.Malformed[0])
	}
	marked := t.Marked()
	failed := map[string]string{}
	for _, s := range marked {
		if s.Failed != "" && !strings.HasPrefix(s.Failed, "SKIP") {
			failed[s.Scene] = s.Failed
		}
	}
	for scene, why := range t.Results {
		if why != "" && !strings.HasPrefix(why, "SKIP") {
			failed[scene] = why
		}
	}
	for _, scene := range slices.Sorted(maps.Keys(failed)) {
		fmt.Fprintf(log, "vmbench: boot %d %s: %s: %s\n", b.index, image, scene, failed[scene])
		ok = false
	}
	return marked, ok, nil
}
