// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"nlmcast/selftests"
)

// asleepDeadline bounds the wait for a thread to fall asleep in a system
// call: it takes milliseconds; only a failing case waits this long.
const asleepDeadline = 10 * time.Second

// awaitAsleep waits until /proc shows thread tid of this process asleep
// (state S) in system call sysno. A thread that sleeps there waits for
// something the case does next; whether it is already asleep is not
// something the kernel reports but through /proc, hence the polling.
// returned(block) must fail the case if the call has returned already:
// without blocking, or, when block is true (the thread is gone), waiting
// for the call's result. Where the kernel cannot show a thread's system
// call (no CONFIG_HAVE_ARCH_TRACEHOOK), the case SKIPs.
func awaitAsleep(t selftests.T, tid, sysno int, what string, returned func(block bool)) {
	t.Helper()
	dir := fmt.Sprintf("/proc/self/task/%d/", tid)
	end := time.Now().Add(asleepDeadline)
	for {
		returned(false)
		sc, err := os.ReadFile(dir + "syscall")
		if errors.Is(err, os.ErrNotExist) {
			// A thread that has gone (its call returned, the thread
			// was retired) has no directory at all.
			if _, derr := os.Stat(dir); errors.Is(derr, os.ErrNotExist) {
				returned(true)
			}
			t.Skipf("no %ssyscall (%v): the kernel cannot tell that a thread sleeps in a system call (CONFIG_HAVE_ARCH_TRACEHOOK)", dir, err)
		}
		st, serr := os.ReadFile(dir + "stat")
		if err == nil && serr == nil {
			f := strings.Fields(string(sc))
			in := len(f) > 0 && f[0] == strconv.Itoa(sysno)
			if i := strings.LastIndexByte(string(st), ')'); in && i > 0 && strings.HasPrefix(string(st[i+1:]), " S ") {
				return
			}
		}
		select {
		case <-selftests.Done(t):
			t.Fatalf("%s: stopped while waiting for thread %d to sleep", what, tid)
		default:
		}
		if time.Now().After(end) {
			t.Fatalf("%s: thread %d was not asleep in system call %d within %v (syscall %q, %v; stat %q, %v)",
				what, tid, sysno, asleepDeadline, strings.TrimSpace(string(sc)), err, strings.TrimSpace(string(st)), serr)
		}
		time.Sleep(time.Millisecond)
	}
}
