// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// netnsLimit is the initial user namespace's limit on the network
// namespaces each user may have (CONFIG_USER_NS's ucounts).
const netnsLimit = "/proc/sys/user/max_net_namespaces"

const (
	// netnsSettleTimeout bounds the wait for the kernel to finish tearing
	// down a program's network namespaces: a program waits for its cases'
	// own, so only a few are left at its exit, which an emulated debug
	// kernel tears down in seconds. One still there after this is held by
	// something (a leaked reference), not slow.
	netnsSettleTimeout = 120 * time.Second
	netnsSettlePoll    = 10 * time.Millisecond
)

// netnsSettle waits, after a program, until the kernel has finished
// tearing down every network namespace root made: the program's, and the
// one the init gave it (run_kselftest.sh -n). cleanup_net() calls
// dec_net_namespaces() after every pernet exit method and an
// rcu_barrier(), and the count it lowers is what inc_net_namespaces()
// holds against the limit: with the limit at 1, unshare(CLONE_NEWNET)
// fails with ENOSPC until root has no namespace left but the initial one
// (which is not counted). So the next program starts on a kernel that has
// run every exit path of the one before (a report from them is the
// earlier program's), with no namespace of another program alive: a
// kernel that gets the last namespace's teardown wrong (a protocol's table
// freed with the initial namespace's kernel socket still there) shows it
// to the next program. The namespace the last try makes goes with the
// thread that made it.
type netnsSettle struct {
	read    func() (string, error)
	write   func(string) error
	unshare func() error // unshare(CLONE_NEWNET) on a thread of its own
	now     func() time.Time
	sleep   func(time.Duration)
	timeout time.Duration
}

// kernelNetnsSettle returns the wait, or nil where the kernel has no such
// limit (no user namespaces or no sysctl).
func kernelNetnsSettle() (*netnsSettle, error) {
	if _, err := os.Stat(netnsLimit); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return &netnsSettle{
		read: func() (string, error) {
			b, err := os.ReadFile(netnsLimit)
			return strings.TrimSpace(string(b)), err
		},
		write:   func(v string) error { return os.WriteFile(netnsLimit, []byte(v), 0) },
		unshare: unshareNetOnce,
		now:     time.Now,
		sleep:   time.Sleep,
		timeout: netnsSettleTimeout,
	}, nil
}

// unshareNetOnce makes a network namespace on a thread that then ends, and
// with it the namespace's last reference.
func unshareNetOnce() error {
	errc := make(chan error, 1)
	go func() {
		// Never unlocked: the thread exits with the goroutine.
		runtime.LockOSThread()
		errc <- unix.Unshare(unix.CLONE_NEWNET)
	}()
	return <-errc
}

// wait returns once root has no network namespace but the initial one, or
// the timeout has passed (settled false); the limit is put back either way.
func (s *netnsSettle) wait() (settled bool, took time.Duration, err error) {
	old, err := s.read()
	if err != nil {
		return false, 0, fmt.Errorf("read %s: %w", netnsLimit, err)
	}
	if err := s.write("1"); err != nil {
		return false, 0, fmt.Errorf("write 1 to %s: %w", netnsLimit, err)
	}
	defer func() {
		if werr := s.write(old); werr != nil && err == nil {
			err = fmt.Errorf("put %s back to %s: %w", netnsLimit, old, werr)
		}
	}()
	start := s.now()
	for {
		uerr := s.unshare()
		took = s.now().Sub(start)
		switch {
		case uerr == nil:
			return true, took, nil
		case !errors.Is(uerr, unix.ENOSPC):
			return false, took, fmt.Errorf("unshare(CLONE_NEWNET) with %s at 1: %w", netnsLimit, uerr)
		case took >= s.timeout:
			return false, took, nil
		}
		s.sleep(netnsSettlePoll)
	}
}
