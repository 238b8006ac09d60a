// SPDX-License-Identifier: GPL-2.0

// Command healthprobe is a guest program for vmtest's end-to-end tests,
// never shipped: a selftests.Main suite whose cases make the kernel log a
// WARNING-looking line or set a taint bit, so that the tests can check that
// the runner fails exactly the case during which the report appeared, and
// fails the program when the report comes after the last case.
//
// The program's file name picks the variant: a name ending in "-after"
// logs the WARNING from the suite's teardown, after the last case; one
// ending in "-early" logs it as its first instruction, before Main opens
// the kernel log (so it must fail the first case); one ending in
// "-settle" logs it when the kernel tears down the namespace of a Settle
// case, long after the case returned (so it must fail that case, which
// the program waits for, and not the next);
// any other name runs the cases quiet, warns, taints and quiet_again.
//
// It writes to the kernel log and sets taint: run it only in a VM.
package main

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"nlmcast/selftests"
	"nlmcast/selftests/nsdeath"
)

// FakeWarning is the line logged, in the format of a 6.1 WARN().
const FakeWarning = "WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x0/0x10"

// taintUser is TAINT_USER ('U'), the bit user space may set.
const taintUser = "64"

func write(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func quiet(t selftests.T) {}

func warns(t selftests.T) {
	if err := write("/dev/kmsg", FakeWarning+"\n"); err != nil {
		t.Fatalf("%v", err)
	}
}

func taints(t selftests.T) {
	if err := write("/proc/sys/kernel/tainted", taintUser); err != nil {
		t.Fatalf("%v", err)
	}
}

func main() {
	s := selftests.Suite{Name: "healthprobe", Cases: []selftests.Case{
		{Name: "quiet", Run: quiet},
		{Name: "warns", Run: warns},
		{Name: "taints", Run: taints},
		{Name: "quiet_again", Run: quiet},
	}}
	switch name := filepath.Base(os.Args[0]); {
	case strings.HasSuffix(name, "-after"):
		s.Cases = []selftests.Case{{Name: "quiet", Run: quiet}}
		s.Setup = func(log func(string, ...any)) (func() error, error) {
			return func() error { return write("/dev/kmsg", FakeWarning+"\n") }, nil
		}
	case strings.HasSuffix(name, "-early"):
		if err := write("/dev/kmsg", FakeWarning+"\n"); err != nil {
			os.Exit(3)
		}
		s.Cases = []selftests.Case{{Name: "quiet", Run: quiet}, {Name: "quiet_again", Run: quiet}}
	case strings.HasSuffix(name, "-settle"):
		s.Cases = []selftests.Case{
			{Name: "tears_down", Settle: true, Run: func(t selftests.T) {
				s := selftests.NewNS(t, "S")
				err := nsdeath.OnTeardown(s.NS, 30*time.Second, func(err error) {
					if err == nil {
						err = write("/dev/kmsg", FakeWarning+"\n")
					}
					if err != nil {
						write("/dev/kmsg", "<3>healthprobe: "+err.Error()+"\n")
					}
				})
				if err != nil {
					t.Fatalf("%v", err)
				}
			}},
			{Name: "quiet_after", Run: quiet},
		}
	}
	os.Exit(selftests.Main(s))
}
