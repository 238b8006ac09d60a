// SPDX-License-Identifier: GPL-2.0

package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/selftests/mcswitch"
	"nlmcast/selftests/netns"
)

// refSysctl is the reference the switch's writes are timed against: a
// per-namespace u8 sysctl with the switch's handler (proc_dou8vec_minmax,
// 0..1) in 6.1 and 6.12, written in sender S0's namespace, where it
// changes nothing the run looks at.
const refSysctl = "net/ipv4/tcp_ecn_fallback"

// refWriteEvery says how often the writer writes the reference instead
// of the switch: every 4th write, so the switch still flips thousands of
// times a second.
const refWriteEvery = 4

// writeTimes is what the switch writer's writes (each read back) took,
// of the switch and of the reference sysctl, one sample a write. The
// writer alone fills it; it is read once the writer has returned. Their
// medians are compared: the host takes an emulated CPU away for
// milliseconds at a time, which a mean would count.
type writeTimes struct {
	switchN, refN int64
	switchSamples []time.Duration
	refSamples    []time.Duration
}

// maxWriteSamples bounds the samples kept of each kind (8 MiB): more than
// a mode of -max-duration 4m makes at a few thousand writes a second.
const maxWriteSamples = 1 << 20

func (w *writeTimes) addSwitch(d time.Duration) {
	w.switchN++
	if len(w.switchSamples) < maxWriteSamples {
		w.switchSamples = append(w.switchSamples, d)
	}
}

func (w *writeTimes) addRef(d time.Duration) {
	w.refN++
	if len(w.refSamples) < maxWriteSamples {
		w.refSamples = append(w.refSamples, d)
	}
}

// switchMedian and refMedian are the median times, in µs.
func (w *writeTimes) switchMedian() float64 { return medianUS(w.switchSamples) }
func (w *writeTimes) refMedian() float64    { return medianUS(w.refSamples) }

func medianUS(samples []time.Duration) float64 {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	return float64(s[len(s)/2].Nanoseconds()) / 1000
}

// openReference opens refSysctl in ns (a sysctl file belongs to the
// namespace it was opened in) and returns the fd and its value.
func openReference(ns *netns.NS) (fd int, value byte, err error) {
	err = ns.Do(func() error {
		path := "/proc/sys/" + refSysctl
		if fd, err = unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0); err != nil {
			return fmt.Errorf("open %s in netns %s: %w", path, ns.Name, err)
		}
		buf := make([]byte, 8)
		n, err := unix.Pread(fd, buf, 0)
		if err != nil || n == 0 {
			unix.Close(fd)
			return fmt.Errorf("read %s in netns %s: %d bytes, %v", path, ns.Name, n, err)
		}
		value = buf[0]
		return nil
	})
	return fd, value, err
}

// writeAndCheck writes v at offset 0 of fd and reads it back: pwrite at
// offset 0, since with sysctl_writes_strict a write at a later file
// position is ignored, so a plain write loop on one open file would only
// change the value once.
func writeAndCheck(fd int, what string, v byte, buf []byte) error {
	if _, err := unix.Pwrite(fd, []byte{v}, 0); err != nil {
		return fmt.Errorf("write %c to %s: %w", v, what, err)
	}
	n, err := unix.Pread(fd, buf, 0)
	if err != nil {
		return fmt.Errorf("read %s: %w", what, err)
	}
	if got := strings.TrimSpace(string(buf[:n])); got != string(v) {
		return fmt.Errorf("%s reads %q after writing %c", what, got, v)
	}
	return nil
}

// flipSwitch writes 1, 0, 1, ... to net.core.netlink_route_mc_index as
// fast as the kernel takes it until ctx ends, reading each value back, on
// one thread in the initial namespace (the only one with the file),
// pinned to cpu, which no sender uses: the flips then land while the
// senders' broadcasts run, not between them. It leaves the switch at 0
// and counts the verified writes in writes. Every refWriteEvery-th write
// goes to ref (refSysctl, opened with openReference, whose value was
// refValue), and times records how long both kinds took; ref is put back
// to refValue at the end.
func flipSwitch(ctx context.Context, sw *mcswitch.Switch, cpu int, writes *atomic.Int64, ref int, refValue byte, times *writeTimes) error {
	return sw.Initial().Do(func() error {
		var set unix.CPUSet
		set.Set(cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return fmt.Errorf("sched_setaffinity(CPU %d): %w", cpu, err)
		}
		fd, err := unix.Open(mcswitch.Path, unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open %s: %w", mcswitch.Path, err)
		}
		defer unix.Close(fd)
		buf := make([]byte, 8)
		v, rv := byte('1'), byte('0')+'1'-refValue
		defer func() { writeAndCheck(ref, refSysctl, refValue, buf) }()
		for i := 1; ; i++ {
			if i%refWriteEvery == 0 {
				start := time.Now()
				if err := writeAndCheck(ref, refSysctl+" in a sender's namespace", rv, buf); err != nil {
					return err
				}
				times.addRef(time.Since(start))
				rv = '0' + '1' - rv
				continue
			}
			stop := ctx.Err() != nil
			if stop {
				v = '0'
			}
			start := time.Now()
			if err := writeAndCheck(fd, mcswitch.Path, v, buf); err != nil {
				return fmt.Errorf("%w (after %d writes)", err, writes.Load())
			}
			times.addSwitch(time.Since(start))
			writes.Add(1)
			if stop {
				return nil
			}
			v = '0' + '1' - v
		}
	})
}
