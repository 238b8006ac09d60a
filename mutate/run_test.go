// SPDX-License-Identifier: GPL-2.0

package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A stand-in kernel tree: its "compiler" drops the dead if (0) block
// (except in a build configured with CONFIG_PATTERN=y), its
// "bzImage" is the object, and it does not build without the call to use().
const fakeSource = `int f(int a)
{
	int b = helper(a);

	if (a == 0)
		return 1;
	use(b);
	if (0)
		use(a);
	return b;
}
`

const fakeMakefile = `O ?= .
bzImage:
	@mkdir -p $(O)/arch/x86/boot
	@grep -q 'use(b)' x.c || { echo "x.c:7:2: error: 'b' set but not used" >&2; exit 2; }
	@if grep -q CONFIG_PATTERN=y $(O)/.config 2>/dev/null; then cp x.c $(O)/x.o; else sed '/if (0)/{N;d;}' x.c >$(O)/x.o; fi
	@cp $(O)/x.o $(O)/arch/x86/boot/bzImage
kernelversion:
	@echo 0.0-fake
`

// The stand-in vmtest judges the "image": a changed condition fails a
// semantics case; "return 0" passes there and fails the stress program.
const fakeVMTestScript = `#!/bin/sh
img=; stress=
while [ $# -gt 0 ]; do
	case $1 in -kernel) img=$2; shift;; */netlink_mcast_stress) stress=1;; esac
	shift
done
echo "TAP version 13"
if grep -q 'a != 0' "$img"; then echo "# not ok 1 netlink_mcast_semantics.zero"; exit 1; fi
if [ -n "$stress" ] && grep -q 'return 0;' "$img"; then echo "# not ok 1 netlink_mcast_stress.fixed0"; exit 1; fi
echo "# ok 1 netlink_mcast_semantics.zero"
echo "# ok 2 netlink_mcast_switch.x"
exit 0
`

const fakeEquivalent = `id: f+4:negate-cond:1
code: if (a == 0)
unset: CONFIG_FAKE_OFF CONFIG_FAKE_ABSENT
builds: tiny
reason: the stand-in vmtest cannot see it.

id: f+4:flip-const:1
code: if (a == 0)
unset: CONFIG_FAKE_MOD
builds: tiny
reason: an argument that needs an option the build has: not applied.
`

// fakeConfig is the build's .config: the equivalence arguments' unset:
// options are checked against it.
const fakeConfig = `CONFIG_FAKE_ON=y
CONFIG_FAKE_MOD=m
# CONFIG_FAKE_OFF is not set
`

func TestRunClassifiesRecordsAndResumes(t *testing.T) {
	dir := t.TempDir()
	src, build, out, tl := filepath.Join(dir, "src"), filepath.Join(dir, "build"), filepath.Join(dir, "out"), filepath.Join(dir, "tools")
	for path, text := range map[string]string{
		filepath.Join(src, "x.c"): fakeSource, filepath.Join(src, "Makefile"): fakeMakefile,
		filepath.Join(tl, "vmtest"): fakeVMTestScript, filepath.Join(dir, "equivalent.txt"): fakeEquivalent,
	} {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := (kernelTree{src: src, build: build, jobs: 1}).buildImage(context.Background(), io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(build, ".config"), []byte(fakeConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	funcSets["test"] = funcSet{file: "x.c", funcs: []string{"f"}}
	defer delete(funcSets, "test")
	ids := []string{"f+4:eq-ne:1", "f+5:flip-const:1", "f+6:del-call:1", "f+4:negate-cond:1", "f+4:flip-const:1", "f+8:del-call:1"}
	want := []string{statusKilled, statusKilled, statusBuildFail, statusEquivalent, statusSurvived, statusEquivalent}
	o := runOptions{
		tree: kernelTree{src: src, build: build, jobs: 1}, out: out, set: "test", ids: ids, expect: want,
		equivalent: filepath.Join(dir, "equivalent.txt"), tiers: []string{"base", "pattern", "debug", "stress", "fault"},
		failFast: true, silence: 60e9, progTimeout: 60e9, baseline: true, toolsDir: tl,
	}
	if code := run(context.Background(), o, newGuard(filepath.Join(build, ".mutate")), "test"); code != 0 {
		t.Fatalf("run: exit %d", code)
	}
	recs, err := resultsDir{dir: out}.records()
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if recs[id].Status != want[i] {
			t.Errorf("%s: %s, want %s", id, recs[id].Status, want[i])
		}
	}
	if r := recs["f+5:flip-const:1"]; r.DecidedBy != "stress" || len(r.Tiers) != 4 || r.Tiers[1].Status != "not run" || r.Tiers[2].Status != "not run" {
		t.Errorf("return 0: decided by %q, tiers %+v; want stress, after base, pattern and debug (not run)", r.DecidedBy, r.Tiers)
	}
	if r := recs["f+6:del-call:1"]; len(r.BuildErrors) != 1 || !strings.Contains(r.BuildErrors[0], "error:") {
		t.Errorf("build failure: errors %q", r.BuildErrors)
	}
	if r := recs["f+4:negate-cond:1"]; r.Equivalence != "the stand-in vmtest cannot see it." {
		t.Errorf("equivalent: %q", r.Equivalence)
	}
	// The dead block's call deleted: the same object, decided without a
	// boot.
	if r := recs["f+8:del-call:1"]; r.DecidedBy != identicalObject || len(r.Tiers) != 5 || r.Tiers[0].Boot != 0 || r.Tiers[3].Status != identicalObject ||
		!strings.Contains(r.Equivalence, "x.o is byte for byte the unmutated source's") {
		t.Errorf("dead code: decided by %q, tiers %+v, %q; want %q, built and not booted", r.DecidedBy, r.Tiers, r.Equivalence, identicalObject)
	}
	// A mutant whose object differs in one byte is booted.
	if r := recs["f+4:flip-const:1"]; r.DecidedBy == identicalObject || len(r.Tiers) == 0 || r.Tiers[0].Status != statusSurvived {
		t.Errorf("live code: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(out, "records", "f+4_eq-ne_1.json")); err != nil {
		t.Errorf("record file: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(src, "x.c")); string(b) != fakeSource {
		t.Errorf("source changed:\n%s", b)
	}
	table, _ := os.ReadFile(filepath.Join(out, "table.md"))
	if !strings.Contains(string(table), "Done 6 of 6. killed 2; crashed 0; hung 0; build-failure 1; equivalent 2; survived 1; error 0;\nDecided by tier: base 2, stress 1, identical object 1.") {
		t.Errorf("table.md:\n%s", table)
	}
	// A second run resumes: nothing left to do, the records stay.
	os.Remove(filepath.Join(tl, "vmtest")) // it must not boot anything
	o.baseline = false
	if code := run(context.Background(), o, newGuard(filepath.Join(build, ".mutate")), "test"); code != 0 {
		t.Errorf("resumed run: exit %d", code)
	}
	// The expectation is checked: a wrong one fails the run.
	o.expect = append([]string{statusSurvived}, want[1:]...)
	if code := run(context.Background(), o, newGuard(filepath.Join(build, ".mutate")), "test"); code != 1 {
		t.Errorf("run with a wrong -expect: exit %d, want 1", code)
	}
}
