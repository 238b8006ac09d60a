// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/bench/internal/kmem"
	"nlmcast/selftests"
	"nlmcast/selftests/netns"
	"nlmcast/selftests/nsdeath"
)

// The memory scenes measure what the letter quotes instead of timing: the
// kernel memory one open subscribed NETLINK_ROUTE socket and one network
// namespace cost (the series adds two hlist_nodes to every netlink_sock and
// an hlist_head per namespace). They run with -scene memory (or by name),
// not by default.
const (
	memSockets unitKind = iota + 200
	memNetns
)

var memoryScenes = []Scene{
	{Name: "M1-route-socket", Kind: memSockets, N: 2000, CompatMode: -1,
		Desc: "kernel memory per open NETLINK_ROUTE socket bound to RTNLGRP_IPV4_ROUTE: in a namespace made beforehand " +
			"(the fd table grown beforehand too), read the slab counters (/proc/slabinfo, /proc/meminfo), open and bind N sockets, " +
			"read again, divide the change by N, per cache and in total; each reading waits until successive readings agree " +
			"(the kernel frees some objects after an RCU grace period). Exact on a kernel booted with slub_debug=F (no per-CPU slabs; " +
			"slab_nomerge too names every cache); otherwise every cache is shrunk (/sys/kernel/slab/*/shrink) before each reading, " +
			"good to some bytes per socket. One measurement per round, the sockets closed between rounds"},
	{Name: "M2-netns", Kind: memNetns, N: 500, CompatMode: -1,
		Desc: "kernel memory per network namespace: as M1, with N namespaces made by unshare(CLONE_NEWNET) and held " +
			"by an open nsfs file each (given no nsid while counted); between rounds they are closed and their teardown waited for"},
}

// Waiting for the counters to settle: the frees the kernel defers (RCU
// callbacks, namespace teardown by cleanup_net) are asynchronous, so a
// reading is taken when settleStable successive readings, settlePoll
// apart, agree: exactly where the counts are exact (slub_debug=F), and to
// within shrinkSlack bytes of objects in use where each reading shrinks
// the caches, which itself moves them: its sysfs files are freed after an
// RCU grace period, about +16 KiB of kmalloc-128 per reading and -50 KiB
// when a batch of them goes (seen on both images; with 16 KiB of slack an
// x86 P round never settled in 2 minutes). That is also about what a
// shrink-mode reading is good for: some tens of bytes per socket of 2000.
const (
	settlePoll     = 200 * time.Millisecond
	settleStable   = 3
	shrinkSlack    = 128 << 10
	settleDeadline = 120 * time.Second
)

// memory holds the memory records for the results directory.
var memory struct {
	mu      sync.Mutex
	records []kmem.Record
}

// runMemoryCase measures a memory scene, one record per round: U's
// rounds, or P0's and P1's (both modes keep the same structures, so they
// must agree).
func runMemoryCase(t selftests.T, sc Scene) {
	if reason := kmem.Available(); reason != "" {
		t.Skipf("%s", reason)
	}
	sw, _ := selftests.HeldSwitch()
	d := run.d
	var ns *netns.NS
	var witness *nsdeath.Witness
	var err error
	switch sc.Kind {
	case memSockets:
		if ns, err = netns.New("M"); err != nil {
			t.Fatalf("%v", err)
		}
		defer ns.Close()
	case memNetns:
		// Made before the first reading, so its own sockets and
		// namespace are in every baseline.
		if witness, err = nsdeath.New(); err != nil {
			t.Fatalf("%v", err)
		}
		defer witness.Close()
	}
	if err := roomForFDs(sc.N); err != nil {
		t.Fatalf("%v", err)
	}
	for r := 0; r < d.roundsInBoot(sw); r++ {
		state, value := d.stateOfRound(sw, r)
		if sw != nil {
			if err := sw.Set(value); err != nil {
				t.Fatalf("%v", err)
			}
		}
		rec, err := measureMemory(t, sc, ns, witness)
		if err != nil {
			t.Fatalf("state %s round %d: %v", state, r, err)
		}
		rec.Kernel, rec.Machine, rec.Image, rec.State = d.kernel, machineName(), d.image, state
		rec.Boot, rec.Round, rec.Scene, rec.N = d.boot, r, sc.Label(), sc.N
		selftests.Record(t, "%s", kmem.Line(rec))
		memory.mu.Lock()
		memory.records = append(memory.records, rec)
		memory.mu.Unlock()
	}
}

// measureMemory takes one measurement: settled counters, N objects made,
// settled counters again, the objects released (and, for namespaces, torn
// down, which the kernel does later: the witness waits for it).
func measureMemory(t selftests.T, sc Scene, ns *netns.NS, witness *nsdeath.Witness) (kmem.Record, error) {
	before, method, waitBefore, err := settledReading(t)
	if err != nil {
		return kmem.Record{}, fmt.Errorf("before: %w", err)
	}
	release, err := makeObjects(sc, ns, witness)
	if err != nil {
		return kmem.Record{}, err
	}
	after, _, waitAfter, err := settledReading(t)
	if rerr := release(); err == nil && rerr != nil {
		err = rerr
	}
	if err != nil {
		return kmem.Record{}, fmt.Errorf("after: %w", err)
	}
	rec := kmem.NewRecord(kmem.Diff(before, after))
	rec.Method, rec.SettleMS = method, (waitBefore + waitAfter).Milliseconds()
	rec.Object = kmem.ObjectRouteSocket
	if sc.Kind == memNetns {
		rec.Object = kmem.ObjectNetns
	}
	return rec, nil
}

// makeObjects makes the scene's N objects and returns what releases them.
func makeObjects(sc Scene, ns *netns.NS, witness *nsdeath.Witness) (release func() error, err error) {
	switch sc.Kind {
	case memSockets:
		f := &fixture{}
		socks, err := f.openMany(ns, sc.N, "m")
		if err != nil {
			f.close()
			return nil, err
		}
		for _, s := range socks {
			if err := subscribe(s, groupIPv4Route); err != nil {
				f.close()
				return nil, err
			}
		}
		return func() error { f.close(); return nil }, nil
	case memNetns:
		var held []*netns.NS
		closeAll := func() {
			for _, h := range held {
				h.Close()
			}
		}
		for i := 0; i < sc.N; i++ {
			fd, err := bareNamespace()
			if err != nil {
				closeAll()
				return nil, fmt.Errorf("namespace %d of %d: %w", i+1, sc.N, err)
			}
			held = append(held, netns.FromFD(fmt.Sprintf("m%d", i), fd))
		}
		// Tracked only now, after the reading: an nsid costs memory.
		return func() error {
			defer closeAll()
			for _, h := range held {
				if err := witness.Track(h, sc.Name); err != nil {
					return err
				}
			}
			closeAll()
			return witness.Wait(teardownDeadline)
		}, nil
	}
	return nil, fmt.Errorf("scene %s: not a memory scene", sc.Name)
}

// teardownDeadline bounds the kernel's teardown of a round's namespaces
// (500 namespaces take about 20 s on the arm64 image under TCG with
// slub_debug=F).
const teardownDeadline = 10 * time.Minute

// bareNamespace makes a network namespace and returns an nsfs descriptor
// that holds it. Not netns.New: that gives every namespace an nsid in the
// program's teardown witness at once, whose notifications would wait in the
// witness's queue and be counted with the namespace; the scene's own
// witness tracks them after the reading.
func bareNamespace() (int, error) {
	fd := -1
	err := netns.OnThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
		}
		var err error
		fd, err = unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		return err
	})
	return fd, err
}

// roomForFDs lets the process hold n more descriptors, and grows its
// descriptor table now: the table grows in steps as descriptors are
// opened and never shrinks, so without this the first round would count
// its growth (page allocator memory that belongs to the process, not to
// the sockets).
func roomForFDs(n int) error {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return err
	}
	want := uint64(n + 1024)
	if rl.Cur < want {
		rl.Cur, rl.Max = want, max(rl.Max, want)
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
			return fmt.Errorf("RLIMIT_NOFILE %d for %d sockets: %w", want, n, err)
		}
	}
	if err := unix.Dup3(0, n+512, unix.O_CLOEXEC); err != nil {
		return fmt.Errorf("grow the descriptor table to %d: %w", n+512, err)
	}
	return unix.Close(n + 512)
}

// machineName is uname -m, the measured kernel's architecture.
func machineName() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Machine[:])
}

// errUnsettled says the counters kept moving past settleDeadline.
var errUnsettled = errors.New("the slab counters did not settle")

// settledReading reads the counters until they stop moving.
func settledReading(t selftests.T) (kmem.Snapshot, string, time.Duration, error) {
	start := time.Now()
	prev, method, err := kmem.Read()
	if err != nil {
		return prev, "", 0, err
	}
	for stable := 0; stable < settleStable; {
		if time.Since(start) > settleDeadline {
			return prev, method, time.Since(start), fmt.Errorf("%w within %v", errUnsettled, settleDeadline)
		}
		select {
		case <-selftests.Done(t):
			return prev, method, time.Since(start), fmt.Errorf("interrupted while waiting for the slab counters")
		case <-time.After(settlePoll): // polling the kernel's deferred frees, with a deadline
		}
		cur, _, err := kmem.Read()
		if err != nil {
			return prev, method, time.Since(start), err
		}
		slack := int64(shrinkSlack)
		if method == kmem.MethodExact {
			slack = 0
		}
		if d := cur.ActiveBytes() - prev.ActiveBytes(); d <= slack && d >= -slack {
			stable++
		} else {
			stable = 0
		}
		prev = cur
	}
	return prev, method, time.Since(start), nil
}
