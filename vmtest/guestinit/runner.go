// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/ktap"
	"nlmcast/selftests/netns"
	"nlmcast/vmtest/internal/protocol"
)

const (
	// defaultKillGrace is how long a timed-out program gets after each
	// SIGTERM before the next signal.
	defaultKillGrace = 2 * time.Second
	// outputDrainTimeout bounds the wait for a program's output once it has
	// exited; only a leftover process in another process group holding the
	// pipe could make it matter.
	outputDrainTimeout = 2 * time.Second
)

// runner runs test programs one after another and writes kselftest-runner
// TAP for them.
type runner struct {
	tap       io.Writer           // each line is written with a single Write
	args      []string            // passed to every program
	progArgs  map[string][]string // passed to one program, after args
	netns     bool                // each program in a network namespace of its own
	timeout   time.Duration
	killGrace time.Duration
	leaks     leakWatch // nil where the kernel has no leak detector
	// settle waits after each program for its network namespaces'
	// teardown; nil where the kernel has no limit to wait with.
	settle interface {
		wait() (settled bool, took time.Duration, err error)
	}
}

// result is how one program ended.
type result struct {
	status   int // exit status, or 128+signal when killed, as a shell reports it
	timedOut bool
}

// runAll prints the TAP plan, runs every program and returns the overall
// status: fail if any program failed, skip if all skipped, else pass.
func (r *runner) runAll(programs []string) int {
	r.println("TAP version 13")
	r.println(fmt.Sprintf("1..%d", len(programs)))
	results := make([]result, 0, len(programs))
	for i, path := range programs {
		name := filepath.Base(path)
		r.println(protocol.ProgramHeader + name)
		watching := r.startLeakWatch(name)
		res := r.runOne(path)
		ended := time.Now()
		r.println(resultLine(i+1, name, res, r.timeout))
		r.settleNamespaces(name)
		if watching {
			r.reportLeaks(name, ended)
		}
		results = append(results, res)
	}
	return overallStatus(results)
}

// settleNamespaces waits until the kernel has torn down the program's
// network namespaces; one still there at the timeout fails the run on the
// host.
func (r *runner) settleNamespaces(name string) {
	if r.settle == nil {
		return
	}
	settled, took, err := r.settle.wait()
	switch {
	case err != nil:
		r.println(fmt.Sprintf("%sno wait for %s's network namespaces: %v", protocol.MarkerPrefix, name, err))
	case !settled:
		r.println(protocol.NetnsLeftLine(name, took))
	}
}

// startLeakWatch has the leak detector forget what it suspected before
// the program, so that what it reports after is the program's.
func (r *runner) startLeakWatch(name string) bool {
	if r.leaks == nil {
		return false
	}
	if err := r.leaks.before(); err != nil {
		r.println(fmt.Sprintf("%sno leak check for %s: %v", protocol.MarkerPrefix, name, err))
		return false
	}
	return true
}

// reportLeaks tells the host what the leak detector suspects after the
// program: the host fails the run on a suspect.
func (r *runner) reportLeaks(name string, ended time.Time) {
	start := time.Now()
	n, err := r.leaks.after(ended, func(step string) {
		r.println(fmt.Sprintf("%skmemleak %s after %s", protocol.MarkerPrefix, step, name))
	})
	if err != nil {
		r.println(fmt.Sprintf("%sno leak check for %s: %v", protocol.MarkerPrefix, name, err))
		return
	}
	r.println(protocol.KmemleakLine(name, n, time.Since(start)))
}

func (r *runner) println(line string) {
	io.WriteString(r.tap, line+"\n")
}

// runOne runs a program with its stdout and stderr merged into one pipe, so
// its lines keep their order, and copies them to the TAP indented by "# ".
func (r *runner) runOne(path string) result {
	name := filepath.Base(path)
	out, in, err := os.Pipe()
	if err != nil {
		r.println(fmt.Sprintf("# cannot create output pipe: %v", err))
		return result{status: 126}
	}
	cmd := exec.Command(path, append(slices.Clone(r.args), r.progArgs[name]...)...)
	cmd.Dir = filepath.Dir(path) // as the kselftest runner does
	cmd.Stdout, cmd.Stderr = in, in
	// Its own process group lets a timeout reach the helpers it forked.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = r.start(cmd, name)
	in.Close()
	if err != nil {
		out.Close()
		r.println(fmt.Sprintf("# cannot run: %v", err))
		return result{status: 126}
	}

	copied := make(chan struct{})
	go func() {
		defer close(copied)
		r.copyIndented(out)
	}()
	timedOut := r.wait(cmd)
	// Helpers left behind would hold the pipe open and run on into the next
	// program's test.
	_ = unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
	_ = out.SetReadDeadline(time.Now().Add(outputDrainTimeout))
	<-copied
	out.Close()
	return result{status: shellStatus(cmd.ProcessState), timedOut: timedOut}
}

// start starts cmd, in a fresh network namespace with lo up when the host
// asked for one (run_kselftest.sh -n). A process is created in the network
// namespace of the thread that forks it, so the fork happens on a thread
// that joined the namespace; the program keeps the namespace alive, and it
// dies with the program.
func (r *runner) start(cmd *exec.Cmd, name string) error {
	if !r.netns {
		return cmd.Start()
	}
	ns, err := netns.New(name)
	if err != nil {
		return err
	}
	defer ns.Close()
	if err := bringLoopbackUp(ns); err != nil {
		return err
	}
	return ns.Do(cmd.Start)
}

// copyIndented copies lines from out to the TAP with a "# " prefix, ending an
// unterminated last line so the result line starts on its own.
func (r *runner) copyIndented(out io.Reader) {
	br := bufio.NewReader(out)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			r.println("# " + strings.TrimSuffix(line, "\n"))
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			r.println("# [output cut off: a leftover process kept it open]")
		}
		if err != nil {
			return
		}
	}
}

// wait waits for cmd to exit. Past the timeout it sends SIGTERM, SIGTERM
// again and then SIGKILL to the program's process group, killGrace apart.
func (r *runner) wait(cmd *exec.Cmd) (timedOut bool) {
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // the status is read from cmd.ProcessState
		close(exited)
	}()
	deadline := time.NewTimer(r.timeout)
	defer deadline.Stop()
	select {
	case <-exited:
		return false
	case <-deadline.C:
	}
	for _, sig := range []unix.Signal{unix.SIGTERM, unix.SIGTERM, unix.SIGKILL} {
		_ = unix.Kill(-cmd.Process.Pid, sig)
		select {
		case <-exited:
			return true
		case <-time.After(r.killGrace):
		}
	}
	<-exited
	return true
}

// shellStatus reports a status as a shell's $? would.
func shellStatus(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// resultLine is the kselftest runner's TAP line for one program.
func resultLine(n int, name string, res result, timeout time.Duration) string {
	desc := fmt.Sprintf("%d selftests: %s: %s", n, protocol.SuiteName, name)
	switch {
	case res.timedOut:
		return fmt.Sprintf("not ok %s # TIMEOUT %d seconds", desc, int(timeout/time.Second))
	case res.status == ktap.ExitPass:
		return "ok " + desc
	case res.status == ktap.ExitSkip:
		return "ok " + desc + " # SKIP"
	default:
		return fmt.Sprintf("not ok %s # exit=%d", desc, res.status)
	}
}

// overallStatus folds the programs' results into the init's exit status.
func overallStatus(results []result) int {
	if len(results) == 0 {
		return ktap.ExitFail
	}
	skipped := 0
	for _, res := range results {
		switch {
		case res.timedOut:
			return ktap.ExitFail
		case res.status == ktap.ExitSkip:
			skipped++
		case res.status != ktap.ExitPass:
			return ktap.ExitFail
		}
	}
	if skipped == len(results) {
		return ktap.ExitSkip
	}
	return ktap.ExitPass
}
