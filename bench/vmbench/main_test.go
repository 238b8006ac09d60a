// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"nlmcast/bench/internal/report"
	"nlmcast/bench/internal/sample"
)

// Pairs alternate which image boots first; -first-boot continues the
// numbering; a missing image leaves its boots out.
func TestPlanRotatesImages(t *testing.T) {
	kinds := func(bs []boot) (out []string) {
		for _, b := range bs {
			out = append(out, b.kind+string(rune('0'+b.index)))
		}
		return out
	}
	got := kinds(plan(options{kernelU: "u", kernelP: "p", boots: 3}))
	if want := []string{"U0", "P0", "P1", "U1", "U2", "P2"}; !slices.Equal(got, want) {
		t.Errorf("plan = %v, want %v", got, want)
	}
	got = kinds(plan(options{kernelP: "p", boots: 2, firstBoot: 3}))
	if want := []string{"P3", "P4"}; !slices.Equal(got, want) {
		t.Errorf("plan = %v, want %v", got, want)
	}
}

// One malformed sample line (the guest killed in the middle of it) costs
// that line only: the boot's other samples are kept, the line is named,
// and the run fails. A scene that failed in the boot has its samples
// marked; one that skipped does not fail the run.
func TestCollectKeepsTheBootAroundAMalformedLine(t *testing.T) {
	line := func(scene string, k int) string {
		return sample.Line(sample.Sample{Kernel: "k", Image: "P.bzImage", State: "P0", Scene: scene, Sample: k, WallNS: 1000, Ops: 64})
	}
	tap := strings.Join([]string{
		"TAP version 13",
		"# # " + line("C1-n0", 0),
		"# # " + line("C1-n0", 1)[:60],
		"# # " + line("C1-n0", 2),
		"# ok 1 netlink_mcast_bench.C1-n0 # time=1ms",
		"# # " + line("C4-all450", 1),
		"# not ok 2 netlink_mcast_bench.C4-all450 # kernel report during the case: WARNING time=1ms",
		"# ok 3 netlink_mcast_bench.PAR-n900 # SKIP two senders at once need two CPUs time=0ms",
	}, "\n")
	var log strings.Builder
	got, ok, err := collect(strings.NewReader(tap), boot{index: 1, kernel: "/k/P.bzImage", kind: "P"}, &log)
	if err != nil || ok {
		t.Fatalf("ok %v, err %v; want a failed boot, no error", ok, err)
	}
	var marks []string
	for _, s := range got {
		marks = append(marks, fmt.Sprintf("%s/%d=%s", s.Scene, s.Sample, s.Failed))
	}
	if want := []string{"C1-n0/0=", "C1-n0/2=", "C4-all450/1=not ok: kernel report during the case: WARNING"}; !slices.Equal(marks, want) {
		t.Errorf("samples %q, want %q", marks, want)
	}
	for _, want := range []string{
		"vmbench: boot 1 P.bzImage: 1 malformed sample line(s) left out (the other 3 samples kept); the first: \"# # sample: {",
		"vmbench: boot 1 P.bzImage: C4-all450: not ok: kernel report during the case: WARNING\n",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	if strings.Contains(log.String(), "PAR-n900") {
		t.Errorf("a skipped scene was reported as a failure:\n%s", log.String())
	}
	// Without the malformed line and the failure, the boot passes.
	clean := strings.Join([]string{"# # " + line("C1-n0", 1), "# ok 1 netlink_mcast_bench.C1-n0"}, "\n")
	if got, ok, err := collect(strings.NewReader(clean), boot{kernel: "P.bzImage", kind: "P"}, &log); !ok || err != nil || len(got) != 1 || got[0].Failed != "" {
		t.Errorf("clean boot: %+v ok %v err %v", got, ok, err)
	}
}

// vmbench's usage errors exit 1, and a results directory that already
// holds a run is refused before any boot.
func TestUsageAndResultsDirectory(t *testing.T) {
	if code := run([]string{"-boots", "0", "-out", t.TempDir(), "-kernel-u", "u"}); code != 1 {
		t.Errorf("-boots 0: exit %d, want 1", code)
	}
	if code := run([]string{"-nope"}); code != 1 {
		t.Errorf("an unknown flag: exit %d, want 1", code)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, report.SamplesFile), nil, 0o644)
	if code := run([]string{"-out", dir, "-kernel-u", "u"}); code != 1 {
		t.Errorf("an earlier run's directory: exit %d, want 1", code)
	}
}
