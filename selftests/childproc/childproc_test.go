// SPDX-License-Identifier: GPL-2.0

package childproc

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// status is /proc/PID/status as a map.
func status(t *testing.T, text string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m
}

func capEff(t *testing.T, st map[string]string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(st["CapEff"], 16, 64)
	if err != nil {
		t.Fatalf("CapEff %q: %v", st["CapEff"], err)
	}
	return n
}

// The child lacks what was dropped and has one CPU; the parent keeps both.
func TestStartDropsAndPins(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a capability to drop")
	}
	cmd := exec.Command("/bin/cat", "/proc/self/status")
	var out strings.Builder
	cmd.Stdout = &out
	if err := Start(cmd, Limits{Drop: []uintptr{unix.CAP_NET_ADMIN}, OneCPU: true}); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	child := status(t, out.String())
	if eff := capEff(t, child); eff&(1<<unix.CAP_NET_ADMIN) != 0 || eff&(1<<unix.CAP_SYS_ADMIN) == 0 {
		t.Errorf("child CapEff %#x: want CAP_NET_ADMIN gone, CAP_SYS_ADMIN kept", eff)
	}
	if cpus := child["Cpus_allowed_list"]; cpus == "" || strings.ContainsAny(cpus, ",-") {
		t.Errorf("child may use CPUs %q, want one", cpus)
	}
	self, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	if capEff(t, status(t, string(self)))&(1<<unix.CAP_NET_ADMIN) == 0 {
		t.Error("the parent lost CAP_NET_ADMIN")
	}
}

// With UserNS the child is root of a user namespace that maps only the
// parent's uid, and in a network namespace of its own.
func TestStartInAUserNamespace(t *testing.T) {
	if why := UserNamespaces(); why != "" {
		t.Skip(why)
	}
	cmd := exec.Command("/bin/cat", "/proc/self/uid_map")
	var out strings.Builder
	cmd.Stdout = &out
	if err := Start(cmd, Limits{UserNS: true}); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Fields(out.String()), []string{"0", strconv.Itoa(os.Getuid()), "1"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("child's uid_map %q, want %q", got, want)
	}
}
