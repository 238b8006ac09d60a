// SPDX-License-Identifier: GPL-2.0

package main

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"nlmcast/selftests/mcswitch"
)

// flipSwitch writes 1, 0, 1, ... to net.core.netlink_route_mc_index as
// fast as the kernel takes it until ctx ends, reading each value back, on
// one thread in the initial namespace (the only one with the file),
// pinned to cpu, which no sender uses: the flips then land while the
// senders' broadcasts run, not between them. It leaves the switch at 0
// and counts the verified writes in writes.
// pwrite at offset 0: with sysctl_writes_strict, a write at a later file
// position is ignored, so a plain write loop on one open file would only
// change the value once.
func flipSwitch(ctx context.Context, sw *mcswitch.Switch, cpu int, writes *atomic.Int64) error {
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
		v := byte('1')
		for {
			stop := ctx.Err() != nil
			if stop {
				v = '0'
			}
			if _, err := unix.Pwrite(fd, []byte{v}, 0); err != nil {
				return fmt.Errorf("write %c to %s (after %d writes): %w", v, mcswitch.Path, writes.Load(), err)
			}
			n, err := unix.Pread(fd, buf, 0)
			if err != nil {
				return fmt.Errorf("read %s: %w", mcswitch.Path, err)
			}
			if got := strings.TrimSpace(string(buf[:n])); got != string(v) {
				return fmt.Errorf("%s reads %q after writing %c (write %d)", mcswitch.Path, got, v, writes.Load()+1)
			}
			writes.Add(1)
			if stop {
				return nil
			}
			v = '0' + '1' - v
		}
	})
}
