// SPDX-License-Identifier: GPL-2.0

// Package childproc starts a child process with less than its parent has:
// capabilities dropped from its bounding set, one CPU, or only root of a
// user namespace of its own. Tests use it to run a program as it would
// run without a privilege, or on one CPU, without changing the test
// process itself.
package childproc

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Limits say what the child goes without.
type Limits struct {
	Drop   []uintptr // capabilities dropped from the bounding and inheritable sets
	OneCPU bool      // pinned to the first CPU the parent may use
	UserNS bool      // in a new user and network namespace, as unshare -Urn
}

// UserNamespaces says why this kernel makes no user namespaces, or "".
func UserNamespaces() string {
	b, err := os.ReadFile("/proc/sys/user/max_user_namespaces")
	switch {
	case err != nil:
		return err.Error()
	case strings.TrimSpace(string(b)) == "0":
		return "user.max_user_namespaces is 0"
	}
	return ""
}

// Start starts cmd from a thread of its own that first applies l: the
// bounding set and the affinity are per thread, and a child inherits its
// thread's. (Root's permitted set after exec is its bounding set, so a
// dropped capability is gone from the child.) The thread is never given
// back (LockOSThread without unlock): it ends with its goroutine.
func Start(cmd *exec.Cmd, l Limits) error {
	if l.UserNS {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	}
	if len(l.Drop) == 0 && !l.OneCPU {
		return cmd.Start()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := l.apply(); err != nil {
			errc <- err
			return
		}
		errc <- cmd.Start()
	}()
	return <-errc
}

func (l Limits) apply() error {
	if l.OneCPU {
		var set, one unix.CPUSet
		if err := unix.SchedGetaffinity(0, &set); err != nil {
			return fmt.Errorf("sched_getaffinity: %w", err)
		}
		for i := range 1024 {
			if set.IsSet(i) {
				one.Set(i)
				break
			}
		}
		if err := unix.SchedSetaffinity(0, &one); err != nil {
			return fmt.Errorf("sched_setaffinity: %w", err)
		}
	}
	if len(l.Drop) == 0 {
		return nil
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	for _, c := range l.Drop {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, c, 0, 0, 0); err != nil {
			return fmt.Errorf("PR_CAPBSET_DROP %d: %w", c, err)
		}
		data[c/32].Inheritable &^= 1 << (c % 32)
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}
