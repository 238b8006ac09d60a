// SPDX-License-Identifier: GPL-2.0

package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/mcswitch"
	"nlmcast/selftests/netns"
	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// The measurement of switch_changes_walk_cost: the CPU time the sender's
// thread spends per multicast while many ordinary subscribers live in
// other namespaces.
//
// The multicast is a user one: an NLMSG_NOOP sent by a NETLINK_ROUTE
// socket in S to walkGroup. netlink_sendmsg() hands it to
// netlink_broadcast() on the sending thread before sendmsg returns, the
// same candidate walk an rtnetlink notification from S takes (the walk
// depends on the sending socket's protocol and namespace only), and then
// unicasts it to the kernel's rtnl socket, which ignores a message
// without NLM_F_REQUEST. It needs no rtnl_lock, so namespaces of earlier
// cases being torn down meanwhile do not make the sender wait or spin,
// and its fixed cost is a third of RTM_SETSTATS's on the debug kernel:
// the walk is most of what is timed.

// walkGroup is the group the sender multicasts to: RTNLGRP_LINK, which
// every `ip monitor` joins. Nothing else is sent on it in S (lo stays
// down and nothing else changes), nor in the foreign namespaces.
const walkGroup = unix.RTNLGRP_LINK

// foreignGroups are the foreign subscribers' groups, as `ip monitor
// link address route` binds them.
const foreignGroups = unix.RTMGRP_LINK | unix.RTMGRP_IPV4_IFADDR | unix.RTMGRP_IPV4_ROUTE

// walkCostConfig sizes the measurement.
type walkCostConfig struct {
	subscribers int           // foreign subscribers in all
	namespaces  int           // foreign namespaces they are spread over
	pairs       int           // pairs of blocks, even so that each order runs equally often
	block       time.Duration // the sender's CPU time a block lasts at least
	minSamples  int           // multicasts with a reading a block has at least
	maxBlock    int           // multicasts a block sends at most (rx's buffer holds them)
	warmup      int           // untimed multicasts at the start of each block
}

// walkCostDefaults is what the case runs. A block of 25 ms spans several
// scheduler ticks, so the clock's standstills (see walkFixture.block)
// cover a minority of its readings whatever its mode.
var walkCostDefaults = walkCostConfig{subscribers: 3000, namespaces: 4, pairs: 8,
	block: 25 * time.Millisecond, minSamples: 24, maxBlock: 8192, warmup: 2}

// walkFixture is the sender's namespace S with its sender and receiver,
// and the foreign namespaces with their subscribers.
type walkFixture struct {
	cfg     walkCostConfig
	sender  *netns.NS
	tx      int            // the sender: a bound ROUTE socket in S in no group
	rx      *nlsock.Socket // the only subscriber in S
	foreign []*netns.NS
	subs    [][]int // per foreign namespace, its subscribers' fds

	msg    []byte // the NLMSG_NOOP; its seq is set per multicast
	dst    *unix.SockaddrNetlink
	buf    []byte
	times  []time.Duration // a block's readings, reused
	issued int             // multicasts sent since rx was last drained
}

// newWalkFixture builds the fixture; everything goes with t's cleanups.
func newWalkFixture(t selftests.T, cfg walkCostConfig) *walkFixture {
	t.Helper()
	f := &walkFixture{cfg: cfg, tx: -1, buf: make([]byte, 256), times: make([]time.Duration, 0, cfg.maxBlock),
		msg: make([]byte, unix.NLMSG_HDRLEN+4),
		dst: &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: 1 << (walkGroup - 1)}}
	binary.NativeEndian.PutUint32(f.msg[0:], uint32(len(f.msg)))
	binary.NativeEndian.PutUint16(f.msg[4:], unix.NLMSG_NOOP)
	raiseNoFile(t, cfg.subscribers+64)

	var err error
	if f.sender, err = netns.New("S"); err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() { f.sender.Close() })
	err = f.sender.Do(func() error {
		f.tx, err = openRoute(0)
		return err
	})
	t.Cleanup(func() {
		if f.tx >= 0 {
			unix.Close(f.tx)
		}
	})
	if err != nil {
		t.Fatalf("sender in netns S: %v", err)
	}
	if f.rx, err = nlsock.Open(f.sender, unix.NETLINK_ROUTE, "rx"); err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() { f.rx.Close() })
	for _, err := range []error{
		f.rx.Bind(0, 1<<(walkGroup-1)),
		// Room for a block, drained after each: the kernel doubles
		// the value, and a NLMSG_NOOP's copy takes under 1 KiB.
		f.rx.ForceReceiveBuffer(cfg.maxBlock << 9),
	} {
		if err != nil {
			t.Fatalf("%v", err)
		}
	}

	per := cfg.subscribers / cfg.namespaces
	for i := range cfg.namespaces {
		n := per
		if i == cfg.namespaces-1 {
			n = cfg.subscribers - per*(cfg.namespaces-1)
		}
		ns, err := netns.New(fmt.Sprintf("F%d", i))
		if err != nil {
			t.Fatalf("%v", err)
		}
		t.Cleanup(func() { ns.Close() })
		f.foreign = append(f.foreign, ns)
		fds := make([]int, 0, n)
		err = ns.Do(func() error {
			for range n {
				fd, err := openRoute(foreignGroups)
				if err != nil {
					return err
				}
				fds = append(fds, fd)
				if err := listenAllNSIDOnOff(fd); err != nil {
					return err
				}
			}
			return nil
		})
		t.Cleanup(func() {
			for _, fd := range fds {
				unix.Close(fd)
			}
		})
		f.subs = append(f.subs, fds)
		if errors.Is(err, unix.EPERM) {
			t.Skipf("foreign subscriber %d in netns %s: %v: NETLINK_LISTEN_ALL_NSID needs CAP_NET_BROADCAST", len(fds), ns.Name, err)
		}
		if err != nil {
			t.Fatalf("foreign subscriber %d in netns %s: %v", len(fds), ns.Name, err)
		}
	}
	return f
}

// listenAllNSIDOnOff sets NETLINK_LISTEN_ALL_NSID on the subscribed
// socket fd and clears it again, as a monitor that stops following other
// namespaces does: at 1 the socket joins the global ALL_NSID list and must
// leave it (netlink_setsockopt() -> netlink_route_mc_update():
// hlist_del_init(&nlk->route_all_nsid_node)), or every multicast from any
// namespace walks it there.
func listenAllNSIDOnOff(fd int) error {
	for _, v := range []int{1, 0} {
		if err := unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_LISTEN_ALL_NSID, v); err != nil {
			return fmt.Errorf("setsockopt(NETLINK_LISTEN_ALL_NSID, %d): %w", v, err)
		}
	}
	return nil
}

// openRoute opens a NETLINK_ROUTE socket in the calling thread's
// namespace and binds it (autobind picks the portid) to the groups
// bitmask: with groups, an ordinary subscriber, on the protocol-wide
// mc_list, which mode 0 walks for every multicast, and on its own
// namespace's index list, which mode 1 walks only for multicasts from
// there.
func openRoute(groups uint32) (int, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.NETLINK_ROUTE)
	if err != nil {
		return -1, fmt.Errorf("socket(NETLINK_ROUTE): %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: groups}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind(groups %#x): %w", groups, err)
	}
	return fd, nil
}

// raiseNoFile makes room for extra more file descriptors, restoring the
// limit when the case ends. Raising the hard limit needs
// CAP_SYS_RESOURCE; without it the case SKIPs.
func raiseNoFile(t selftests.T, extra int) {
	t.Helper()
	open, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("count open files: %v", err)
	}
	need := uint64(len(open) + extra)
	var old unix.Rlimit
	if err := unix.Prlimit(0, unix.RLIMIT_NOFILE, nil, &old); err != nil {
		t.Fatalf("getrlimit(RLIMIT_NOFILE): %v", err)
	}
	if old.Cur >= need {
		return
	}
	raised := unix.Rlimit{Cur: need, Max: max(old.Max, need)}
	if err := unix.Prlimit(0, unix.RLIMIT_NOFILE, &raised, nil); err != nil {
		t.Skipf("needs %d open files, RLIMIT_NOFILE is %d (hard %d) and cannot be raised: %v", need, old.Cur, old.Max, err)
	}
	t.Cleanup(func() {
		if err := unix.Prlimit(0, unix.RLIMIT_NOFILE, &old, nil); err != nil {
			t.Errorf("restore RLIMIT_NOFILE %d (hard %d): %v", old.Cur, old.Max, err)
		}
	})
}

// multicast sends the NLMSG_NOOP from tx to walkGroup: when sendto
// returns, every recipient has its copy queued. It allocates nothing.
func (f *walkFixture) multicast() error {
	binary.NativeEndian.PutUint32(f.msg[8:], rtnl.NextSeq())
	if err := unix.Sendto(f.tx, f.msg, 0, f.dst); err != nil {
		return fmt.Errorf("sendto(group %d) from netns S: %w", walkGroup, err)
	}
	f.issued++
	return nil
}

// threadCPU is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
func threadCPU() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, fmt.Errorf("clock_gettime(CLOCK_THREAD_CPUTIME_ID): %w", err)
	}
	return time.Duration(ts.Nano()), nil
}

// block sends cfg.warmup untimed multicasts, then timed ones until the
// thread's CPU clock has advanced by cfg.block and at least
// cfg.minSamples of them showed a time (or cfg.maxBlock were sent), and
// returns the median time per multicast.
//
// The clock is read between two multicasts, and the median of those
// readings resists both ways a TCG guest's clock goes wrong. A host
// stall (QEMU's vCPU thread waiting for a host CPU) is charged to the
// running thread: it lands in one reading. And the TSC behind
// sched_clock is no stable clock there, so the scheduler clamps each
// CPU's clock to the last tick's time plus one tick: when the TSC runs
// ahead, the thread's clock stands still until the next tick (a tenth of
// the readings show no time at all) and then catches up in one reading.
// A reading of zero is such a standstill, not a free multicast, and is
// left out.
func (f *walkFixture) block() (time.Duration, error) {
	for range f.cfg.warmup {
		if err := f.multicast(); err != nil {
			return 0, err
		}
	}
	start, err := threadCPU()
	if err != nil {
		return 0, err
	}
	f.times = f.times[:0]
	last := start
	for n := 1; ; n++ {
		if err := f.multicast(); err != nil {
			return 0, err
		}
		now, err := threadCPU()
		if err != nil {
			return 0, err
		}
		if now > last {
			f.times = append(f.times, now-last)
		}
		last = now
		if (now-start >= f.cfg.block && len(f.times) >= f.cfg.minSamples) || n == f.cfg.maxBlock {
			return medianDuration(f.times), nil
		}
	}
}

// drain reads rx empty: exactly one NLMSG_NOOP per multicast sent since
// the last drain, in order, and nothing else. So every multicast was
// delivered, once, to the one subscriber in S.
func (f *walkFixture) drain() error {
	got := 0
	var last uint32
	for {
		n, _, err := unix.Recvfrom(f.rx.FD(), f.buf, unix.MSG_DONTWAIT)
		if errors.Is(err, unix.EAGAIN) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: recv after %d of %d multicasts: %w", f.rx, got, f.issued, err)
		}
		msgs, err := nlsock.ParseMessages(f.buf[:n])
		if err != nil {
			return fmt.Errorf("%s: %w", f.rx, err)
		}
		for _, m := range msgs {
			if m.Header.Type != unix.NLMSG_NOOP || (got > 0 && m.Header.Sequence <= last) {
				return fmt.Errorf("%s: got %s seq %d after %d NLMSG_NOOP (last seq %d), want only the multicasts, in order",
					f.rx, rtnl.TypeName(uint16(m.Header.Type)), m.Header.Sequence, got, last)
			}
			last = m.Header.Sequence
			got++
		}
	}
	want := f.issued
	f.issued = 0
	if got != want {
		return fmt.Errorf("%s: %d NLMSG_NOOP for %d multicasts to group %d, want one each", f.rx, got, want, walkGroup)
	}
	return nil
}

// switchIs returns nil if sw reads want, errSwitchMoved if it reads
// something else.
func switchIs(sw *mcswitch.Switch, want int) error {
	v, err := sw.Read()
	if err != nil {
		return fmt.Errorf("read %s in the initial netns: %w", switchPath, err)
	}
	if v != strconv.Itoa(want) {
		return fmt.Errorf("%s reads %q after a block run with it at %d: %w", switchPath, v, want, errSwitchMoved)
	}
	return nil
}

// quietForeign checks that no foreign subscriber received anything: a
// multicast from S reaches no plain socket elsewhere, and nothing else
// happens in their namespaces.
func (f *walkFixture) quietForeign() error {
	buf := make([]byte, 64)
	for i, fds := range f.subs {
		for j, fd := range fds {
			n, _, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT)
			if !errors.Is(err, unix.EAGAIN) {
				return fmt.Errorf("foreign subscriber %d in netns %s: recv returned %d bytes, %v; want EAGAIN (nothing queued)",
					j, f.foreign[i].Name, n, err)
			}
		}
	}
	return nil
}

// errSwitchMoved says that the switch no longer held the value set for
// a block once the block was over: another program changed it
// meanwhile, and the block measured an unknown walk.
var errSwitchMoved = errors.New("the switch changed during a block")

// measure runs cfg.pairs pairs of blocks on one thread in S. setMode
// sets the walk for the block of mode before it, and stillMode checks
// after it that the walk stayed.
func (f *walkFixture) measure(setMode, stillMode func(mode int) error) ([]walkPair, error) {
	pairs := make([]walkPair, f.cfg.pairs)
	err := f.sender.Do(func() error {
		for i := range pairs {
			p := &pairs[i]
			p.first = firstModeOfPair(i)
			for _, mode := range []int{p.first, 1 - p.first} {
				if err := setMode(mode); err != nil {
					return err
				}
				d, err := f.block()
				if err != nil {
					return fmt.Errorf("pair %d, mode %d: %w", i, mode, err)
				}
				p.cost[mode] = d
				if err := f.drain(); err != nil {
					return fmt.Errorf("pair %d, mode %d: %w", i, mode, err)
				}
				if err := stillMode(mode); err != nil {
					return fmt.Errorf("pair %d, mode %d: %w", i, mode, err)
				}
			}
		}
		return nil
	})
	return pairs, err
}
