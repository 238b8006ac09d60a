// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/selftests/netns"
)

// A child process gets the network namespace of the thread that forks
// it: Linux keeps namespaces per task, and Go's os/exec clones the child
// from the calling thread (clone(CLONE_VFORK|CLONE_VM) on the goroutine's
// M). exec.Cmd has no netns field, so a client is started from a goroutine
// locked to a thread that has joined the namespace with setns(2).
//
// The child also gets PR_SET_PDEATHSIG(SIGKILL), which fires when the
// thread that forked it ends, not the process (the kernel tracks the
// parent thread). So the goroutine stays locked on that thread for the
// child's whole life, waiting for it, and only then returns, which makes
// the runtime retire the thread with its foreign namespace. If this
// program dies (SIGKILL included), the kernel kills the child.

// started is a child process running in a namespace.
type started struct {
	Cmd  *exec.Cmd
	done chan struct{} // closed once the child has exited and been waited for
	err  error         // cmd.Wait's result, valid once done is closed
}

// outputPipe gives cmd a stdout pipe that, unlike cmd.StdoutPipe, Wait
// does not close: the reader sees every line, up to EOF, even after the
// child has been waited for.
func outputPipe(cmd *exec.Cmd) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = w
	return r, nil
}

// closeWriteEnd closes the parent's copy of the child's stdout once the
// child has it, so that the reader gets EOF when the child exits.
func closeWriteEnd(cmd *exec.Cmd) {
	if w, ok := cmd.Stdout.(*os.File); ok {
		w.Close()
	}
}

// startIn starts cmd in ns (the current namespace when ns is nil), with
// extra clone flags (e.g. CLONE_NEWNS|CLONE_NEWPID), and returns once it
// runs or failed to start.
func startIn(ns *netns.NS, cmd *exec.Cmd, cloneflags uintptr) (*started, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Cloneflags |= cloneflags
	p := &started{Cmd: cmd, done: make(chan struct{})}
	startErr := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		if ns != nil {
			fd := ns.FD()
			if fd < 0 {
				startErr <- fmt.Errorf("netns %s: closed", ns.Name)
				return
			}
			if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
				startErr <- fmt.Errorf("setns into netns %s: %w", ns.Name, err)
				return
			}
		}
		err := cmd.Start()
		closeWriteEnd(cmd)
		if err != nil {
			startErr <- err
			return
		}
		startErr <- nil
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := <-startErr; err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	return p, nil
}

// Exited reports whether the child has exited.
func (p *started) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop ends the child with SIGTERM, or SIGKILL if it has not exited 5 s
// later, and waits for it.
func (p *started) Stop() {
	p.Kill(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		p.Kill(syscall.SIGKILL)
		<-p.done
	}
}

// Kill sends sig to the child's process group (startIn makes the child
// a group leader) and the child itself.
func (p *started) Kill(sig syscall.Signal) {
	if p.Exited() {
		return
	}
	pid := p.Cmd.Process.Pid
	unix.Kill(-pid, sig)
	unix.Kill(pid, sig)
}
