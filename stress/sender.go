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
	// When each was broadcast: the sendmsg() of its request (rtnetlink
	// notifies inside it), on the run's clock (stamp).
	transcriptAt, userTranscriptAt []verify.Span
	batches                        int
	completed                      atomic.Int64 // batches, for the run's monitor
	requests                       int
	err                            error

	// With injected allocation failures (faults): the messages of
	// requests whose outcome is not known, and what they leave unknown.
	faults      bool
	markThread  func() error    // marks the sender's thread for the injection
	ready       func(err error) // told once: the sender is set up (nil), or why it is not
	breakSetup  bool            // self-test (-inject-setup-failure): its CPU pinning fails
	unsure      map[verify.Msg]bool
	routeUnsure bool                          // the route's nexthop is not known
	statsUnsure bool                          // lo's L3 statistics state is not known
	addUnsure   map[netip.Prefix][]verify.Msg // adds with no known outcome, and their messages
	// echoes is what the control socket showed of the notifications
	// the kernel echoes (verify.Echoed or verify.NotEchoed).
	echoes      map[verify.Msg]verify.Echo
	faultCounts faultCounts

	// flips counts, when the switch flips, the writes made while each
	// batch was in the kernel.
	writes *atomic.Int64
	flips  flipCounts
}

// faultCounts are what injected failures did to one sender's requests.
type faultCounts struct {
	SendRetries int `json:"send_retries"` // sendmsg failed (ENOBUFS, ENOMEM) and was repeated
	ACKsLost    int `json:"acks_lost"`    // an ACK the kernel could not allocate: outcome unknown
	Failed      int `json:"failed"`       // requests whose ACK reports ENOBUFS or ENOMEM
	Unsure      int `json:"unsure"`       // notifications whose outcome is unknown
	// With NLM_F_ECHO: notifications whose echo was read (sent), whose
	// request was ACKed without one and without an ENOBUFS (never sent),
	// and whose echo an ENOBUFS on the control socket may have cost.
	Echoed        int `json:"echoed"`
	NotEchoed     int `json:"not_echoed"`
	EchoesUnknown int `json:"echoes_unknown"`
}

// flipCounts is the distribution of switch writes per batch.
type flipCounts struct {
	Batches     int            `json:"batches"`
	WithFlip    int            `json:"with_flip"`
	Buckets     map[string]int `json:"per_batch"` // "0", "1", "2-3", "4-15", "16-63", "64+"
	MaxPerBatch int64          `json:"max_per_batch"`
}

// problem says why a sender's batches prove too little about a walk that
// switches under a broadcast: fewer than half of them saw a flip.
func (f *flipCounts) problem(sender string) string {
	if 2*f.WithFlip >= f.Batches {
		return ""
	}
	return fmt.Sprintf("sender %s: only %d of its %d batches saw the switch flip while they were in the kernel (fewer than half): the writer did not interleave with the broadcasts",
		sender, f.WithFlip, f.Batches)
}

func (f *flipCounts) add(n int64) {
	if f.Buckets == nil {
		f.Buckets = map[string]int{}
	}
	f.Batches++
	if n > 0 {
		f.WithFlip++
	}
	f.MaxPerBatch = max(f.MaxPerBatch, n)
	switch {
	case n <= 1:
		f.Buckets[fmt.Sprint(n)]++
	case n <= 3:
		f.Buckets["2-3"]++
	case n <= 15:
		f.Buckets["4-15"]++
	case n <= 63:
		f.Buckets["16-63"]++
	default:
		f.Buckets["64+"]++
	}
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
	op     opKind
	addr   netip.Prefix // the address an add or delete is about
	// echo is the type of the notification the kernel echoes to the
	// requester when the request has NLM_F_ECHO, 0 if none.
	echo uint16
}

// opKind says which state a request changes, for the bookkeeping of
// unknown outcomes.
type opKind int

const (
	opAdd opKind = iota
	opReplace
	opStats
	opDel
)

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
//
// With NLM_F_ECHO (the fault modes), nlmsg_notify() echoes a notification
// to its requester only where rtnl_notify() gets the request's nlmsghdr
// (nlmsg_report()); in 6.1 and 6.12 that is RTM_NEWADDR and RTM_DELADDR
// (rtmsg_ifa(), from inet_rtm_newaddr() and inet_rtm_deladdr()) and the
// replace's RTM_NEWROUTE (rtmsg_fib() with the request's fc_nlinfo). The
// local routes are notified from fib_magic(), whose fc_nlinfo has no
// nlmsghdr, and RTM_NEWSTATS with none: neither is echoed.
func (s *sender) cycle() []planned {
	a := s.nextAddr()
	addrDetail := rtnl.AddrDetail(a, rtnl.LoopbackIndex)
	localDetail := rtnl.RouteDetail(unix.RTN_LOCAL, a, unix.RT_TABLE_LOCAL, 0)
	s.nhid = 3 - s.nhid
	nhid := s.nhid
	s.statsOn = !s.statsOn
	add := planned{req: rtnl.NewAddr(rtnl.LoopbackIndex, a), op: opAdd, addr: a, echo: unix.RTM_NEWADDR, expect: func(seq uint32) []verify.Msg {
		s.lastAdd, s.lastSeq = a, seq
		return []verify.Msg{
			{Type: unix.RTM_NEWADDR, Seq: seq, Pid: s.pid, Group: groupAddr, Detail: addrDetail},
			{Type: unix.RTM_NEWROUTE, Group: groupRoute, Detail: localDetail},
		}
	}}
	replace := planned{req: rtnl.ReplaceRoute(rtnl.Route{Dst: s.routeDst(), NHID: nhid}), op: opReplace, echo: unix.RTM_NEWROUTE, expect: func(seq uint32) []verify.Msg {
		return []verify.Msg{{Type: unix.RTM_NEWROUTE, Seq: seq, Pid: s.pid, Group: groupRoute,
			Detail: rtnl.RouteDetail(unix.RTN_BLACKHOLE, s.routeDst(), unix.RT_TABLE_MAIN, nhid)}}
	}}
	stats := planned{req: rtnl.SetL3Stats(rtnl.LoopbackIndex, s.statsOn), op: opStats, expect: func(uint32) []verify.Msg {
		return []verify.Msg{{Type: unix.RTM_NEWSTATS, Group: groupStats, Detail: rtnl.StatsDetail(rtnl.LoopbackIndex)}}
	}}
	del := planned{req: rtnl.DelAddr(rtnl.LoopbackIndex, a), op: opDel, addr: a, echo: unix.RTM_DELADDR, expect: func(seq uint32) []verify.Msg {
		return []verify.Msg{
			{Type: unix.RTM_DELADDR, Seq: seq, Pid: s.pid, Group: groupAddr, Detail: addrDetail},
			{Type: unix.RTM_DELROUTE, Group: groupRoute, Detail: localDetail},
		}
	}}
	return []planned{add, replace, stats, del}
}

// run sends batches until ctx ends, on a thread of its own in the sender's
// namespace, pinned to s.cpu. With faults, the thread is marked for the
// injection first (markThread), while nothing is injected yet. ready is
// told once that the sender is set up, or why it is not: setns(),
// sched_setaffinity() or the mark failed.
func (s *sender) run(ctx context.Context) {
	told := false
	tell := func(err error) {
		if !told && s.ready != nil {
			told = true
			s.ready(err)
		}
	}
	s.err = s.sp.Do(func() error {
		var set unix.CPUSet
		if !s.breakSetup {
			set.Set(s.cpu)
		}
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return fmt.Errorf("sched_setaffinity(CPU %d): %w", s.cpu, err)
		}
		if s.markThread != nil {
			if err := s.markThread(); err != nil {
				return err
			}
		}
		tell(nil)
		for ctx.Err() == nil {
			var before int64
			if s.writes != nil {
				before = s.writes.Load()
			}
			if err := s.batch(); err != nil {
				return err
			}
			if s.writes != nil {
				s.flips.add(s.writes.Load() - before)
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
	if !told && s.err == nil {
		s.err = errors.New("ended before it was set up")
	}
	tell(s.err)
}

// ackLost is the outcome of a request whose ACK the kernel could not
// allocate (the control socket got ENOBUFS instead).
const ackLost = unix.Errno(1 << 20)

// allocFailed says the kernel refused for want of memory: what injected
// allocation failures give.
func allocFailed(err error) bool { return errors.Is(err, unix.ENOBUFS) || errors.Is(err, unix.ENOMEM) }

// send sends m, and again while an injected allocation failure makes
// sendmsg fail: the kernel then has not seen the request.
func (s *sender) send(sock *nlsock.Socket, m netlink.Message, pid, groups uint32) error {
	for {
		err := sock.SendTo(m, pid, groups)
		if s.faults && allocFailed(err) {
			s.faultCounts.SendRetries++
			continue
		}
		return err
	}
}

// batch sends every request of one batch, then reads and checks their
// ACKs (and, under faults, their echoes) in order; only then do their
// notifications join the transcript. One user multicast on
// NETLINK_USERSOCK closes the batch.
func (s *sender) batch() error {
	var plan []planned
	for c := 0; c < s.cycles; c++ {
		plan = append(plan, s.cycle()...)
	}
	seqs := make([]uint32, len(plan))
	spans := make([]verify.Span, len(plan))
	for i, p := range plan {
		m := p.req.Msg
		m.Header.Flags |= netlink.Request | netlink.Acknowledge
		if s.faults && p.echo != 0 {
			m.Header.Flags |= netlink.Echo
		}
		s.seq++
		m.Header.Sequence = uint32(s.idx+1)<<seqShift | s.seq
		seqs[i] = m.Header.Sequence
		spans[i].From = stamp()
		if err := s.send(s.sp.ctl.Sock, m, 0, 0); err != nil {
			return fmt.Errorf("sender %s batch %d: %s: %w", s.name, s.batches, p.req.Name, err)
		}
		spans[i].To = stamp()
	}
	got, err := s.readACKs(s.sp.ctl.Sock, plan, seqs)
	if err != nil {
		return err
	}
	if err := s.record(plan, seqs, spans, got); err != nil {
		return err
	}

	s.userSeq++
	um := netlink.Message{Header: netlink.Header{Type: netlink.Noop, Sequence: s.userSeq, PID: s.usPid}}
	from := stamp()
	if err := s.send(s.us, um, s.sink.Portid(), nlsock.GroupMask(groupUser)); err != nil {
		return fmt.Errorf("sender %s batch %d: %w", s.name, s.batches, err)
	}
	s.userTranscript = append(s.userTranscript, verify.Msg{Type: unix.NLMSG_NOOP, Seq: s.userSeq, Pid: s.usPid, Group: groupUser})
	s.userTranscriptAt = append(s.userTranscriptAt, verify.Span{From: from, To: stamp()})
	return nil
}

// record settles each request of a batch from what its control socket
// showed (got), and adds the notifications owed to the transcript.
func (s *sender) record(plan []planned, seqs []uint32, spans []verify.Span, got acks) error {
	for i, p := range plan {
		msgs := p.expect(seqs[i])
		owed, unsure, err := s.settle(p, got.results[i], msgs)
		if err == nil {
			err = s.noteEcho(p, got, i, msgs, owed)
		}
		if err != nil {
			return fmt.Errorf("sender %s batch %d: %w", s.name, s.batches, err)
		}
		if !owed {
			continue
		}
		s.transcript = append(s.transcript, msgs...)
		for range msgs {
			s.transcriptAt = append(s.transcriptAt, spans[i])
		}
		if unsure {
			for _, m := range msgs {
				s.unsure[m] = true
			}
			s.faultCounts.Unsure += len(msgs)
		}
	}
	s.requests += len(plan)
	return nil
}

// ackReader is the control socket, as readACKs reads it.
type ackReader interface {
	Recv() (nlsock.Datagram, error)
	Wait(timeout time.Duration) (bool, error)
}

// acks is what the control socket showed of one batch.
type acks struct {
	// results holds each request's error (nil: done), or ackLost.
	results []error
	// echoes holds, for each request, the echo read before its ACK.
	echoes []*verify.Msg
	// enobufs says the socket reported an ENOBUFS: an ACK the kernel
	// could not allocate, or an overrun (netlink_attachskb() drops every
	// unicast to the socket, echoes and ACKs alike, until it is read
	// empty).
	enobufs bool
}

// readACKs reads the ACK of every request of a batch, in order, and the
// echo the kernel sends before an ACK for a request with NLM_F_ECHO
// (nlmsg_notify() runs inside the request, netlink_ack() after it). ACKs
// are queued inside sendmsg(), so once the queue is empty after an
// ENOBUFS (an ACK the kernel could not allocate, under faults) the
// missing ones are lost.
func (s *sender) readACKs(sock ackReader, plan []planned, seqs []uint32) (acks, error) {
	got := acks{results: make([]error, len(plan)), echoes: make([]*verify.Msg, len(plan))}
	next, lost := 0, false
	for next < len(plan) {
		d, err := sock.Recv()
		if errors.Is(err, nlsock.ErrEmpty) {
			if lost {
				for ; next < len(plan); next++ {
					got.results[next] = ackLost
				}
				break
			}
			// The wait only guards against a kernel that never answers.
			ok, err := sock.Wait(10 * time.Second)
			if err != nil {
				return acks{}, err
			}
			if !ok {
				return acks{}, fmt.Errorf("sender %s batch %d: no ACK for %s (seq %d) within 10s", s.name, s.batches, plan[next].req.Name, seqs[next])
			}
			continue
		}
		if s.faults && errors.Is(err, unix.ENOBUFS) {
			lost, got.enobufs = true, true
			continue
		}
		if err != nil {
			return acks{}, fmt.Errorf("sender %s batch %d: control socket: %w", s.name, s.batches, err)
		}
		for _, m := range d.Msgs {
			i := next
			for i < len(plan) && seqs[i] != m.Header.Sequence {
				i++
			}
			isEcho := m.Header.Type != netlink.Error
			if i == len(plan) || (i > next && !lost) ||
				(isEcho && (!s.faults || uint16(m.Header.Type) != plan[i].echo || got.echoes[i] != nil)) {
				return acks{}, fmt.Errorf("sender %s batch %d: expected the ACK of %s (seq %d), got %s seq %d", s.name, s.batches, plan[next].req.Name, seqs[next], rtnl.TypeName(uint16(m.Header.Type)), m.Header.Sequence)
			}
			for ; next < i; next++ {
				got.results[next] = ackLost
			}
			if isEcho {
				// Its ACK is still to come.
				echo := toGot(d, m).Msg
				got.echoes[i] = &echo
				continue
			}
			got.results[i] = rtnl.ParseError(plan[i].req.Name, m)
			next = i + 1
		}
	}
	return got, nil
}

// noteEcho records what the control socket showed of the notification
// request i of a batch asked the kernel to echo (msgs are what it
// notifies, if owed). An echo must be that notification, of a request
// that notified it. A request whose ACK was read with no echo before it
// notified nothing, unless an ENOBUFS in the batch may have cost the
// echo: every unicast of a batch is queued by its sendmsg() calls,
// before the first read, and the ENOBUFS of any of them is read in the
// batch.
func (s *sender) noteEcho(p planned, got acks, i int, msgs []verify.Msg, owed bool) error {
	if !s.faults || p.echo == 0 {
		return nil
	}
	echo := got.echoes[i]
	if echo != nil && !owed {
		return fmt.Errorf("%s: the kernel echoed %s, but the request notified nothing (%v)", p.req.Name, echo, got.results[i])
	}
	if !owed {
		return nil
	}
	var want verify.Msg
	for _, m := range msgs {
		if m.Type == p.echo {
			want = m
		}
	}
	switch {
	case echo != nil:
		// A unicast carries no group.
		if e := *echo; e.Group != 0 || (verify.Msg{Type: e.Type, Seq: e.Seq, Pid: e.Pid, Group: want.Group, Detail: e.Detail}) != want {
			return fmt.Errorf("%s: the echo is %s, the notification it echoes %s", p.req.Name, e, want)
		}
		s.echoes[want] = verify.Echoed
		s.faultCounts.Echoed++
	case got.enobufs:
		s.faultCounts.EchoesUnknown++
	default:
		s.echoes[want] = verify.NotEchoed
		s.faultCounts.NotEchoed++
	}
	return nil
}

// settle decides, from a request's result, whether its notifications
// (msgs) are in the transcript (owed) and whether their outcome is unknown
// (unsure), and keeps track of what an unknown outcome leaves unknown.
// Without faults every request must succeed.
func (s *sender) settle(p planned, result error, msgs []verify.Msg) (owed, unsure bool, err error) {
	if !s.faults {
		return true, false, result
	}
	failed := result != nil
	switch {
	case errors.Is(result, ackLost):
		s.faultCounts.ACKsLost++
	case allocFailed(result):
		s.faultCounts.Failed++
	case p.op == opDel && errors.Is(result, unix.EADDRNOTAVAIL) && s.addUnsure[p.addr] != nil:
		// Its add failed after all: nothing to delete, nothing owed.
		delete(s.addUnsure, p.addr)
		return false, false, nil
	case result != nil:
		return false, false, result
	}
	switch p.op {
	case opAdd:
		if failed {
			s.addUnsure[p.addr] = msgs
		}
	case opDel:
		if add := s.addUnsure[p.addr]; add != nil && !failed {
			// The address was there to delete: its add was done, and
			// what it notified is owed after all.
			for _, m := range add {
				delete(s.unsure, m)
			}
			s.faultCounts.Unsure -= len(add)
		}
		delete(s.addUnsure, p.addr)
	case opReplace:
		// A replace whose starting state is unknown may change nothing,
		// and then notifies nothing; so may a statistics switch.
		unsure, s.routeUnsure = s.routeUnsure || failed, failed
		return true, unsure, nil
	case opStats:
		unsure, s.statsUnsure = s.statsUnsure || failed, failed
		return true, unsure, nil
	}
	return true, failed, nil
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
	if err := s.send(s.injector, m, 0, nlsock.GroupMask(groupAddr)); err != nil {
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
