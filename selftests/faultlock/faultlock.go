// SPDX-License-Identifier: GPL-2.0

// Package faultlock serialises the programs that change fault injection's
// global settings (failslab's knobs in debugfs): the stress program's fault
// modes and the semantics case that makes a notification's allocation
// fail. Each saves the knobs, sets its own and puts them back when it
// ends; two of them at once (two copies of a program, or semantics and
// switch started together by run_kselftest.sh -n) would undo each other's
// settings halfway. The lock is an flock(2) on a file under /tmp, held
// for as long as the settings are changed; the kernel drops it when its
// holder exits, however it exits. Where the kernel has no file locks, a
// pid file next to it stands in.
package faultlock

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Path is the lock file.
var Path = "/tmp/netlink_mcast_fault_injection.lock"

// pollEvery is how often a busy lock is tried again: its holder's release
// is another process's, which nothing can wait on but the lock itself.
const pollEvery = 20 * time.Millisecond

// flock is flock(2); a test replaces it.
var flock = unix.Flock

// ErrBusy is returned when another holder kept the lock for the whole
// wait.
var ErrBusy = errors.New("fault injection's settings are in use by another program")

// Acquire takes the lock, waiting at most wait for another holder to
// release it, and writes who holds it (program, pid) into the file. On
// ErrBusy the error names the holder. release drops the lock. A kernel
// without file locks (CONFIG_FILE_LOCKING off, as in tiny test images)
// gets a pid file instead (pidLock); unlocked then says so, for the
// caller to print.
func Acquire(program string, wait time.Duration) (release func(), unlocked string, err error) {
	fd, err := unix.Open(Path, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, "", fmt.Errorf("open %s: %w", Path, err)
	}
	deadline := time.Now().Add(wait)
	for {
		err = flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if errors.Is(err, unix.ENOSYS) {
			unix.Close(fd)
			release, err := pidLock(program, deadline, wait)
			return release, fmt.Sprintf("flock %s: %v (the kernel lacks CONFIG_FILE_LOCKING): locked by the pid file %s instead", Path, unix.ENOSYS, pidPath()), err
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			unix.Close(fd)
			return nil, "", fmt.Errorf("flock %s: %w", Path, err)
		}
		if time.Now().After(deadline) {
			holder := readHolder(fd)
			unix.Close(fd)
			return nil, "", fmt.Errorf("%w (%s holds %s) after %v", ErrBusy, holder, Path, wait)
		}
		time.Sleep(pollEvery)
	}
	// Who holds it, for a program that finds it busy; best effort.
	me := fmt.Sprintf("%s[%d]\n", program, os.Getpid())
	if err := unix.Ftruncate(fd, 0); err == nil {
		unix.Pwrite(fd, []byte(me), 0)
	}
	return func() { unix.Close(fd) }, "", nil
}

func pidPath() string { return Path + ".pid" }

// pidLock is the lock without flock: a file created with O_EXCL that
// names its holder ("program pid"), removed on release. A file whose
// holder is no longer alive (killed with SIGKILL) is stale and taken
// over.
func pidLock(program string, deadline time.Time, wait time.Duration) (release func(), err error) {
	p := pidPath()
	me := fmt.Sprintf("%s %d\n", program, os.Getpid())
	for {
		fd, err := unix.Open(p, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
		if err == nil {
			_, werr := unix.Write(fd, []byte(me))
			unix.Close(fd)
			if werr != nil {
				os.Remove(p)
				return nil, fmt.Errorf("write %s: %w", p, werr)
			}
			return func() { os.Remove(p) }, nil
		}
		if !errors.Is(err, unix.EEXIST) {
			return nil, fmt.Errorf("create %s: %w", p, err)
		}
		b, _ := os.ReadFile(p)
		holder := strings.TrimSpace(string(b))
		if f := strings.Fields(holder); len(f) == 2 {
			if pid, err := strconv.Atoi(f[1]); err == nil && pid > 0 && unix.Kill(pid, 0) == unix.ESRCH {
				os.Remove(p) // its holder is gone
				continue
			}
		}
		if time.Now().After(deadline) {
			if holder == "" {
				holder = "a program"
			}
			return nil, fmt.Errorf("%w (%s holds %s) after %v", ErrBusy, holder, p, wait)
		}
		time.Sleep(pollEvery)
	}
}

func readHolder(fd int) string {
	b := make([]byte, 128)
	n, _ := unix.Pread(fd, b, 0)
	if h := strings.TrimSpace(string(b[:max(n, 0)])); h != "" {
		return h
	}
	return "a program"
}

// DebugfsMounted says whether debugfs is mounted on dir (in this mount
// namespace), where failslab's settings are.
func DebugfsMounted(dir string) (bool, error) {
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) > 2 && fields[1] == dir && fields[2] == "debugfs" {
			return true, nil
		}
	}
	return false, sc.Err()
}
