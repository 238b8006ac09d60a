// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// debugfsDir is where a kernel with CONFIG_DEBUG_FS has its mount point
// (an empty directory in sysfs); without it the directory is missing.
const debugfsDir = "/sys/kernel/debug"

// kmemleakMinAge is the age below which kmemleak never reports an object
// (MSECS_MIN_AGE in mm/kmemleak.c): an object leaked by a program's last
// step is only reported by a scan at least this long after it.
const kmemleakMinAge = 5 * time.Second

// leakWatch looks for memory the kernel leaked while a program ran.
type leakWatch interface {
	// before forgets the suspects found so far.
	before() error
	// after returns how many objects are suspected leaked since before,
	// given the time the program ended; it calls progress before each
	// long step (a scan takes tens of seconds on an emulated debug kernel).
	after(ended time.Time, progress func(step string)) (suspects int, err error)
}

// kmemleak is the kernel's leak detector (CONFIG_DEBUG_KMEMLEAK), used as
// netdev's CI uses it after each test: scan, let the youngest objects reach
// the minimum age, scan again (an object whose contents changed since the
// last scan is not reported, so a new leak needs two), list the suspects.
// debugfs is mounted only around each use, so the programs find the guest as
// it was without this watch.
type kmemleak struct {
	mount, unmount func() error // debugfs, on debugfsDir
	write          func(command string) error
	read           func() (string, error) // the suspects' listing
	now            func() time.Time
	sleep          func(time.Duration)
}

// kernelKmemleak is the kernel's detector, through debugfs.
func kernelKmemleak() *kmemleak {
	const file = debugfsDir + "/kmemleak"
	return &kmemleak{
		mount:   func() error { return unix.Mount("debugfs", debugfsDir, "debugfs", 0, "") },
		unmount: func() error { return unix.Unmount(debugfsDir, 0) },
		write:   func(c string) error { return os.WriteFile(file, []byte(c), 0) },
		read: func() (string, error) {
			b, err := os.ReadFile(file)
			return string(b), err
		},
		now:   time.Now,
		sleep: time.Sleep,
	}
}

// findKmemleak returns the kernel's leak detector, or nil where the kernel
// has none (no debugfs, no kmemleak). It has the detector print every new
// suspect on the console (kmemleak.verbose), where the host reads kernel
// reports with their allocation stacks.
func findKmemleak() (*kmemleak, error) {
	k := kernelKmemleak()
	var present bool
	err := k.withDebugfs(func() error {
		_, err := os.Stat(debugfsDir + "/kmemleak")
		present = err == nil
		return nil
	})
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENODEV):
		return nil, nil // no debugfs (CONFIG_DEBUG_FS)
	case err != nil:
		return nil, err
	case !present:
		return nil, nil // no kmemleak (CONFIG_DEBUG_KMEMLEAK)
	}
	const verbose = "/sys/module/kmemleak/parameters/verbose"
	if err := os.WriteFile(verbose, []byte("1"), 0); err != nil {
		return nil, fmt.Errorf("kmemleak: have it print its suspects on the console: %w", err)
	}
	return k, nil
}

// withDebugfs runs f with debugfs mounted.
func (k *kmemleak) withDebugfs(f func() error) error {
	if err := k.mount(); err != nil {
		return fmt.Errorf("mount debugfs on %s: %w", debugfsDir, err)
	}
	ferr := f()
	if err := k.unmount(); err != nil && ferr == nil {
		ferr = fmt.Errorf("unmount debugfs from %s: %w", debugfsDir, err)
	}
	return ferr
}

// command writes one of kmemleak's commands ("clear", "scan").
func (k *kmemleak) command(c string) error {
	if err := k.write(c); err != nil {
		return fmt.Errorf("kmemleak: %s: %w", c, err)
	}
	return nil
}

// before marks every suspect reported so far as seen: "clear" paints the
// reported objects gray, and a later listing shows only the new ones.
func (k *kmemleak) before() error {
	return k.withDebugfs(func() error { return k.command("clear") })
}

func (k *kmemleak) after(ended time.Time, progress func(step string)) (suspects int, err error) {
	err = k.withDebugfs(func() error {
		progress("scan 1 of 2")
		if err := k.command("scan"); err != nil {
			return err
		}
		if wait := ended.Add(kmemleakMinAge).Sub(k.now()); wait > 0 {
			k.sleep(wait)
		}
		progress("scan 2 of 2")
		if err := k.command("scan"); err != nil {
			return err
		}
		list, err := k.read()
		if err != nil {
			return fmt.Errorf("kmemleak: read the suspects: %w", err)
		}
		suspects = countSuspects(list)
		return nil
	})
	return suspects, err
}

// countSuspects counts the objects in kmemleak's listing: each starts with
// "unreferenced object 0x...".
func countSuspects(list string) int {
	n := 0
	for _, l := range strings.Split(list, "\n") {
		if strings.HasPrefix(l, "unreferenced object ") {
			n++
		}
	}
	return n
}
