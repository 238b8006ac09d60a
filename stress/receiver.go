// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests/netns"
	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
	"nlmcast/stress/internal/verify"
)

// stableBuffer is the receive buffer of every stable receiver
// (SO_RCVBUFFORCE): deep enough that its drainer, however late the
// scheduler runs it, never lets the queue overrun.
const stableBuffer = 16 << 20

// stable is a receiver whose transcript is known exactly. A goroutine of
// its own drains it for the whole run; what it read is judged at the end.
type stable struct {
	kind string // receiver kind, for the per-kind counts
	home *netns.NS
	want verify.Receiver
	sock *nlsock.Socket

	got  []verify.Got
	errs []string
	// overruns counts the ENOBUFS read so far, for the run's monitor.
	// cloneOnly says only a failed clone in the broadcast walk can overrun
	// the receiver: netlink_set_err() does not reach it (a NETLINK_ROUTE
	// socket in another namespace, or NETLINK_USERSOCK, whose multicast
	// has no nlmsg_new()), and its buffer is never full.
	overruns  atomic.Int64
	cloneOnly bool
	intern    map[string]string
	stop      atomic.Bool
	done      chan struct{}

	// Self-tests of the checker: dropOne makes the drainer throw away one
	// message it read (-inject-loss); pause holds it, until closed, while
	// the receiver is made to overrun (-inject-overrun).
	dropOne atomic.Bool
	pause   atomic.Pointer[chan struct{}]
}

// runClock orders the senders' broadcasts and the receivers' reads on one
// scale: a counter every thread advances with an atomic add, so a stamp
// taken before a system call and one taken after it bound what the call
// did, against any other thread's stamps. The fault modes' checker needs
// it to tie an ENOBUFS to the losses of its own overrun.
var runClock atomic.Int64

func stamp() int64 { return runClock.Add(1) }

// recv reads one datagram from sock and says when.
func recv(sock *nlsock.Socket) (nlsock.Datagram, verify.Span, error) {
	from := stamp()
	d, err := sock.Recv()
	return d, verify.Span{From: from, To: stamp()}, err
}

func newStable(kind string, home *netns.NS, sock *nlsock.Socket, want verify.Receiver) (*stable, error) {
	if err := sock.ForceReceiveBuffer(stableBuffer); err != nil {
		return nil, err
	}
	if err := sock.SetOption(unix.NETLINK_PKTINFO, true); err != nil {
		return nil, err
	}
	want.Name = fmt.Sprintf("%s %s", kind, sock)
	return &stable{kind: kind, home: home, want: want, sock: sock, intern: map[string]string{}, done: make(chan struct{})}, nil
}

// drain reads until stopped. stop is set only after every sender's last
// ACK, when every notification is already queued, so the queue being
// empty after stop means everything was read. An ENOBUFS (an overrun)
// and a read that finds the queue empty are kept in the stream as events:
// under injected allocation failures they are what accounts for a
// missing message; without, an ENOBUFS fails the receiver.
func (r *stable) drain() {
	defer close(r.done)
	for {
		stopped := r.stop.Load()
		for {
			d, at, err := recv(r.sock)
			if errors.Is(err, nlsock.ErrEmpty) {
				r.event(verify.Drained, at)
				break
			}
			if errors.Is(err, unix.ENOBUFS) {
				r.event(verify.Overrun, at)
				continue
			}
			if err != nil {
				r.errs = append(r.errs, err.Error())
				return
			}
			r.add(d, at)
		}
		if stopped {
			return
		}
		if p := r.pause.Load(); p != nil {
			<-*p
		}
		if _, err := r.sock.Wait(100 * time.Millisecond); err != nil {
			r.errs = append(r.errs, err.Error())
			return
		}
	}
}

// overrun is the ENOBUFS detector's self-test (-inject-overrun): the
// drainer stops reading, the receive buffer shrinks to the least the
// kernel allows, and once the kernel has dropped a notification for it
// (its drops counter rises: the senders go on broadcasting) the buffer
// and the drainer are back. The ENOBUFS it then reads must fail the
// receiver.
func (r *stable) overrun() error {
	ns := r.home
	before, err := r.sock.Drops(ns)
	if err != nil {
		return err
	}
	resume := make(chan struct{})
	r.pause.Store(&resume)
	defer func() {
		r.pause.Store(nil)
		close(resume)
	}()
	if err := r.sock.ForceReceiveBuffer(1); err != nil {
		return err
	}
	defer r.sock.ForceReceiveBuffer(stableBuffer)
	// The drops come from the senders' broadcasts, whenever the kernel
	// makes them: polled, with a deadline.
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); <-tick.C {
		n, err := r.sock.Drops(ns)
		if err != nil {
			return err
		}
		if n > before {
			return nil
		}
	}
	return fmt.Errorf("%s: no notification dropped within 10s with a receive buffer of the least size", r.want.Name)
}

// event records an Overrun or Drained in the stream, read at at; Drained
// once for a run of empty reads: the first is the one that ended an
// overrun, the ones after it say no more.
func (r *stable) event(e verify.Event, at verify.Span) {
	if n := len(r.got); e == verify.Drained && (n == 0 || r.got[n-1].Event == verify.Drained) {
		return
	}
	r.got = append(r.got, verify.Got{Event: e, At: at})
	if e == verify.Overrun {
		r.overruns.Add(1)
	}
}

func (r *stable) add(d nlsock.Datagram, at verify.Span) {
	for _, m := range d.Msgs {
		if r.dropOne.Load() && r.dropOne.CompareAndSwap(true, false) { // a load per message, not a locked write
			continue
		}
		g := toGot(d, m)
		g.At = at
		// Details repeat (a sender cycles through its addresses): one
		// copy of each keeps long runs small.
		if v, ok := r.intern[g.Detail]; ok {
			g.Detail = v
		} else {
			r.intern[g.Detail] = g.Detail
		}
		r.got = append(r.got, g)
	}
}

// toGot converts one received message: header, PKTINFO group, nsid cmsg
// and payload summary.
func toGot(d nlsock.Datagram, m netlink.Message) verify.Got {
	g := verify.Got{Msg: verify.Msg{Type: uint16(m.Header.Type), Seq: m.Header.Sequence, Pid: m.Header.PID, Detail: rtnl.Describe(m)}}
	if d.Group != nil {
		g.Group = *d.Group
	}
	if d.NSID != nil {
		g.Tag = verify.NSID(*d.NSID)
	}
	return g
}

// stopDrain stops the drainer and waits for it.
func (r *stable) stopDrain() {
	r.stop.Store(true)
	<-r.done
}

// judge compares the receiver's stream with the senders' transcripts
// (faults: nil unless allocations were made to fail).
func (r *stable) judge(names []string, transcripts [][]verify.Msg, faults *verify.Faults) verify.Report {
	rep := verify.Check(r.want, names, transcripts, r.got, faults)
	rep.Problems = append(r.errs, rep.Problems...)
	return rep
}

// expectEmpty judges a socket that nobody drains and that must have
// received nothing (the idle subscribers): its queue must be empty.
func expectEmpty(s *nlsock.Socket) string {
	d, err := s.Recv()
	switch {
	case errors.Is(err, nlsock.ErrEmpty):
		return ""
	case err != nil:
		return fmt.Sprintf("%s must receive nothing, but recvmsg says %v", s, err)
	case len(d.Msgs) == 0:
		return fmt.Sprintf("%s must receive nothing, but holds a datagram with no netlink message in it", s)
	}
	g := toGot(d, d.Msgs[0])
	return fmt.Sprintf("%s must receive nothing, but holds %s (%s) and %d more in its first datagram", s, g.Msg, g.Tag, len(d.Msgs)-1)
}
