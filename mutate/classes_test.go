// SPDX-License-Identifier: GPL-2.0

package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// vmtest's messages, as verdict() and runInVM() print them, sorted into
// the host's failures (error, never counted) and the guest's failures
// with no case and no report (unexplained, rerun), with the guest step.
func TestClassifyFailure(t *testing.T) {
	for _, tc := range []struct {
		name, stderr string
		exit         int
		program      string
		progFailed   []string
		status, step string
	}{
		{"usage", "vmtest: -kernel: no such file (see -help)\n", 2, "", nil, statusError, ""},
		{"signal", "vmtest: interrupted by SIGTERM: QEMU killed\n", 143, "", nil, statusError, ""},
		{"qemu did not start", "vmtest: guest never reached /init (QEMU: exit status 1)\nvmtest: the kernel console stayed empty\n", 1, "", nil, statusError, ""},
		{"vmtest's own error", "vmtest: listen for the guest's TAP channel: address in use\n", 1, "", nil, statusError, ""},
		{"no init", "vmtest: guest never reached /init (QEMU exited)\nvmtest: last lines of the kernel console (all of it with -v):\n  | Run /init as init process\n", 1, "", nil, statusUnexplained, "boot to /init"},
		{"no tap", "vmtest: guest /init started but could not open its TAP channel /dev/ttyS1 (QEMU exited)\n", 1, "", nil, statusUnexplained, "open the TAP channel"},
		{"stopped", "vmtest: guest /init stopped without reporting an exit status (QEMU exited)\n", 1, "netlink_mcast_semantics", nil, statusUnexplained, "after program netlink_mcast_semantics"},
		{"program failed", "", 1, "netlink_mcast_switch", []string{"not ok 2 selftests: netlink_mcast: netlink_mcast_switch # exit=2"}, statusUnexplained, "program netlink_mcast_switch"},
		// The guest's /init stopped at its own setup: before, this was
		// taken for the host's failure and the mutant never counted.
		{"init setup", "nlmc-vmtest: init started\nnlmc-vmtest: bring lo up in netns init: RTM_NEWLINK ifindex 1 up=true: socket \"ctl\" in netns init: recvmsg: msg_name: msg_namelen 0, want 12 (struct sockaddr_nl)\n", 1, "", nil, statusUnexplained, "guest /init: bring lo up in netns init"},
		{"init markers only", "nlmc-vmtest: init started\nnlmc-vmtest: kmemleak scan 1 of 2 after x\nnlmc-vmtest: no leak check: none\n", 1, "", nil, statusError, ""},
	} {
		status, step, msg := classifyFailure(tc.stderr, tc.exit, tc.program, tc.progFailed)
		if status != tc.status || step != tc.step {
			t.Errorf("%s: %s in %q (%s), want %s in %q", tc.name, status, step, msg, tc.status, tc.step)
		}
		if status == statusUnexplained && strings.ContainsAny(msg, "0123456789") {
			t.Errorf("%s: message %q keeps digits: two boots' messages would differ in a time or a count", tc.name, msg)
		}
	}
}

// A crash needs a kernel report on the console: a boot that fails with
// neither a failed case nor a report is no crash.
func TestBootWithoutReportIsNotCrashed(t *testing.T) {
	for _, tc := range []struct{ name, script, want string }{
		{"report", "echo '# ok 1 x.a'\necho 'vmtest: kernel report 1 of 1: WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500' >&2\necho 'vmtest: FAIL: the guest kernel logged 1 kernel report (WARNING), although every program passed' >&2\nexit 1\n", statusCrashed},
		{"no init, no report", "echo 'vmtest: guest never reached /init (QEMU exited)' >&2\necho 'vmtest: last lines of the kernel console (all of it with -v):' >&2\necho '  | Kernel command line' >&2\nexit 1\n", statusUnexplained},
		{"host", "echo 'vmtest: start qemu-system-x86_64: exec: not found' >&2\nexit 1\n", statusError},
		{"usage", "echo 'vmtest: bad flag (see -help)' >&2\nexit 2\n", statusError},
	} {
		r := boot(context.Background(), plan(fakeVMTest(t, tc.script)), "img", io.Discard)
		if r.status != tc.want {
			t.Errorf("%s: got %q (%s), want %q", tc.name, r.status, r.detail, tc.want)
		}
	}
	p := plan("/nonexistent/vmtest")
	if r := boot(context.Background(), p, "img", io.Discard); r.status != statusError {
		t.Errorf("vmtest missing: got %q (%s), want %q", r.status, r.detail, statusError)
	}
}

// seq returns a boot function that gives the results in order.
func seq(t *testing.T, rs ...bootResult) (func() bootResult, *int) {
	n := 0
	return func() bootResult {
		if n >= len(rs) {
			t.Fatalf("boot %d: only %d planned", n+1, len(rs))
		}
		n++
		return rs[n-1]
	}, &n
}

func TestBootTwice(t *testing.T) {
	unexplained := func(step, msg string) bootResult {
		return bootResult{status: statusUnexplained, step: step, message: msg, detail: step}
	}
	timeout := bootResult{status: statusKilled, failed: []string{"x.a # TIMEOUT: still running"}, timeout: true, detail: "failed: x.a # TIMEOUT"}
	pass := bootResult{status: statusSurvived}
	killed := bootResult{status: statusKilled, failed: []string{"x.b"}, detail: "failed: x.b"}
	host := bootResult{status: statusError, detail: "host: vmtest exit 2"}
	for _, tc := range []struct {
		name   string
		boots  []bootResult
		status string
		failed string
	}{
		{"pass once", []bootResult{pass}, statusSurvived, ""},
		{"killed once", []bootResult{killed}, statusKilled, "x.b"},
		{"timeout then pass", []bootResult{timeout, pass}, statusSurvived, ""},
		{"timeout twice", []bootResult{timeout, timeout}, statusKilled, "x.a # TIMEOUT: still running"},
		{"timeout then another case", []bootResult{timeout, killed}, statusKilled, "x.b"},
		{"same step twice", []bootResult{unexplained("boot to /init", "m"), unexplained("boot to /init", "m")}, statusKilled, "boot step boot to /init: m"},
		{"another message", []bootResult{unexplained("boot to /init", "m"), unexplained("boot to /init", "n")}, statusError, ""},
		{"another step", []bootResult{unexplained("boot to /init", "m"), unexplained("open the TAP channel", "m")}, statusError, ""},
		{"unexplained then pass", []bootResult{unexplained("boot to /init", "m"), pass}, statusSurvived, ""},
		{"host then pass", []bootResult{host, pass}, statusSurvived, ""},
		{"host every time", []bootResult{host, host, host}, statusError, ""},
		{"host, then unexplained twice", []bootResult{host, unexplained("s", "m"), unexplained("s", "m")}, statusKilled, "boot step s: m"},
	} {
		f, n := seq(t, tc.boots...)
		r := bootTwice(f)
		if r.status != tc.status || (tc.failed != "" && (len(r.failed) != 1 || r.failed[0] != tc.failed)) {
			t.Errorf("%s: %s %q (%s), want %s %q", tc.name, r.status, r.failed, r.detail, tc.status, tc.failed)
		}
		if *n != len(tc.boots) {
			t.Errorf("%s: %d boots, want %d", tc.name, *n, len(tc.boots))
		}
	}
}

// A fake vmtest that times a case out on its first boot and passes on
// the second: the rerun decides, through boot itself.
func TestBootTimeoutIsRerunOnce(t *testing.T) {
	count := filepath.Join(t.TempDir(), "boots")
	vm := fakeVMTest(t, `echo x >>`+count+`
if [ "$(wc -l <`+count+`)" -eq 1 ]; then
	echo "# not ok 1 netlink_mcast_semantics.a # TIMEOUT: still running after the per-case deadline of 20s"
	exit 1
fi
echo "# ok 1 netlink_mcast_semantics.a"
exit 0
`)
	r := bootTwice(func() bootResult { return boot(context.Background(), plan(vm), "img", io.Discard) })
	if r.status != statusSurvived || !strings.Contains(r.detail, "rerun after a TIMEOUT") {
		t.Errorf("got %s (%s), want survived after a rerun", r.status, r.detail)
	}
}

// Every tier knows a hang after the same -silence, the stress program's
// too: its modes print a progress line every 10 s.
func TestSilenceIsTheSameOnEveryBootTier(t *testing.T) {
	o := runOptions{tiers: []string{"base", "pattern", "debug", "stress", "fault"}, patternBuild: "/p", debugBuild: "/d", faultBuild: "/f", progTimeout: time.Minute, silence: time.Minute}
	plans := tierPlans(o, toolsIn("/b"))
	if len(plans) != 5 {
		t.Fatalf("%d tier plans, want 5", len(plans))
	}
	for _, p := range plans {
		if p.plan.silence != time.Minute {
			t.Errorf("%s tier: hung after %v of silence, want 1m0s", p.name, p.plan.silence)
		}
	}
}

// Each tier's build gets its own baseline boot before its first mutant,
// and every record carries the suite commit, the kernel version and the
// config hash. A tier whose unmutated kernel fails stops the run.
func TestEveryTierHasABaselineAndRecordsAreStamped(t *testing.T) {
	dir := t.TempDir()
	src, build, pattern, out, tl := filepath.Join(dir, "src"), filepath.Join(dir, "build"), filepath.Join(dir, "pattern"), filepath.Join(dir, "out"), filepath.Join(dir, "tools")
	boots := filepath.Join(dir, "boots")
	vm := `#!/bin/sh
img=
while [ $# -gt 0 ]; do case $1 in -kernel) img=$2; shift;; esac; shift; done
echo "$img" >>` + boots + `
echo "TAP version 13"
if [ -e ` + filepath.Join(dir, "pattern-fails") + ` ] && [ "${img#` + pattern + `}" != "$img" ]; then echo "# not ok 1 netlink_mcast_semantics.zero"; exit 1; fi
if grep -q 'a != 0' "$img"; then echo "# not ok 1 netlink_mcast_semantics.zero"; exit 1; fi
echo "# ok 1 netlink_mcast_semantics.zero"
exit 0
`
	for path, text := range map[string]string{
		filepath.Join(src, "x.c"): fakeSource, filepath.Join(src, "Makefile"): fakeMakefile, filepath.Join(tl, "vmtest"): vm,
		filepath.Join(build, ".config"): fakeConfig, filepath.Join(pattern, ".config"): fakeConfig + "CONFIG_PATTERN=y\n",
	} {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range []string{build, pattern} {
		if _, err := (kernelTree{src: src, build: b, jobs: 1}).buildImage(context.Background(), io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	funcSets["test"] = funcSet{file: "x.c", funcs: []string{"f"}}
	defer delete(funcSets, "test")
	// f+4:flip-const:1 survives base and reaches pattern; eq-ne is killed
	// on base and never needs pattern's baseline.
	o := runOptions{
		tree: kernelTree{src: src, build: build, jobs: 1}, out: out, set: "test", ids: []string{"f+4:eq-ne:1", "f+4:flip-const:1", "f+8:del-call:1"},
		tiers: []string{"base", "pattern"}, patternBuild: pattern,
		failFast: true, silence: 60e9, progTimeout: 60e9, baseline: true, toolsDir: tl,
	}
	if code := run(context.Background(), o, newGuard(filepath.Join(build, ".mutate")), "test"); code != 0 {
		t.Fatalf("run: exit %d", code)
	}
	b, _ := os.ReadFile(boots)
	imgs := strings.Fields(string(b))
	// base: baseline, eq-ne, flip-const (the dead code's object is the
	// unmutated one there); pattern: baseline, flip-const, and the dead
	// code, which that build compiles
	want := []string{"base", "base", "base", "pattern", "pattern", "pattern"}
	got := []string{}
	for _, i := range imgs {
		got = append(got, map[bool]string{true: "pattern", false: "base"}[strings.HasPrefix(i, pattern)])
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("boots %v, want %v (each tier's baseline before its first mutant)", got, want)
	}
	recs, err := resultsDir{dir: out}.records()
	if err != nil {
		t.Fatal(err)
	}
	if r := recs["f+8:del-call:1"]; r.Status != statusSurvived || r.Tiers[0].Status != identicalObject || r.Tiers[1].Status != statusSurvived {
		t.Errorf("dead code on base, live on pattern: %s, tiers %+v; want survived, booted on pattern", r.Status, r.Tiers)
	}
	r := recs["f+4:flip-const:1"]
	if len(r.Tiers) != 2 || !r.Tiers[0].Baseline || !r.Tiers[1].Baseline {
		t.Errorf("tiers %+v: want both with a baseline", r.Tiers)
	}
	if r.Kernel != "0.0-fake" || r.ConfigSHA256 != fileSHA256(filepath.Join(build, ".config")) || r.SuiteCommit == "" ||
		r.Tiers[1].ConfigSHA256 != fileSHA256(filepath.Join(pattern, ".config")) {
		t.Errorf("stamp %+v, pattern config %q", r.recordStamp, r.Tiers[1].ConfigSHA256)
	}
	var c campaign
	cb, _ := os.ReadFile(filepath.Join(out, "campaign.json"))
	if json.Unmarshal(cb, &c); c.SuiteCommit != r.SuiteCommit {
		t.Errorf("campaign at suite %q, record at %q", c.SuiteCommit, r.SuiteCommit)
	}

	// The pattern build's unmutated kernel fails: no mutant is judged there.
	os.WriteFile(filepath.Join(dir, "pattern-fails"), nil, 0o644)
	o.out = filepath.Join(dir, "out2")
	if code := run(context.Background(), o, newGuard(filepath.Join(build, ".mutate")), "test"); code != 1 {
		t.Errorf("pattern baseline failing: exit %d, want 1", code)
	}
	recs, _ = resultsDir{dir: o.out}.records()
	if _, ok := recs["f+4:flip-const:1"]; ok {
		t.Errorf("a mutant was recorded on a tier whose baseline failed: %+v", recs["f+4:flip-const:1"])
	}

	// A resumed campaign at another suite commit is refused.
	c.SuiteCommit = "0000000000000000000000000000000000000000"
	rd := resultsDir{dir: out}
	rd.writeJSON(filepath.Join(out, "campaign.json"), c)
	o.out = out
	if code := run(context.Background(), o, newGuard(filepath.Join(build, ".mutate")), "test"); code != 2 {
		t.Errorf("resumed at another suite commit: exit %d, want 2", code)
	}
}
