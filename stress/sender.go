// SPDX-License-Identifier: GPL-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
	"nlmcast/stress/internal/verify"
)

// The groups the senders' notifications go to.
const (
	groupAddr  = unix.RTNLGRP_IPV4_IFADDR // 5: RTM_NEWADDR, RTM_DELADDR
	groupRoute = unix.RTNLGRP_IPV4_ROUTE  // 7: the local route of an address, route replace
	groupStats = unix.RTNLGRP_STATS       // 36: RTM_NEWSTATS, reachable only by setsockopt
	groupUser  = 1                        // the NETLINK_USERSOCK group
)

// Per-sender ranges, so that a message tells which sender caused it:
// request sequence numbers (sender+1)<<24 | n, addresses 10.(sender+1).x.y
// and the replaced route 172.16.(sender+1).0/24.
const seqShift = 24

// sender is one thread in its own namespace, pinned to one CPU, that sends
// batches of requests and records, once their ACKs are in, the
// notifications they imply: its transcript.
type sender struct {
	idx    int
	name   string
	sp     *space
	pid    uint32 // control socket portid: the nlmsg_pid of its notifications
	cpu    int
	cycles int // address add, route replace, stats switch, address delete per batch

	us, sink *nlsock.Socket // NETLINK_USERSOCK: multicast to group 1, unicast to sink
	usPid    uint32
	injector *nlsock.Socket // ROUTE socket for -inject-duplicate, else nil
	injectAt time.Time

	seq      uint32
	userSeq  uint32
	addrN    int
	nhid     uint32
	statsOn  bool
	lastAdd  netip.Prefix
	lastSeq  uint32
	injected string // what was injected, for the diagnostics

	transcript     []verify.Msg // NETLINK_ROUTE notifications, in order
	userTranscript []verify.Msg // NETLINK_USERSOCK multicasts, in order
	batches        int
	completed      atomic.Int64 // batches, for the run's monitor
	requests       int
	err            error
}

func (s *sender) routeDst() netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{172, 16, byte(s.idx + 1), 0}), 24)
}

// setup creates what the route replaces switch between (blackhole nexthops
// 1 and 2, lo is always up) and the route itself, before any subscriber
// exists.
func (s *sender) setup() error {
	for _, id := range []uint32{1, 2} {
		if _, err := s.sp.ctl.Do(rtnl.NewNexthop(rtnl.Nexthop{ID: id, Blackhole: true})); err != nil {
			return fmt.Errorf("netns %s: %w", s.sp.Name, err)
		}
	}
	if _, err := s.sp.ctl.Do(rtnl.NewRoute(rtnl.Route{Dst: s.routeDst(), NHID: 1})); err != nil {
		return fmt.Errorf("netns %s: %w", s.sp.Name, err)
	}
	s.nhid = 1
	if err := s.sp.ctl.Sock.SetOption(unix.NETLINK_CAP_ACK, true); err != nil {
		return err
	}
	s.pid = s.sp.ctl.Portid()
	return nil
}

// planned is one request and the notifications its ACK promises, given
// the sequence number it was sent with.
type planned struct {
	req    rtnl.Request
	expect func(seq uint32) []verify.Msg
}

func (s *sender) nextAddr() netip.Prefix {
	n := s.addrN
	s.addrN = (s.addrN + 1) % (250 * 250)
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(s.idx + 1), byte(n / 250), byte(n%250 + 1)}), 32)
}

// cycle plans one round of the four events. Adding a /32 to lo notifies
// RTM_NEWADDR (the request's seq and portid) and then the local route that
// fib_add_ifaddr() adds through fib_magic(), which has no request: seq 0,
// pid 0. Deleting it notifies RTM_DELADDR and the local route's
// RTM_DELROUTE the same way. A route replace through a nexthop object
// notifies one RTM_NEWROUTE (of type blackhole: the route takes the type
// of its blackhole nexthop); switching L3 statistics notifies one
// RTM_NEWSTATS from rtnl_offload_xstats_notify(), seq 0, pid 0.
func (s *sender) cycle() []planned {
	a := s.nextAddr()
	addrDetail := fmt.Sprintf("%s dev %d", a, rtnl.LoopbackIndex)
	localDetail := fmt.Sprintf("local %s table %d", a, unix.RT_TABLE_LOCAL)
	s.nhid = 3 - s.nhid
	nhid := s.nhid
	s.statsOn = !s.statsOn
	add := planned{rtnl.NewAddr(rtnl.LoopbackIndex, a), func(seq uint32) []verify.Msg {
		s.lastAdd, s.lastSeq = a, seq
		return []verify.Msg{
			{Type: unix.RTM_NEWADDR, Seq: seq, Pid: s.pid, Group: groupAddr, Detail: addrDetail},
			{Type: unix.RTM_NEWROUTE, Group: groupRoute, Detail: localDetail},
		}
	}}
	replace := planned{rtnl.ReplaceRoute(rtnl.Route{Dst: s.routeDst(), NHID: nhid}), func(seq uint32) []verify.Msg {
		return []verify.Msg{{Type: unix.RTM_NEWROUTE, Seq: seq, Pid: s.pid, Group: groupRoute,
			Detail: fmt.Sprintf("blackhole %s table %d nhid %d", s.routeDst(), unix.RT_TABLE_MAIN, nhid)}}
	}}
	stats := planned{rtnl.SetL3Stats(rtnl.LoopbackIndex, s.statsOn), func(uint32) []verify.Msg {
		return []verify.Msg{{Type: unix.RTM_NEWSTATS, Group: groupStats, Detail: fmt.Sprintf("ifindex %d", rtnl.LoopbackIndex)}}
	}}
	del := planned{rtnl.DelAddr(rtnl.LoopbackIndex, a), func(seq uint32) []verify.Msg {
		return []verify.Msg{
			{Type: unix.RTM_DELADDR, Seq: seq, Pid: s.pid, Group: groupAddr, Detail: addrDetail},
			{Type: unix.RTM_DELROUTE, Group: groupRoute, Detail: localDetail},
		}
	}}
	return []planned{add, replace, stats, del}
}

// run sends batches until ctx ends, on a thread of its own in the sender's
// namespace, pinned to s.cpu.
func (s *sender) run(ctx context.Context) {
	s.err = s.sp.Do(func() error {
		var set unix.CPUSet
		set.Set(s.cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return fmt.Errorf("sched_setaffinity(CPU %d): %w", s.cpu, err)
		}
		for ctx.Err() == nil {
			if err := s.batch(); err != nil {
				return err
			}
			s.batches++
			s.completed.Store(int64(s.batches))
			if s.injector != nil && s.injected == "" && time.Now().After(s.injectAt) {
				if err := s.inject(); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// batch sends every request of one batch, then reads and checks their
// ACKs in order; only then do their notifications join the transcript.
// One user multicast on NETLINK_USERSOCK closes the batch.
func (s *sender) batch() error {
	var plan []planned
	for c := 0; c < s.cycles; c++ {
		plan = append(plan, s.cycle()...)
	}
	seqs := make([]uint32, len(plan))
	for i, p := range plan {
		m := p.req.Msg
		m.Header.Flags |= netlink.Request | netlink.Acknowledge
		s.seq++
		m.Header.Sequence = uint32(s.idx+1)<<seqShift | s.seq
		seqs[i] = m.Header.Sequence
		if err := s.sp.ctl.Sock.SendTo(m, 0, 0); err != nil {
			return fmt.Errorf("sender %s batch %d: %s: %w", s.name, s.batches, p.req.Name, err)
		}
	}
	for i := 0; i < len(plan); {
		d, err := s.sp.ctl.Sock.Recv()
		if errors.Is(err, nlsock.ErrEmpty) {
			// ACKs are queued inside sendmsg(); the wait only
			// guards against a kernel that never answers.
			ok, err := s.sp.ctl.Sock.Wait(10 * time.Second)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("sender %s batch %d: no ACK for %s (seq %d) within 10s", s.name, s.batches, plan[i].req.Name, seqs[i])
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("sender %s batch %d: control socket: %w", s.name, s.batches, err)
		}
		for _, m := range d.Msgs {
			if i >= len(plan) {
				return fmt.Errorf("sender %s batch %d: unexpected reply %s seq %d after the last ACK", s.name, s.batches, rtnl.TypeName(uint16(m.Header.Type)), m.Header.Sequence)
			}
			if m.Header.Type != netlink.Error || m.Header.Sequence != seqs[i] {
				return fmt.Errorf("sender %s batch %d: expected the ACK of %s (seq %d), got %s seq %d", s.name, s.batches, plan[i].req.Name, seqs[i], rtnl.TypeName(uint16(m.Header.Type)), m.Header.Sequence)
			}
			if err := rtnl.ParseError(plan[i].req.Name, m); err != nil {
				return fmt.Errorf("sender %s batch %d: %w", s.name, s.batches, err)
			}
			i++
		}
	}
	for i, p := range plan {
		s.transcript = append(s.transcript, p.expect(seqs[i])...)
	}
	s.requests += len(plan)

	s.userSeq++
	um := netlink.Message{Header: netlink.Header{Type: netlink.Noop, Sequence: s.userSeq, PID: s.usPid}}
	if err := s.us.SendTo(um, s.sink.Portid(), nlsock.GroupMask(groupUser)); err != nil {
		return fmt.Errorf("sender %s batch %d: %w", s.name, s.batches, err)
	}
	s.userTranscript = append(s.userTranscript, verify.Msg{Type: unix.NLMSG_NOOP, Seq: s.userSeq, Pid: s.usPid, Group: groupUser})
	return nil
}

// inject is the checker's self-test (-inject-duplicate): a user-space
// multicast on RTNLGRP_IPV4_IFADDR that repeats the last RTM_NEWADDR this
// sender caused, header and address alike. Every stable receiver of the
// group that sees this sender gets a second copy of a message it already
// has, exactly what a kernel that delivered twice would leave behind. The
// message has no NLM_F_REQUEST, so the kernel socket (portid 0) that
// netlink_sendmsg() also hands it to ignores it.
func (s *sender) inject() error {
	r := rtnl.NewAddr(rtnl.LoopbackIndex, s.lastAdd)
	m := netlink.Message{Header: netlink.Header{Type: netlink.HeaderType(unix.RTM_NEWADDR), Sequence: s.lastSeq, PID: s.pid}, Data: r.Msg.Data}
	if err := s.injector.SendTo(m, 0, nlsock.GroupMask(groupAddr)); err != nil {
		return fmt.Errorf("inject: %w", err)
	}
	s.injected = fmt.Sprintf("sender %s after batch %d: one more RTM_NEWADDR seq %d pid %d [%s dev %d] multicast on group %d from a user-space socket",
		s.name, s.batches, s.lastSeq, s.pid, s.lastAdd, rtnl.LoopbackIndex, groupAddr)
	return nil
}

// sourceOf tells which sender a ROUTE notification comes from, when it
// says: a request's seq carries the sender, so does the address of a local
// route (seq 0). RTM_NEWSTATS (seq 0, lo) does not say.
func sourceOf(m verify.Msg) (int, bool) {
	if m.Seq != 0 {
		return int(m.Seq>>seqShift) - 1, true
	}
	var a, rest string
	if n, _ := fmt.Sscanf(m.Detail, "local %s %s", &a, &rest); n >= 1 {
		if p, err := netip.ParsePrefix(a); err == nil && p.Addr().Is4() {
			return int(p.Addr().As4()[1]) - 1, true
		}
	}
	return 0, false
}
