// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kernelEnv names a bzImage to boot in the end-to-end tests, for example
// /work/shared/kernels/P.bzImage. Without it they skip: they need QEMU and
// take a few seconds per boot under TCG.
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
func fakeSuites(t *testing.T, names ...string) map[string]string {
	t.Helper()
	prog := buildStaticGoProgram(t, fakeSuiteSource)
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
	kernel := os.Getenv(kernelEnv)
	if kernel == "" {
		t.Skipf("set %s to a bzImage to boot the guest", kernelEnv)
	}
	bins := fakeSuites(t, "a_pass", "b_skip", "c_fail", "d_hang")

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
			args:       []string{"-init", buildStaticGoProgram(t, "package main\nfunc main() {}\n"), bins["a_pass"]},
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
