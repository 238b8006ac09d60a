// SPDX-License-Identifier: GPL-2.0

// Command guestinit is the /init of the initramfs that vmtest boots: it
// mounts the pseudo filesystems, brings lo up, runs every program in /bin the
// way the kselftest runner does (each in a network namespace of its own when
// the host asks, as run_kselftest.sh -n), writes the TAP, the kernel's taint
// mask before and after the programs and a final status marker to the host
// over a dedicated channel (a serial port or virtio console that the host
// names on the kernel command line), and powers the machine off.
//
// PID 1 must never exit, or the kernel panics and the host learns nothing
// useful: every path, a Go panic included, ends in a power-off.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"nlmcast/ktap"
	"nlmcast/selftests/kmsg"
	"nlmcast/selftests/netns"
	"nlmcast/vmtest/internal/protocol"
)

// binDir holds the test programs the host packed into the initramfs.
const binDir = "/bin"

func main() {
	catchStraySignals()
	// Printed on the console before anything can fail, so the host knows the
	// kernel got as far as /init even if the TAP channel never opens.
	fmt.Println(protocol.InitStarted)

	g := &guest{diag: os.Stderr, status: ktap.ExitFail}
	defer g.powerOff()
	defer g.recoverPanic()
	g.run()
}

// guest tracks what the init has to report before it powers off.
type guest struct {
	diag         io.Writer // console until the TAP channel opens, then the channel
	tap          *os.File
	status       int
	exitReported bool
}

func (g *guest) run() {
	if err := mountFilesystems(); err != nil {
		g.fail(err)
		return
	}
	cmdline, err := os.ReadFile("/proc/cmdline")
	if err != nil {
		g.fail(fmt.Errorf("read the kernel command line: %w", err))
		return
	}
	tap, err := openTAPChannel(tapDevice(string(cmdline)))
	if err != nil {
		g.fail(err)
		return
	}
	g.tap, g.diag = tap, tap
	fmt.Fprintln(tap, protocol.InitStarted)

	initial, err := netns.Origin()
	if err != nil {
		g.fail(err)
		return
	}
	err = bringLoopbackUp(initial)
	initial.Close()
	if err != nil {
		g.fail(err)
		return
	}
	cfg, warnings := readConfig()
	for _, w := range warnings {
		g.logf("%v", w)
	}
	programs, err := listPrograms(binDir)
	if err != nil {
		g.fail(err)
		return
	}
	if len(programs) == 0 {
		g.fail(fmt.Errorf("no test programs in %s", binDir))
		return
	}
	// A taint bit the kernel sets while the programs run fails the run on
	// the host, even when every program passed.
	taintBefore, err := kmsg.ReadTaint()
	if err != nil {
		g.fail(err)
		return
	}
	r := &runner{tap: tap, args: cfg.args, progArgs: cfg.progArgs, netns: cfg.netns,
		timeout: cfg.timeout, killGrace: defaultKillGrace}
	// A kernel without kmemleak, most kernels, is no news: only a
	// detector that is there and cannot be used is said.
	if k, err := findKmemleak(); err != nil {
		g.logf("no leak check: %v", err)
	} else if k != nil {
		r.leaks = k
	}
	if s, err := kernelNetnsSettle(); err != nil {
		g.logf("no wait for the programs' network namespaces: %v", err)
	} else if s != nil {
		r.settle = s
	}
	g.status = r.runAll(programs)
	taintAfter, err := kmsg.ReadTaint()
	if err != nil {
		g.fail(err)
		return
	}
	fmt.Fprintln(tap, protocol.TaintLine(taintBefore, taintAfter))
	g.reportExit()
}

func (g *guest) logf(format string, args ...any) {
	fmt.Fprintf(g.diag, protocol.MarkerPrefix+format+"\n", args...)
}

func (g *guest) fail(err error) {
	g.logf("%v", err)
	g.status = ktap.ExitFail
	g.reportExit()
}

// reportExit writes the exit marker once; without the channel there is
// nowhere the host would look for it.
func (g *guest) reportExit() {
	if g.tap == nil || g.exitReported {
		return
	}
	g.exitReported = true
	fmt.Fprintln(g.tap, protocol.ExitLine(g.status))
}

// recoverPanic turns a Go panic in the init into a reported failure.
func (g *guest) recoverPanic() {
	p := recover()
	if p == nil {
		return
	}
	g.logf("init panicked: %v\n%s", p, debug.Stack())
	g.status = ktap.ExitFail
	g.exitReported = false // a panic after the marker still has to be reported
	g.reportExit()
}

func (g *guest) powerOff() {
	if g.tap != nil {
		if err := waitUntilTransmitted(g.tap); err != nil {
			fmt.Fprintf(os.Stderr, "%s%v\n", protocol.MarkerPrefix, err)
		}
	}
	powerOff()
}
