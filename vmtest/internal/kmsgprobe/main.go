// SPDX-License-Identifier: GPL-2.0

// Command kmsgprobe is a guest program for vmtest's own end-to-end tests,
// never shipped: it prints passing TAP while doing, in the guest, what
// vmtest's kernel-health and -netns checks must catch. The host run must
// turn red for -mode warn and -mode taint, and stay green for -mode clean.
//
//	-mode warn   write a WARNING-looking line to /dev/kmsg
//	-mode taint  set taint bit 9 (W) through /proc/sys/kernel/tainted
//	-mode clean  nothing (the control)
//	-mode netns  pass only when started in a network namespace other
//	             than pid 1's
//
// In warn, taint and clean mode it also checks that a kmsg.Watcher opened
// at its start sees exactly what it did, on the guest's real /dev/kmsg.
//
// It writes to the kernel log and sets taint: run it only in a VM.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"nlmcast/ktap"
	"nlmcast/selftests/kmsg"
)

// FakeWarning is the line -mode warn logs, in the format of a 6.1 WARN().
const FakeWarning = "WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x0/0x10"

// taintWarn is TAINT_WARN, the bit a WARN() sets.
const taintWarn = 1 << 9

func main() {
	mode := flag.String("mode", "", "warn, taint, clean or netns")
	flag.Parse()
	fmt.Println("TAP version 13")
	fmt.Println("1..1")
	var err error
	switch *mode {
	case "warn", "taint", "clean":
		err = watched(*mode)
	case "netns":
		err = ownNetns()
	default:
		err = fmt.Errorf("unknown -mode %q", *mode)
	}
	if err != nil {
		fmt.Printf("not ok 1 %s # %v\n", *mode, err)
		os.Exit(ktap.ExitFail)
	}
	fmt.Printf("ok 1 %s\n", *mode)
	os.Exit(ktap.ExitPass)
}

// watched does what mode says and checks that a Watcher reports exactly it.
func watched(mode string) error {
	w, err := kmsg.Open("kmsgprobe")
	if err != nil {
		return err
	}
	defer w.Close()
	var want string
	switch mode {
	case "warn":
		want = FakeWarning
		err = writeFile("/dev/kmsg", FakeWarning+"\n")
	case "taint":
		want = "taint: " + kmsg.BitName(9)
		err = writeFile(kmsg.TaintedPath, fmt.Sprint(taintWarn))
	}
	if err != nil {
		return err
	}
	// Settle: the one-line WARNING has no end marker; it ends when the
	// log goes quiet.
	got := w.Settle()
	if w.Err() != nil {
		return w.Err()
	}
	var lines []string
	for _, r := range got {
		lines = append(lines, r.String())
		fmt.Printf("# the watcher saw: %s\n", r)
	}
	if want == "" && len(got) == 0 || len(got) == 1 && got[0].Lines[0] == want {
		return nil
	}
	return fmt.Errorf("the watcher saw %q, want %q", strings.Join(lines, " | "), want)
}

func writeFile(path, data string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// ownNetns checks that the program's network namespace is not pid 1's.
func ownNetns() error {
	var self, init unix.Stat_t
	if err := unix.Stat("/proc/self/ns/net", &self); err != nil {
		return err
	}
	if err := unix.Stat("/proc/1/ns/net", &init); err != nil {
		return err
	}
	fmt.Printf("# netns inode: self %d, pid 1 %d\n", self.Ino, init.Ino)
	if self.Dev == init.Dev && self.Ino == init.Ino {
		return fmt.Errorf("started in pid 1's network namespace")
	}
	return nil
}
