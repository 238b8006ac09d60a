// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// chunk is how many requests go into one sendmsg. The kernel handles them
// one after another in that call and queues one ACK each, so the ACKs of a
// chunk are all queued when sendmsg returns; the control socket's buffer
// (controlBuffer) holds far more than a chunk's ACKs.
const chunk = 128

// encoded is a run of requests in one buffer, with each message's offset,
// so that a chunk is one contiguous slice and a sequence number is patched
// in place.
type encoded struct {
	buf  []byte
	offs []int // offs[i] is message i's start; offs[len] the end
}

func encode(reqs []rtnl.Request) (encoded, error) {
	var e encoded
	for _, r := range reqs {
		m := r.Msg
		m.Header.Flags |= netlink.Request | netlink.Acknowledge
		m.Header.Length = uint32(unix.NLMSG_HDRLEN + len(m.Data))
		b, err := m.MarshalBinary()
		if err != nil {
			return e, fmt.Errorf("%s: %w", r.Name, err)
		}
		e.offs = append(e.offs, len(e.buf))
		e.buf = append(e.buf, b...)
		e.buf = append(e.buf, make([]byte, nlsock.Align(len(b))-len(b))...)
	}
	e.offs = append(e.offs, len(e.buf))
	return e, nil
}

func (e encoded) count() int { return len(e.offs) - 1 }

// setSeqs numbers message i base+i.
func (e encoded) setSeqs(base uint32) {
	for i := 0; i < e.count(); i++ {
		binary.NativeEndian.PutUint32(e.buf[e.offs[i]+8:], base+uint32(i))
	}
}

// reserveSeqs takes n consecutive sequence numbers from rtnl's counter
// (setup: the routes' creation).
func reserveSeqs(n int) uint32 {
	first := rtnl.NextSeq()
	for i := 1; i < n; i++ {
		rtnl.NextSeq()
	}
	return first
}

// pipeline sends e from fd chunk by chunk and checks every ACK: one
// NLMSG_ERROR with error 0 and the request's sequence number, in order.
// ackBuf is reused.
func pipeline(fd int, e encoded, base uint32, ackBuf []byte) error {
	n := e.count()
	for start := 0; start < n; start += chunk {
		end := min(start+chunk, n)
		if _, err := rawWrite(fd, e.buf[e.offs[start]:e.offs[end]]); err != nil {
			return fmt.Errorf("sendmsg of requests %d..%d: %w", start, end-1, err)
		}
		for i := start; i < end; {
			got, err := rawRead(fd, ackBuf)
			if err != nil {
				if errors.Is(err, unix.EAGAIN) {
					return fmt.Errorf("request %d (seq %d): no ACK queued after its sendmsg returned", i, base+uint32(i))
				}
				return fmt.Errorf("request %d: reading its ACK: %w", i, err)
			}
			// Parsed in place: the ACKs are most of what userspace
			// reads, and the tool's own cost must stay small.
			for b := ackBuf[:got]; len(b) > 0; i++ {
				want := base + uint32(i)
				if len(b) < unix.NLMSG_HDRLEN+4 {
					return fmt.Errorf("request %d (seq %d): short ACK datagram (%d bytes)", i, want, len(b))
				}
				l := int(binary.NativeEndian.Uint32(b))
				typ := binary.NativeEndian.Uint16(b[4:])
				seq := binary.NativeEndian.Uint32(b[8:])
				switch {
				case l < unix.NLMSG_HDRLEN+4 || l > len(b):
					return fmt.Errorf("request %d (seq %d): ACK length %d out of range", i, want, l)
				case typ != unix.NLMSG_ERROR:
					return fmt.Errorf("request %d (seq %d): got message type %d, want an ACK", i, want, typ)
				case seq != want:
					return fmt.Errorf("request %d: ACK with seq %d, want %d", i, seq, want)
				}
				if code := int32(binary.NativeEndian.Uint32(b[unix.NLMSG_HDRLEN:])); code != 0 {
					m := netlink.Message{Header: netlink.Header{Length: uint32(l), Type: netlink.HeaderType(typ),
						Flags: netlink.HeaderFlags(binary.NativeEndian.Uint16(b[6:])), Sequence: seq},
						Data: bytes.Clone(b[unix.NLMSG_HDRLEN:l])}
					return rtnl.ParseError(fmt.Sprintf("request %d (seq %d)", i, want), m)
				}
				b = b[min(len(b), nlsock.Align(l)):]
			}
		}
	}
	return nil
}

// sendAll sends reqs through the pipeline (setup).
func sendAll(c *rtnl.Conn, reqs []rtnl.Request) error {
	e, err := encode(reqs)
	if err != nil {
		return err
	}
	base := reserveSeqs(e.count())
	e.setSeqs(base)
	return pipeline(c.Sock.FD(), e, base, make([]byte, 1<<16))
}

// batch is a source's work unit: replace every route, the nexthop of route
// i alternating between A and B from one batch to the next.
type batch struct {
	src      *source
	routes   int
	reqs     [2]encoded // by parity
	dsts     [][4]byte
	ackBuf   []byte
	rxBuf    []byte
	oob      []byte
	seen     []bool
	parity   int
	seqStart uint32 // the first sequence number of the batch's span
	seqOff   uint32 // the next unit's first, from seqStart
}

// batchSeqBase is where the sequence numbers of source i's batches start,
// and batchSeqSpan how many each may use before they wrap (2^28: 100000
// units of 2640 routes). Each batch counts on its own, inside the timed
// unit, instead of taking each number from rtnl's shared counter: 2640
// atomic increments per unit on one cache line that PAR's two senders
// would contend for. The numbers need only be unique on the source's
// control socket and in its namespace; rtnl's counter, which setup
// requests on the same socket use, stays far below 2^31.
const (
	batchSeqBase = 1 << 31
	batchSeqSpan = 1 << 28
)

func newBatch(src *source, index, routes int) (*batch, error) {
	b := &batch{src: src, routes: routes, seqStart: batchSeqBase + uint32(index)*batchSeqSpan,
		ackBuf: make([]byte, 1<<16), rxBuf: make([]byte, 1<<16),
		oob: make([]byte, 3*unix.CmsgSpace(4)), seen: make([]bool, routes)}
	for i := 0; i < routes; i++ {
		b.dsts = append(b.dsts, routePrefix(i).Addr().As4())
	}
	for p := range b.reqs {
		reqs := make([]rtnl.Request, routes)
		for i := range reqs {
			reqs[i] = rtnl.ReplaceRoute(rtnl.Route{Dst: routePrefix(i), NHID: nexthopFor(i, p)})
		}
		var err error
		if b.reqs[p], err = encode(reqs); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// nexthopFor is route i's nexthop in a batch of parity p: even routes go
// to B in parity 0 and back to A in parity 1, odd ones the other way
// round. Setup creates the routes as parity 1 leaves them, so every request
// of every batch changes its route.
func nexthopFor(i, p int) uint32 {
	if (i+p)%2 == 0 {
		return nexthopB
	}
	return nexthopA
}

// run is one work unit: send, check ACKs, drain and validate every
// recipient.
func (b *batch) run() error {
	p := b.parity
	b.parity ^= 1
	e := b.reqs[p]
	base := b.seqStart + b.seqOff
	if b.seqOff += uint32(b.routes); b.seqOff > batchSeqSpan-uint32(b.routes) {
		b.seqOff = 0 // wrap within the batch's own span
	}
	e.setSeqs(base)
	if err := pipeline(b.src.ctl.Sock.FD(), e, base, b.ackBuf); err != nil {
		return fmt.Errorf("netns %s: %w", b.src.ns.Name, err)
	}
	for _, r := range b.src.recipients {
		if err := b.drain(r, base, p); err != nil {
			return err
		}
	}
	return nil
}

// recipient is a socket that receives each notification exactly once;
// nsid is the NETLINK_LISTEN_ALL_NSID id it must carry (-1: none).
type recipient struct {
	sock *nlsock.Socket
	nsid int32
}

// drain reads r's queue to the end and validates it against the batch
// with sequence numbers base.. and parity p.
func (b *batch) drain(r *recipient, base uint32, p int) error {
	clear(b.seen)
	v := validator{routes: b.routes, base: base, parity: p, dsts: b.dsts, seen: b.seen,
		portid: b.src.ctl.Portid(), nsid: r.nsid}
	for {
		var n, oobn int
		var err error
		if r.nsid >= 0 {
			n, oobn, err = rawRecvmsg(r.sock.FD(), b.rxBuf, b.oob)
		} else {
			n, err = rawRead(r.sock.FD(), b.rxBuf)
		}
		if errors.Is(err, unix.EAGAIN) {
			break
		}
		if errors.Is(err, unix.ENOBUFS) {
			return fmt.Errorf("%s: overrun (ENOBUFS) after %d of %d notifications", r.sock, v.count, b.routes)
		}
		if err != nil {
			return fmt.Errorf("%s: recv: %w", r.sock, err)
		}
		if r.nsid >= 0 {
			if err := v.checkNSID(b.oob[:oobn]); err != nil {
				return fmt.Errorf("%s: %w", r.sock, err)
			}
		}
		if err := v.datagram(b.rxBuf[:n]); err != nil {
			return fmt.Errorf("%s: %w", r.sock, err)
		}
	}
	if v.count != b.routes {
		return fmt.Errorf("%s: %d notifications, want %d (one per route)", r.sock, v.count, b.routes)
	}
	return nil
}
