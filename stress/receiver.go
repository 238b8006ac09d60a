// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

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
	want verify.Receiver
	sock *nlsock.Socket

	got    []verify.Got
	errs   []string
	intern map[string]string
	stop   atomic.Bool
	done   chan struct{}
}

func newStable(kind string, sock *nlsock.Socket, want verify.Receiver) (*stable, error) {
	if err := sock.ForceReceiveBuffer(stableBuffer); err != nil {
		return nil, err
	}
	if err := sock.SetOption(unix.NETLINK_PKTINFO, true); err != nil {
		return nil, err
	}
	want.Name = fmt.Sprintf("%s %s", kind, sock)
	return &stable{kind: kind, want: want, sock: sock, intern: map[string]string{}, done: make(chan struct{})}, nil
}

// drain reads until stopped. stop is set only after every sender's last
// ACK, when every notification is already queued, so the queue being
// empty after stop means everything was read.
func (r *stable) drain() {
	defer close(r.done)
	for {
		stopped := r.stop.Load()
		for {
			d, err := r.sock.Recv()
			if errors.Is(err, nlsock.ErrEmpty) {
				break
			}
			if errors.Is(err, unix.ENOBUFS) {
				r.errs = append(r.errs, fmt.Sprintf("%s: ENOBUFS: the receive queue overran (SO_RCVBUFFORCE %d bytes) and the kernel dropped notifications: "+
					"the run's design failed, its drainer did not keep up, so this receiver cannot be judged", r.want.Name, stableBuffer))
				continue
			}
			if err != nil {
				r.errs = append(r.errs, err.Error())
				return
			}
			r.add(d)
		}
		if stopped {
			return
		}
		if _, err := r.sock.Wait(100 * time.Millisecond); err != nil {
			r.errs = append(r.errs, err.Error())
			return
		}
	}
}

func (r *stable) add(d nlsock.Datagram) {
	for _, m := range d.Msgs {
		g := toGot(d, m)
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

// finish stops the drainer, waits for it and judges the receiver.
func (r *stable) finish(names []string, transcripts [][]verify.Msg) verify.Report {
	r.stop.Store(true)
	<-r.done
	rep := verify.Check(r.want, names, transcripts, r.got)
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
	}
	g := toGot(d, d.Msgs[0])
	return fmt.Sprintf("%s must receive nothing, but holds %s (%s)", s, g.Msg, g.Tag)
}
