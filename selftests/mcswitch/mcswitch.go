// SPDX-License-Identifier: GPL-2.0

// Package mcswitch reads and writes net.core.netlink_route_mc_index, the
// switch of the "optional per-netns ROUTE multicast index" series, from a
// thread in the initial network namespace: the only namespace where the
// file exists (the patch registers it for init_net alone), and the switch
// applies to every namespace at once.
//
// The switch is one value for the whole machine, so every program that
// changes it takes an exclusive flock on its file first (Lock): copies of
// the suites running at once then take turns instead of flipping it under
// each other.
package mcswitch

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"nlmcast/selftests/netns"
)

// Sysctl is the switch's name under /proc/sys.
const Sysctl = "net/core/netlink_route_mc_index"

// Path is the switch's file, as a thread in the initial namespace sees it.
// /proc/sys/net follows the reading thread's namespace, so every access
// goes through Switch's initial namespace.
const Path = "/proc/sys/" + Sysctl

// NotSupported is the SKIP reason on a kernel without the switch (or
// without CONFIG_SYSCTL).
const NotSupported = "net.core.netlink_route_mc_index not supported"

// Switch is the switch, reached through the initial namespace.
type Switch struct {
	initial *netns.NS
	lockFD  int
}

// Probe returns the switch, or nil and the SKIP reason when it cannot be
// reached: a kernel without the feature, or no way into the initial
// namespace. err is set only for unexpected errors.
func Probe() (sw *Switch, skip string, err error) {
	initial, err := netns.Initial()
	if err != nil {
		return nil, "net.core.netlink_route_mc_index cannot be reached: " + err.Error(), nil
	}
	err = initial.Do(func() error {
		_, err := os.Stat(Path)
		return err
	})
	switch {
	case errors.Is(err, os.ErrNotExist):
		initial.Close()
		return nil, NotSupported, nil
	case err != nil:
		initial.Close()
		return nil, "", fmt.Errorf("stat %s in the initial netns: %w", Path, err)
	}
	return &Switch{initial: initial, lockFD: -1}, "", nil
}

// Initial is the initial namespace the switch is reached through.
func (sw *Switch) Initial() *netns.NS { return sw.initial }

// Close drops the lock, if held, and the namespace handle.
func (sw *Switch) Close() {
	sw.Unlock()
	sw.initial.Close()
}

// Raw returns the file's content as the kernel prints it ("0\n").
func (sw *Switch) Raw() (string, error) { return sw.initial.ReadSysctlRaw(Sysctl) }

// Read returns the value without the newline.
func (sw *Switch) Read() (string, error) { return sw.initial.ReadSysctl(Sysctl) }

// Write writes s as one write(2), as `echo -n s >` would.
func (sw *Switch) Write(s string) error { return sw.initial.WriteSysctl(Sysctl, s) }

// Set writes v and checks that the switch reads back v.
func (sw *Switch) Set(v string) error {
	if err := sw.Write(v); err != nil {
		return fmt.Errorf("write %q to %s in the initial netns: %w", v, Path, err)
	}
	got, err := sw.Read()
	if err != nil {
		return fmt.Errorf("read %s in the initial netns: %w", Path, err)
	}
	if got != v {
		return fmt.Errorf("%s reads %q after writing %q", Path, got, v)
	}
	return nil
}

// Save reads the value and returns it with restore, which writes it back
// if the switch holds something else by then (also when it cannot be
// read) and returns what it found there, or "" if nothing had to change.
func (sw *Switch) Save() (saved string, restore func() (was string, err error), err error) {
	saved, err = sw.Read()
	if err != nil {
		return "", nil, fmt.Errorf("save %s: %w", Path, err)
	}
	return saved, func() (string, error) {
		now, err := sw.Read()
		if err == nil && now == saved {
			return "", nil
		}
		if err != nil {
			now = "unreadable"
		}
		if err := sw.Write(saved); err != nil {
			return now, fmt.Errorf("restore %s to %s: %w", Path, saved, err)
		}
		return now, nil
	}, nil
}

// Lock takes an exclusive flock on the switch's file, waiting for any
// other program holding it to finish. The lock goes with Unlock or Close,
// or with the process. A kernel without CONFIG_FILE_LOCKING answers
// ENOSYS (errors.Is(err, unix.ENOSYS)); the switch is still usable then.
func (sw *Switch) Lock() error {
	if sw.lockFD >= 0 {
		return nil
	}
	var fd int
	err := sw.initial.Do(func() error {
		var err error
		fd, err = unix.Open(Path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		for {
			err = unix.Flock(fd, unix.LOCK_EX)
			if err != unix.EINTR {
				break
			}
		}
		if err != nil {
			unix.Close(fd)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("flock %s: %w", Path, err)
	}
	sw.lockFD = fd
	return nil
}

// Unlock drops the lock taken by Lock.
func (sw *Switch) Unlock() {
	if sw.lockFD >= 0 {
		unix.Close(sw.lockFD)
		sw.lockFD = -1
	}
}

// Hold is what a program that changes the switch does first: it takes
// the lock (reporting through log when locking is unsupported), saves the
// value, and returns the restore function that writes the saved value
// back if it changed, then drops the lock. Call restore on every way out.
// On a kernel without the switch it returns sw == nil and the SKIP reason.
func Hold(log func(format string, args ...any)) (sw *Switch, restore func(), skip string, err error) {
	sw, skip, err = Probe()
	if err != nil || sw == nil {
		return nil, nil, skip, err
	}
	switch err := sw.Lock(); {
	case errors.Is(err, unix.ENOSYS):
		log("%v: copies of these programs running at once would disturb each other", err)
	case err != nil:
		sw.Close()
		return nil, nil, "", err
	}
	saved, put, err := sw.Save()
	if err != nil {
		sw.Close()
		return nil, nil, "", err
	}
	restore = func() {
		defer sw.Close()
		switch was, err := put(); {
		case err != nil:
			log("could not restore netlink_route_mc_index=%s: %v", saved, err)
		case was != "":
			log("restored netlink_route_mc_index=%s (it was %s)", saved, was)
		}
	}
	return sw, restore, "", nil
}
