// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/ktap"
	"nlmcast/selftests"
	"nlmcast/selftests/childproc"
)

// childEnv makes the test binary run the stress program itself
// (TestMain): for runs that need a process of their own, without a
// privilege or with stdout closed.
const childEnv = "NLMC_STRESS_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(selftests.Main(suite))
	}
	os.Exit(m.Run())
}

// child is how the program is run: without some capabilities, in a user
// namespace of its own (as unshare -Urn), with stdout given.
type child struct {
	drop   []uintptr
	userns bool
	stdout *os.File // nil: a pipe, read to the end
}

// run runs the program with args; it returns stdout and stderr, and the
// exit code. Killed by a signal is a test failure.
func (c child) run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if c.stdout != nil {
		cmd.Stdout = c.stdout
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := childproc.Start(cmd, childproc.Limits{Drop: c.drop, UserNS: c.userns}); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(2*time.Minute, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	defer timer.Stop()
	cmd.Wait()
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() {
		t.Fatalf("%q: killed by %v; stdout:\n%s\nstderr:\n%s", args, ws.Signal(), out.String(), errs.String())
	}
	return out.String(), errs.String(), cmd.ProcessState.ExitCode()
}

// Without a privilege it needs, the whole program SKIPs (exit 4) with
// the reason, as the suites do; before, a dropped capability failed the
// modes.
func TestPrivilegesSkip(t *testing.T) {
	requireRoot(t)
	args := []string{"-t", "fixed0", "-duration", "1s"}
	for _, c := range []struct {
		name string
		c    child
		want string
	}{
		{"no CAP_NET_ADMIN", child{drop: []uintptr{unix.CAP_NET_ADMIN}}, "1..0 # SKIP must be run as root (needs CAP_NET_ADMIN)\n"},
		{"no CAP_SYS_ADMIN", child{drop: []uintptr{unix.CAP_SYS_ADMIN}}, "1..0 # SKIP must be run as root (needs CAP_SYS_ADMIN)\n"},
		{"no CAP_NET_BROADCAST", child{drop: []uintptr{unix.CAP_NET_BROADCAST}}, "1..0 # SKIP needs CAP_NET_BROADCAST, which this process lacks\n"},
		{"unshare -Urn", child{userns: true}, "1..0 # SKIP needs CAP_NET_ADMIN in the initial user namespace (SO_RCVBUFFORCE, nsids)"},
	} {
		if why := childproc.UserNamespaces(); c.c.userns && why != "" {
			t.Logf("%s: not tried, this kernel makes no user namespaces (%s)", c.name, why)
			continue
		}
		out, errs, code := c.c.run(t, args...)
		if code != ktap.ExitSkip || !strings.HasPrefix(out, "TAP version 13\n"+c.want) {
			t.Errorf("%s: exit %d (want %d), want %q; stdout:\n%s\nstderr:\n%s", c.name, code, ktap.ExitSkip, c.want, out, errs)
		}
	}
}

// A stdout that cannot be written (full, or a pipe closed by its reader)
// ends the run with exit 1 and the reason on stderr, named by the
// program: never a death by SIGPIPE, never a silent pass.
func TestUnwritableStdoutFails(t *testing.T) {
	requireRoot(t)
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer full.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // the reader has gone before the first line
	defer w.Close()
	for _, c := range []struct {
		name   string
		stdout *os.File
		want   string
	}{
		{"/dev/full", full, program + ": writing TAP to stdout: write /dev/stdout: no space left on device"},
		{"a closed pipe", w, program + ": writing TAP to stdout: write /dev/stdout: broken pipe"},
	} {
		_, errs, code := child{stdout: c.stdout}.run(t, "-t", "fixed0", "-duration", "1s")
		if code != ktap.ExitFail || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d (want %d), stderr:\n%s", c.name, code, ktap.ExitFail, errs)
		}
	}
}
