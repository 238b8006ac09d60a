package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/netns"
)

// notSupported is the SKIP reason of every case on a kernel without the
// switch (or without CONFIG_SYSCTL).
const notSupported = "net.core.netlink_route_mc_index not supported"

// switchPath is the switch's file as a thread in the initial namespace sees
// it (selftests.InitialNS). /proc/sys/net follows the calling thread's namespace, so every access
// goes through initial.Do.
const switchPath = "/proc/sys/" + selftests.MCIndexSysctl

// mcSwitch is net.core.netlink_route_mc_index, read and written from a
// thread in the initial namespace: the only one where the file exists (the
// patch registers it for init_net alone).
type mcSwitch struct {
	initial *netns.NS
}

// probeSwitch returns the switch, or nil and the SKIP reason when it
// cannot be reached: a kernel without the feature (or without
// CONFIG_SYSCTL), or no way into the initial namespace.
func probeSwitch() (*mcSwitch, string, error) {
	initial, err := selftests.InitialNS()
	if err != nil {
		return nil, "net.core.netlink_route_mc_index cannot be reached: " + err.Error(), nil
	}
	err = initial.Do(func() error {
		_, err := os.Stat(switchPath)
		return err
	})
	switch {
	case errors.Is(err, os.ErrNotExist):
		initial.Close()
		return nil, notSupported, nil
	case err != nil:
		initial.Close()
		return nil, "", err
	}
	return &mcSwitch{initial: initial}, "", nil
}

func (sw *mcSwitch) close() { sw.initial.Close() }

// raw returns the file's content as the kernel prints it ("0\n").
func (sw *mcSwitch) raw() (string, error) {
	var b []byte
	err := sw.initial.Do(func() error {
		var err error
		b, err = os.ReadFile(switchPath)
		return err
	})
	return string(b), err
}

// read returns the value without the newline.
func (sw *mcSwitch) read() (string, error) {
	v, err := sw.raw()
	return strings.TrimSpace(v), err
}

// write writes s as one write(2), as `echo -n s >` would.
func (sw *mcSwitch) write(s string) error {
	return selftests.WriteSysctl(sw.initial, selftests.MCIndexSysctl, s)
}

// lock takes an exclusive flock on the switch's file, waiting for any
// other copy of this program to finish: the switch is one value for the
// whole system, and two copies flipping and restoring it at once would
// leave it wrong. The lock goes with fd when it is closed. A kernel
// without CONFIG_FILE_LOCKING answers ENOSYS.
func (sw *mcSwitch) lock() (fd int, err error) {
	err = sw.initial.Do(func() error {
		fd, err = unix.Open(switchPath, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		if err = unix.Flock(fd, unix.LOCK_EX); err != nil {
			unix.Close(fd)
		}
		return err
	})
	if err != nil {
		return -1, fmt.Errorf("flock %s: %w", switchPath, err)
	}
	return fd, nil
}

// setupSwitch is the suite's Setup: it waits for the switch to be free,
// saves its value, and returns the cleanup that puts the value back and
// lets the next copy run. selftests.Main runs that cleanup on every way
// out of the program (after the last case, after a case failed or
// panicked, after SIGTERM once the running case has ended), and every case
// that changes the switch also restores it itself when it ends. On a kernel
// without the switch there is nothing to save; each case then SKIPs.
func setupSwitch(log func(format string, args ...any)) (func(), error) {
	sw, _, err := probeSwitch()
	if err != nil || sw == nil {
		return nil, err
	}
	fd, err := sw.lock()
	switch {
	case errors.Is(err, unix.ENOSYS):
		log("%v: copies of this program running at once would disturb each other", err)
	case err != nil:
		sw.close()
		return nil, err
	}
	saved, err := sw.read()
	if err != nil {
		closeLock(fd)
		sw.close()
		return nil, fmt.Errorf("save %s: %w", switchPath, err)
	}
	return func() {
		defer sw.close()
		defer closeLock(fd)
		now, err := sw.read()
		if err == nil && now == saved {
			return
		}
		if err := sw.write(saved); err != nil {
			log("could not restore netlink_route_mc_index=%s: %v", saved, err)
			return
		}
		log("restored netlink_route_mc_index=%s (it was %s)", saved, now)
	}, nil
}

func closeLock(fd int) {
	if fd >= 0 {
		unix.Close(fd)
	}
}

// requireSwitch returns the switch, or ends the case as SKIP on a kernel
// without it.
func requireSwitch(t selftests.T) *mcSwitch {
	t.Helper()
	sw, skip, err := probeSwitch()
	if err != nil {
		t.Fatalf("%s: %v", switchPath, err)
	}
	if sw == nil {
		t.Skipf("%s", skip)
	}
	t.Cleanup(sw.close)
	return sw
}

// value returns the current value, failing the case if it cannot be read.
func (sw *mcSwitch) value(t selftests.T) string {
	t.Helper()
	v, err := sw.read()
	if err != nil {
		t.Fatalf("read %s in the initial netns: %v", switchPath, err)
	}
	return v
}

// restoreAtEnd remembers the current value and puts it back when the case
// ends, whichever way it ends.
func (sw *mcSwitch) restoreAtEnd(t selftests.T) {
	t.Helper()
	saved := sw.value(t)
	t.Cleanup(func() {
		if now, err := sw.read(); err == nil && now == saved {
			return
		}
		if err := sw.write(saved); err != nil {
			t.Errorf("restore %s to %s: %v", switchPath, saved, err)
		}
	})
}

// set writes v ("0" or "1") and checks that it reads back.
func (sw *mcSwitch) set(t selftests.T, v string) {
	t.Helper()
	if err := sw.write(v); err != nil {
		t.Fatalf("write %q to %s in the initial netns: %v", v, switchPath, err)
	}
	if got := sw.value(t); got != v {
		t.Fatalf("%s reads %q after writing %q", switchPath, got, v)
	}
}
