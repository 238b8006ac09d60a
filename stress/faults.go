// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/selftests/faultlock"
)

// The fault modes make the kernel's allocations of socket buffers fail in
// the senders' threads only, with failslab (CONFIG_FAILSLAB and
// CONFIG_FAULT_INJECTION_DEBUG_FS):
//
//   - task-filter: only threads whose /proc/<tid>/make-it-fail is 1 (the
//     senders mark their own thread before anything is injected);
//   - cache-filter: only caches marked failslab, here skbuff_head_cache,
//     the head of every sk_buff. So what fails is what the series must
//     handle: a clone in do_one_broadcast() (the receiver is overrun), an
//     nlmsg_new() before the walk (netlink_set_err() tells the sender's
//     namespace), an ACK (the sender loses it) and a sendmsg (the sender
//     sends again); never the Go runtime's own mmap or clone, which would
//     kill the program, nor the requests' other allocations;
//   - ignore-gfp-wait off: notifications are cloned with GFP_KERNEL;
//   - verbose 0: no stack trace logged for every failure;
//   - times counts down from a known value: what it lost is the number of
//     failures injected.
//
// On 6.1 a cache's failslab mark is read-only in sysfs: it is set at boot
// with slub_debug=A,skbuff_head_cache. Every knob is saved first and put
// back on every way out.
const (
	threadMark     = "/proc/thread-self/make-it-fail"
	debugfs        = "/sys/kernel/debug"
	failslabDir    = debugfs + "/failslab"
	skbCacheMark   = "/sys/kernel/slab/skbuff_head_cache/failslab"
	kmemleakFile   = debugfs + "/kmemleak"
	failslabBoot   = "slub_debug=A,skbuff_head_cache"
	injectionTimes = 1_000_000_000
)

// injector is what a fault mode needs of the injection: the senders mark
// their threads, then failures start, and they stop before the senders do.
type injector interface {
	markThread() error
	start(percent int) error
	stop() error
}

// failslab is the injection, set up for a fault mode.
type failslab struct {
	dir  string // failslab's debugfs directory (failslabDir)
	mark string // the calling thread's mark (threadMark)
	// write writes a knob (os.WriteFile unless a test says otherwise).
	write   func(name string, data []byte) error
	saved   map[string]string // knob -> value before
	mounted bool              // debugfs was mounted here
	unlock  func()            // drops faultlock's lock, once the knobs are back
	// unlocked says why faultlock took no lock (a kernel without file
	// locks), or is "".
	unlocked string
}

// lockWait is how long a fault mode waits for another program that holds
// fault injection's settings (the semantics case that uses fail-nth takes
// a few seconds).
const lockWait = 60 * time.Second

// openInjection opens the fault modes' injection; a test replaces it.
var openInjection = openFailslab

// failslabKnobs are the knobs set, in the order they are set.
var failslabKnobs = []string{"probability", "interval", "times", "space", "verbose", "task-filter", "cache-filter", "ignore-gfp-wait"}

// openFailslab prepares the injection with probability 0. skip says why
// it cannot be done here (the kernel lacks it); err is anything else.
func openFailslab() (f *failslab, skip string, err error) {
	f = &failslab{mark: threadMark, saved: map[string]string{}}
	// Without CONFIG_FAULT_INJECTION a thread cannot be marked: nothing
	// to mount debugfs for.
	if _, err := os.Stat(threadMark); err != nil {
		return nil, fmt.Sprintf("no %s (%v): the kernel lacks CONFIG_FAULT_INJECTION and CONFIG_FAILSLAB", threadMark, err), nil
	}
	unlock, unlocked, err := faultlock.Acquire("netlink_mcast_stress", lockWait)
	f.unlocked = unlocked
	if errors.Is(err, faultlock.ErrBusy) {
		return nil, fmt.Sprintf("%v: two programs changing failslab's global settings at once would undo each other's", err), nil
	} else if err != nil {
		return nil, "", err
	}
	f.unlock = unlock
	if _, err := os.Stat(failslabDir); errors.Is(err, os.ErrNotExist) {
		if mounted, err := faultlock.DebugfsMounted(debugfs); err != nil {
			f.close()
			return nil, "", err
		} else if !mounted {
			if err := unix.Mount("debugfs", debugfs, "debugfs", 0, ""); err != nil {
				f.close()
				return nil, fmt.Sprintf("debugfs cannot be mounted on %s (%v): failslab's controls are there", debugfs, err), nil
			}
			f.mounted = true
		}
	}
	if _, err := os.Stat(failslabDir); err != nil {
		f.close()
		return nil, fmt.Sprintf("no %s (%v): the kernel lacks CONFIG_FAILSLAB or CONFIG_FAULT_INJECTION_DEBUG_FS", failslabDir, err), nil
	}
	if skip := markSkbCache(); skip != "" {
		f.close()
		return nil, skip, nil
	}
	if err := f.setUp(failslabDir); err != nil {
		return nil, "", err
	}
	return f, "", nil
}

// setUp saves every knob in dir and sets it for the fault modes, with
// probability 0; on an error it puts back what it saved and closes f.
func (f *failslab) setUp(dir string) error {
	f.dir = dir
	for _, k := range failslabKnobs {
		v, err := f.readKnob(k)
		if err != nil {
			f.close()
			return err
		}
		f.saved[k] = v
	}
	for _, kv := range [][2]string{
		{"probability", "0"}, {"interval", "1"}, {"times", strconv.Itoa(injectionTimes)}, {"space", "0"},
		{"verbose", "0"}, {"task-filter", "Y"}, {"cache-filter", "Y"}, {"ignore-gfp-wait", "N"},
	} {
		if err := f.writeKnob(kv[0], kv[1]); err != nil {
			f.close()
			return err
		}
	}
	return nil
}

// markSkbCache makes sure skbuff_head_cache is the one cache failures are
// injected into, and says why not when it cannot.
func markSkbCache() string {
	b, err := os.ReadFile(skbCacheMark)
	if err != nil {
		return fmt.Sprintf("no %s (%v): the kernel lacks SLUB's sysfs, which the injection's cache filter needs", skbCacheMark, err)
	}
	if strings.TrimSpace(string(b)) == "1" {
		return ""
	}
	if err := os.WriteFile(skbCacheMark, []byte("1"), 0); err == nil {
		return ""
	}
	return fmt.Sprintf("skbuff_head_cache is not marked for failslab, and this kernel marks caches only at boot: boot with %s", failslabBoot)
}

func (f *failslab) readKnob(k string) (string, error) {
	b, err := os.ReadFile(filepath.Join(f.dir, k))
	if err != nil {
		return "", fmt.Errorf("failslab: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func (f *failslab) writeKnob(k, v string) error {
	write := f.write
	if write == nil {
		write = func(name string, data []byte) error { return os.WriteFile(name, data, 0) }
	}
	if err := write(filepath.Join(f.dir, k), []byte(v)); err != nil {
		return fmt.Errorf("failslab: write %s to %s: %w", v, k, err)
	}
	return nil
}

// start injects failures into a percent of the marked threads'
// allocations from skbuff_head_cache.
func (f *failslab) start(percent int) error { return f.writeKnob("probability", strconv.Itoa(percent)) }

// stop ends the injection (through debugfs: a marked thread's own
// writes would fail too).
func (f *failslab) stop() error { return f.writeKnob("probability", "0") }

// injected returns how many failures have been injected since open.
func (f *failslab) injected() (int64, error) {
	v, err := f.readKnob("times")
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("failslab: times %q: %w", v, err)
	}
	return injectionTimes - n, nil
}

// savedSettings lists the knobs as they were before, in order.
func (f *failslab) savedSettings() string {
	var l []string
	for _, k := range failslabKnobs {
		if v, ok := f.saved[k]; ok {
			l = append(l, k+"="+v)
		}
	}
	return strings.Join(l, " ")
}

// close puts every knob back as it was (probability first), and unmounts
// debugfs if it was mounted here.
func (f *failslab) close() error {
	var first error
	for _, k := range failslabKnobs {
		if v, ok := f.saved[k]; ok {
			if err := f.writeKnob(k, v); err != nil && first == nil {
				first = err
			}
		}
	}
	if f.mounted {
		if err := unix.Unmount(debugfs, 0); err != nil && first == nil {
			first = fmt.Errorf("unmount %s: %w", debugfs, err)
		}
		f.mounted = false
	}
	if f.unlock != nil {
		f.unlock()
		f.unlock = nil
	}
	return first
}

// markThread marks the calling thread for the injection. Call it before
// any failure is injected: the write itself allocates.
func (f *failslab) markThread() error {
	if err := os.WriteFile(f.mark, []byte("1"), 0); err != nil {
		return fmt.Errorf("mark the sender's thread for failslab: %w", err)
	}
	return nil
}

// kmemleak is the kernel's leak detector, if it has one (debugfs mounted).
type kmemleak struct{}

// openKmemleak clears the suspects found so far, so that a later scan
// lists only what leaked since. ok is false where the kernel has none.
func openKmemleak() (k *kmemleak, ok bool, err error) {
	if _, err := os.Stat(kmemleakFile); err != nil {
		return nil, false, nil
	}
	if err := os.WriteFile(kmemleakFile, []byte("clear"), 0); err != nil {
		return nil, false, fmt.Errorf("kmemleak: clear: %w", err)
	}
	return &kmemleak{}, true, nil
}

// scan scans memory twice (an object is reported after it was found
// unreferenced by a scan, once it is old enough) and returns the suspects
// listed since the clear.
func (k *kmemleak) scan() ([]string, error) {
	for i := 0; i < 2; i++ {
		if err := os.WriteFile(kmemleakFile, []byte("scan"), 0); err != nil {
			return nil, fmt.Errorf("kmemleak: scan: %w", err)
		}
	}
	b, err := os.ReadFile(kmemleakFile)
	if err != nil {
		return nil, fmt.Errorf("kmemleak: %w", err)
	}
	var suspects []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "unreferenced object") {
			suspects = append(suspects, l)
		}
	}
	return suspects, nil
}
