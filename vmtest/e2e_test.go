// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"nlmcast/vmtest/kimage"
)

// kernelEnv names a kernel image to boot in the end-to-end tests, for
// example one that `make kernel` built, or an arm64 Image; the programs are
// built for its architecture. Without it they skip: they need QEMU and take
// a few seconds per boot under TCG.
const kernelEnv = "NLMC_VMTEST_KERNEL"

// fakeSuiteSource is a stand-in suite whose behaviour follows its file name:
// *_pass checks that lo is up and echoes its arguments, *_skip skips,
// *_fail fails, *_hang ignores SIGTERM and sleeps.
const fakeSuiteSource = `package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	name := filepath.Base(os.Args[0])
	fmt.Println("TAP version 13")
	fmt.Println("1..1")
	switch {
	case strings.HasSuffix(name, "_pass"):
		raw, _ := os.ReadFile("/sys/class/net/lo/flags")
		flags, _ := strconv.ParseUint(strings.TrimSpace(string(raw)), 0, 32)
		fmt.Printf("# args %q\n", os.Args[1:])
		fmt.Fprintln(os.Stderr, "# on stderr")
		if flags&syscall.IFF_UP == 0 {
			fmt.Printf("not ok 1 lo is up # flags %q\n", raw)
			os.Exit(1)
		}
		fmt.Println("ok 1 lo is up")
		os.Exit(0)
	case strings.HasSuffix(name, "_skip"):
		fmt.Println("ok 1 # SKIP not here")
		os.Exit(4)
	case strings.HasSuffix(name, "_fail"):
		fmt.Println("not ok 1 broken")
		os.Exit(1)
	case strings.HasSuffix(name, "_hang"):
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("# hanging")
		time.Sleep(time.Hour)
	}
	os.Exit(2)
}
`

// fakeSuites builds the fake suite once and installs it under each name.
func fakeSuites(t *testing.T, goarch string, names ...string) map[string]string {
	t.Helper()
	prog := buildStaticGoProgram(t, goarch, fakeSuiteSource)
	data, err := os.ReadFile(prog)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paths := map[string]string{}
	for _, name := range names {
		paths[name] = filepath.Join(dir, name)
		if err := os.WriteFile(paths[name], data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return paths
}

func TestBootEndToEnd(t *testing.T) {
	kernel, goarch := bootKernel(t)
	bins := fakeSuites(t, goarch, "a_pass", "b_skip", "c_fail", "d_hang")

	tests := []struct {
		name       string
		args       []string
		wantStatus int
		wantOut    []string // lines stdout must contain
		wantErr    string   // substring of stderr; empty means stderr must be empty
	}{
		{
			name:       "pass and skip",
			args:       []string{"-args", `one "two words"`, bins["a_pass"], bins["b_skip"]},
			wantStatus: 0,
			wantOut: []string{
				"TAP version 13", "1..2",
				"# selftests: netlink_mcast: a_pass",
				`# # args ["one" "two words"]`,
				"# # on stderr",
				"# ok 1 lo is up",
				"ok 1 selftests: netlink_mcast: a_pass",
				"ok 2 selftests: netlink_mcast: b_skip # SKIP",
			},
		},
		{
			name:       "all skipped",
			args:       []string{bins["b_skip"]},
			wantStatus: 4,
			wantOut:    []string{"1..1", "ok 1 selftests: netlink_mcast: b_skip # SKIP"},
		},
		{
			name:       "failure and program timeout",
			args:       []string{"-append", "nlmc.timeout=2", bins["a_pass"], bins["c_fail"], bins["d_hang"]},
			wantStatus: 1,
			wantOut: []string{
				"ok 1 selftests: netlink_mcast: a_pass",
				"not ok 2 selftests: netlink_mcast: c_fail # exit=1",
				"not ok 3 selftests: netlink_mcast: d_hang # TIMEOUT 2 seconds",
			},
		},
		{
			name:       "host timeout",
			args:       []string{"-timeout", "8s", bins["d_hang"]},
			wantStatus: 1,
			wantOut:    []string{"# selftests: netlink_mcast: d_hang"},
			wantErr:    "timed out after 8s (-timeout): QEMU killed; the guest was running d_hang",
		},
		{
			name:       "init exits and the kernel panics",
			args:       []string{"-init", buildStaticGoProgram(t, goarch, "package main\nfunc main() {}\n"), bins["a_pass"]},
			wantStatus: 1,
			wantErr:    "guest kernel panicked: Kernel panic - not syncing: Attempted to kill init!",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			status := run(append([]string{"-kernel", kernel}, tt.args...), &stdout, &stderr)
			if status != tt.wantStatus {
				t.Errorf("status %d, want %d", status, tt.wantStatus)
			}
			lines := strings.Split(stdout.String(), "\n")
			for _, want := range tt.wantOut {
				if !containsLine(lines, want) {
					t.Errorf("stdout lacks line %q", want)
				}
			}
			for _, line := range lines {
				if line != "" && !isTAPLine(line) {
					t.Errorf("stdout has a non-TAP line %q", line)
				}
			}
			if tt.wantErr == "" && stderr.Len() != 0 || !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("stderr does not match %q", tt.wantErr)
			}
			if t.Failed() {
				t.Logf("stdout:\n%s\nstderr:\n%s", &stdout, &stderr)
			}
		})
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

// isTAPLine accepts the top-level lines of kselftest-runner TAP.
func isTAPLine(line string) bool {
	for _, prefix := range []string{"TAP version ", "1..", "ok ", "not ok ", "#"} {
		if strings.HasPrefix(line, prefix) {
			return true
		}
	}
	return false
}

// bootKernel returns the image of kernelEnv and the GOARCH of its programs,
// or skips.
func bootKernel(t *testing.T) (kernel, goarch string) {
	t.Helper()
	kernel = os.Getenv(kernelEnv)
	if kernel == "" {
		t.Skipf("needs a kernel image: set %s to an x86 bzImage or arm64 Image to boot the guest (`make kernel KSRC=...` builds one)", kernelEnv)
	}
	arch, err := kimage.Detect(kernel)
	if err != nil {
		t.Fatalf("%s: %v", kernelEnv, err)
	}
	return kernel, arch.GOARCH
}

// vmRun is one vmtest run's outcome.
type vmRun struct {
	status         int
	stdout, stderr string
}

func runVM(t *testing.T, args ...string) vmRun {
	t.Helper()
	var stdout, stderr strings.Builder
	status := run(args, &stdout, &stderr)
	r := vmRun{status, stdout.String(), stderr.String()}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("vmtest %q: status %d\nstdout:\n%s\nstderr:\n%s", args, r.status, r.stdout, r.stderr)
		}
	})
	return r
}

// A guest program that passes but makes the kernel log a WARNING or set a
// taint bit turns the run red, with the report shown; the control stays
// green. The probe also checks, in the guest, that kmsg.Watcher saw on the
// real /dev/kmsg exactly what it did.
func TestKernelHealthEndToEnd(t *testing.T) {
	kernel, goarch := bootKernel(t)
	probe := buildModuleProgram(t, goarch, "./vmtest/internal/kmsgprobe", "probe")
	tests := []struct {
		mode       string
		wantStatus int
		wantErr    []string // lines stderr must contain; none means stderr must be empty
	}{
		{"warn", 1, []string{
			"vmtest: kernel report 1 of 1: WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x0/0x10",
			"  | WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x0/0x10",
			"vmtest: FAIL: the guest kernel logged 1 kernel report (WARNING), although every program passed",
		}},
		{"taint", 1, []string{
			"vmtest: kernel report 1 of 1: taint: W (warning)",
			"  | /proc/sys/kernel/tainted: 512 (W), was 0 (untainted)",
			"vmtest: FAIL: the guest kernel logged 1 kernel report (taint: W (warning)), although every program passed",
		}},
		{"clean", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			r := runVM(t, "-kernel", kernel, "-prog-args", "probe=-mode "+tt.mode, probe)
			if r.status != tt.wantStatus {
				t.Errorf("status %d, want %d", r.status, tt.wantStatus)
			}
			out := strings.Split(r.stdout, "\n")
			for _, want := range []string{"# ok 1 " + tt.mode, "ok 1 selftests: netlink_mcast: probe"} {
				if !containsLine(out, want) {
					t.Errorf("stdout lacks %q: the probe itself must pass", want)
				}
			}
			errLines := strings.Split(r.stderr, "\n")
			for _, want := range tt.wantErr {
				if !containsLine(errLines, want) {
					t.Errorf("stderr lacks %q", want)
				}
			}
			if tt.wantErr == nil && r.stderr != "" {
				t.Errorf("stderr is not empty")
			}
		})
	}
}

// -netns starts every program in a network namespace other than pid 1's.
func TestNetnsEndToEnd(t *testing.T) {
	kernel, goarch := bootKernel(t)
	probe := buildModuleProgram(t, goarch, "./vmtest/internal/kmsgprobe", "probe")
	for _, netns := range []bool{true, false} {
		args := []string{"-kernel", kernel, "-prog-args", "probe=-mode netns", probe}
		want, wantStatus := "ok 1 selftests: netlink_mcast: probe", 0
		if netns {
			args = append([]string{"-netns"}, args...)
		} else {
			want, wantStatus = "not ok 1 selftests: netlink_mcast: probe # exit=1", 1
		}
		r := runVM(t, args...)
		if r.status != wantStatus || !containsLine(strings.Split(r.stdout, "\n"), want) {
			t.Errorf("-netns=%v: status %d, want %d and the line %q", netns, r.status, wantStatus, want)
		}
	}
}

// The switch suite decides which namespace is the initial one by identity,
// so it gives the same result started in a namespace of its own (as
// run_kselftest.sh -n does) as in the initial one: 6/6 where the kernel has
// the switch, all skipped where it has not.
func TestSwitchUnderNetnsEndToEnd(t *testing.T) {
	kernel, goarch := bootKernel(t)
	sw := buildModuleProgram(t, goarch, "./switchtest", "netlink_mcast_switch")
	plain := runVM(t, "-kernel", kernel, sw)
	inNS := runVM(t, "-netns", "-kernel", kernel, sw)
	if plain.status == 1 || inNS.status != plain.status {
		t.Errorf("status %d in the initial netns and %d with -netns; want the same pass (0) or skip (4)", plain.status, inNS.status)
	}
	// Every case passes both times, but those that need an option the
	// kernel may lack and SKIP naming it: fault injection
	// (CONFIG_FAULT_INJECTION), socket monitoring (CONFIG_NETLINK_DIAG).
	totals := regexp.MustCompile(`# # Totals: pass:(\d+) fail:0 xfail:0 xpass:0 skip:(\d+) error:0`)
	p, n := totals.FindStringSubmatch(plain.stdout), totals.FindStringSubmatch(inNS.stdout)
	if plain.status == 0 && (p == nil || n == nil || p[1] != n[1] || p[2] != n[2]) {
		t.Errorf("the switch suite did not pass the same cases both times: %q in the initial netns, %q with -netns", p, n)
	}
	for _, out := range []string{plain.stdout, inNS.stdout} {
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, " # SKIP ") && strings.HasPrefix(l, "# ok ") && plain.status == 0 &&
				!strings.Contains(l, "lacks CONFIG_FAULT_INJECTION") && !strings.Contains(l, "(CONFIG_NETLINK_DIAG)") {
				t.Errorf("a case skipped for another reason than a kernel without fault injection or socket monitoring: %s", l)
			}
		}
	}
}

// resultTiming is the time=NNNms a result line ends with, and the " #" that
// introduces it when nothing else does.
var resultTiming = regexp.MustCompile(`( #)? time=\d+ms`)

// A selftests.Main program fails exactly the case during which the kernel
// logged a report or set a taint bit, with the report's lines, and fails
// the program when a report comes after its last case (teardown is
// asynchronous); a report from before Main opened the log counts, and
// one from a Settle case's teardown is that case's. vmtest also fails
// every run on the console's evidence.
func TestProgramKernelHealthEndToEnd(t *testing.T) {
	kernel, goarch := bootKernel(t)
	during := buildModuleProgram(t, goarch, "./selftests/internal/healthprobe", "healthprobe")
	after := buildModuleProgram(t, goarch, "./selftests/internal/healthprobe", "healthprobe-after")
	early := buildModuleProgram(t, goarch, "./selftests/internal/healthprobe", "healthprobe-early")
	settle := buildModuleProgram(t, goarch, "./selftests/internal/healthprobe", "healthprobe-settle")
	tests := []struct {
		prog string
		want []string
	}{
		{during, []string{
			"# ok 1 healthprobe.quiet",
			"# # kernel report during warns: WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x0/0x10",
			"# not ok 2 healthprobe.warns # kernel report during the case: WARNING",
			"# # kernel report during taints: taint: U (user request)",
			"# not ok 3 healthprobe.taints # kernel report during the case: taint",
			"# ok 4 healthprobe.quiet_again",
			"# # Totals: pass:2 fail:2 xfail:0 xpass:0 skip:0 error:0",
			"not ok 1 selftests: netlink_mcast: healthprobe # exit=1",
		}},
		{after, []string{
			"# ok 1 healthprobe.quiet",
			"# # kernel report after the last case (namespace teardown): WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x0/0x10",
			"# Bail out! kernel report after the last case: WARNING",
			"# # Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0",
			"not ok 1 selftests: netlink_mcast: healthprobe-after # exit=1",
		}},
		// A WARNING logged by the program's first instruction, before
		// Main opens the kernel log, is read from the log by its
		// timestamp and fails the first case.
		{early, []string{
			"# # kernel report during quiet: WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x0/0x10",
			"# not ok 1 healthprobe.quiet # kernel report during the case: WARNING",
			"# ok 2 healthprobe.quiet_again",
			"not ok 1 selftests: netlink_mcast: healthprobe-early # exit=1",
		}},
		// A WARNING logged once a Settle case has released its namespace,
		// while the kernel tears it down, fails that case, not the next.
		{settle, []string{
			"# # kernel report during tears_down: WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x0/0x10",
			"# not ok 1 healthprobe.tears_down # kernel report during the case: WARNING",
			"# ok 2 healthprobe.quiet_after",
			"not ok 1 selftests: netlink_mcast: healthprobe-settle # exit=1",
		}},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.prog), func(t *testing.T) {
			r := runVM(t, "-kernel", kernel, tt.prog)
			if r.status != 1 {
				t.Errorf("status %d, want 1", r.status)
			}
			out := strings.Split(resultTiming.ReplaceAllString(r.stdout, ""), "\n")
			for _, want := range tt.want {
				if !containsLine(out, want) {
					t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
				}
			}
		})
	}
}
