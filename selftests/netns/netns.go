// SPDX-License-Identifier: GPL-2.0

// Package netns creates anonymous network namespaces and runs code inside
// them, with nothing but raw syscalls.
//
// Namespaces belong to OS threads, not goroutines. Every function here that
// switches namespace does it on a fresh goroutine locked to its thread and
// never unlocks it: when the goroutine returns, the Go runtime terminates the
// thread instead of handing it back to the scheduler with a foreign namespace.
// The main thread, which the runtime never terminates, is kept for the main
// goroutine (init), so no such goroutine runs there.
// New threads are cloned from the runtime's template thread, which stays in
// the namespace the process started in.
package netns

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// NS is a handle on a network namespace: an open nsfs file. The namespace
// lives while the handle, a socket created in it, a device or a process
// refers to it. It is never mounted, so it cannot outlive the process.
type NS struct {
	Name string // for diagnostics only

	mu sync.Mutex
	fd int
}

// init keeps the main thread for the main goroutine. A goroutine that
// exits while locked to a thread ends that thread, except the main
// thread, which the runtime parks for good instead: a namespace thread
// scheduled there would keep its namespace (and whatever else it set on
// itself, a failslab mark) for the rest of the program. Seen: a stress
// mode's sender namespace outlived the mode, held by thread 1. Locked
// from init, the main thread runs the main goroutine only.
func init() { runtime.LockOSThread() }

// New creates an anonymous network namespace.
func New(name string) (*NS, error) {
	ns, err := NewUntold(name)
	if err == nil {
		if h := onCreate.Load(); h != nil {
			(*h)(ns)
		}
	}
	return ns, err
}

// NewUntold is New without telling OnCreate's function: for the
// namespaces of the one that watches the others (a teardown witness).
func NewUntold(name string) (*NS, error) {
	var fd int
	err := onLockedThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
		}
		var err error
		fd, err = openThreadNS()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("netns %s: %w", name, err)
	}
	return &NS{Name: name, fd: fd}, nil
}

// onCreate is told of every namespace New makes.
var onCreate atomic.Pointer[func(*NS)]

// OnCreate makes New call fn with every namespace it makes from now on
// (nil: no one), while the namespace is alive and before New returns it:
// a program uses it to wait, after its cases, until the kernel has torn
// down every namespace it made.
func OnCreate(fn func(*NS)) {
	if fn == nil {
		onCreate.Store(nil)
		return
	}
	onCreate.Store(&fn)
}

// Origin returns a handle on the namespace the process started in: the one
// of every thread that never called setns (in particular the template thread
// that new threads are cloned from).
func Origin() (*NS, error) {
	var fd int
	err := onLockedThread(func() error {
		var err error
		fd, err = openThreadNS()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("origin netns: %w", err)
	}
	return &NS{Name: "init", fd: fd}, nil
}

// Open returns a handle on the namespace an nsfs path refers to, such as
// /proc/1/ns/net.
func Open(name, path string) (*NS, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("netns %s: open %s: %w", name, path, err)
	}
	return &NS{Name: name, fd: fd}, nil
}

// FromFD wraps an nsfs file descriptor received from elsewhere (e.g. a helper
// process); the NS owns fd from then on.
func FromFD(name string, fd int) *NS { return &NS{Name: name, fd: fd} }

// FD returns the nsfs file descriptor, e.g. for NETNSA_FD or IFLA_NET_NS_FD.
// It stays valid until Close.
func (n *NS) FD() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.fd
}

// Do runs fn on a thread that has joined n. Inside fn, /proc/thread-self/net
// and /proc/sys/net refer to n, and new sockets are created in n.
func (n *NS) Do(fn func() error) error {
	fd := n.FD()
	if fd < 0 {
		return fmt.Errorf("netns %s: closed", n.Name)
	}
	return onLockedThread(func() error {
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("setns into netns %s: %w", n.Name, err)
		}
		return fn()
	})
}

// Close drops the handle. The namespace dies once nothing else refers to it.
// Close is idempotent.
func (n *NS) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fd < 0 {
		return nil
	}
	err := unix.Close(n.fd)
	n.fd = -1
	return err
}

// Same reports whether a and b are the same namespace (same nsfs inode).
func Same(a, b *NS) (bool, error) {
	var sa, sb unix.Stat_t
	if err := unix.Fstat(a.FD(), &sa); err != nil {
		return false, err
	}
	if err := unix.Fstat(b.FD(), &sb); err != nil {
		return false, err
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino, nil
}

// Initial returns a handle on the machine's initial network namespace, the
// only one that has init_net-only sysctls such as
// net.core.netlink_route_mc_index. It is pid 1's namespace: the one the
// program started in, or, when a runner started the program in a namespace
// of its own (run_kselftest.sh -n), the one /proc/1/ns/net names. The
// decision is made by namespace identity (the nsfs inode), since no sysctl
// is a reliable probe: net.core.rmem_max, init_net-only before 6.12, is
// visible in every namespace since.
func Initial() (*NS, error) {
	origin, err := Origin()
	if err != nil {
		return nil, err
	}
	pid1, err := Open("init", "/proc/1/ns/net")
	if err != nil {
		// Without access to pid 1's namespace (a pid namespace of
		// our own, or a restricted /proc), the program's own
		// namespace is the best guess; the caller finds out when
		// the init_net-only file is missing.
		return origin, nil
	}
	isSame, err := Same(origin, pid1)
	if err != nil {
		origin.Close()
		pid1.Close()
		return nil, fmt.Errorf("compare the program's netns with pid 1's: %w", err)
	}
	if isSame {
		pid1.Close()
		return origin, nil
	}
	origin.Close()
	return pid1, nil
}

// ReadSysctl reads /proc/sys/<name> (e.g. "net/ipv4/nexthop_compat_mode")
// as seen from inside n, without the trailing newline: /proc/sys/net
// follows the reading thread's namespace.
func (n *NS) ReadSysctl(name string) (string, error) {
	v, err := n.ReadSysctlRaw(name)
	return strings.TrimSpace(v), err
}

// ReadSysctlRaw is ReadSysctl with the file's content as the kernel
// prints it ("0\n").
func (n *NS) ReadSysctlRaw(name string) (string, error) {
	var b []byte
	err := n.Do(func() error {
		var err error
		b, err = os.ReadFile("/proc/sys/" + name)
		return err
	})
	return string(b), err
}

// WriteSysctl writes value to /proc/sys/<name> inside n in one write(2),
// as `echo -n value >` would.
func (n *NS) WriteSysctl(name, value string) error {
	return n.Do(func() error {
		f, err := os.OpenFile("/proc/sys/"+name, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = f.WriteString(value)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	})
}

// onLockedThread runs fn on a new goroutine locked to its OS thread and waits
// for it. The thread is never unlocked, so the runtime retires it when the
// goroutine ends: whatever fn did to the thread's namespaces or credentials
// dies with it. A panic in fn is carried back to the caller.
func onLockedThread(fn func() error) error {
	type outcome struct {
		err   error
		panic any
	}
	done := make(chan outcome, 1)
	go func() {
		runtime.LockOSThread()
		returned := false
		defer func() {
			switch p := recover(); {
			case p != nil:
				done <- outcome{panic: p}
			case !returned:
				// t.FailNow or t.Skip called inside fn: it must not
				// end this goroutine silently and leave the caller
				// waiting.
				done <- outcome{err: errors.New("runtime.Goexit on a namespace thread (t.Fatal inside Do?)")}
			}
		}()
		err := fn()
		returned = true
		done <- outcome{err: err}
	}()
	o := <-done
	if o.panic != nil {
		panic(o.panic)
	}
	return o.err
}

// OnThread runs fn on a thread of its own that is retired afterwards, so fn
// may change per-thread state such as capabilities (capset) without
// affecting any other goroutine.
func OnThread(fn func() error) error { return onLockedThread(fn) }

func openThreadNS() (int, error) {
	fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open /proc/thread-self/ns/net: %w", os.NewSyscallError("open", err))
	}
	return fd, nil
}

// ThreadsIn returns the ids of this program's threads that are in the
// network namespace whose nsfs inode is ino.
func ThreadsIn(ino uint64) []string {
	link := fmt.Sprintf("net:[%d]", ino)
	var threads []string
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, t := range tasks {
		if l, err := os.Readlink("/proc/self/task/" + t.Name() + "/ns/net"); err == nil && l == link {
			threads = append(threads, t.Name())
		}
	}
	return threads
}
