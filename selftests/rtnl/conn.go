// SPDX-License-Identifier: GPL-2.0

// Package rtnl sends rtnetlink requests from a control socket and builds the
// request messages the cases need: addresses, links and veth pairs, device
// moves, netns ids, nexthops, routes, interface statistics and tc objects.
//
// A control socket joins no group, so the only messages it receives are the
// replies to its own requests; the ACK of a request is the barrier after
// which every notification the request caused is queued on every recipient.
package rtnl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests/netns"
	"nlmcast/selftests/nlsock"
)

// seq numbers requests process-wide, so that a sequence number in a
// transcript points at exactly one request.
var seq atomic.Uint32

// NextSeq returns a fresh sequence number.
func NextSeq() uint32 { return seq.Add(1) }

// Conn is a NETLINK_ROUTE control socket in one namespace.
type Conn struct {
	Sock *nlsock.Socket
}

// Dial opens a control socket in ns, bound and with extended ACKs.
func Dial(ns *netns.NS) (*Conn, error) {
	s, err := nlsock.Open(ns, unix.NETLINK_ROUTE, "ctl")
	if err != nil {
		return nil, err
	}
	if err := s.Bind(0, 0); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.SetOption(unix.NETLINK_EXT_ACK, true); err != nil {
		s.Close()
		return nil, err
	}
	return &Conn{Sock: s}, nil
}

// Close closes the control socket.
func (c *Conn) Close() error { return c.Sock.Close() }

// Portid is the control socket's port id: the nlmsg_pid of every
// notification its requests cause.
func (c *Conn) Portid() uint32 { return c.Sock.Portid() }

// Error is a request the kernel refused.
type Error struct {
	Request string
	Errno   unix.Errno
	Message string // the extended ACK text, if any
	// Offset is where in the request the kernel says the bad attribute
	// starts (NLMSGERR_ATTR_OFFS, from the request's nlmsghdr), 0 if it
	// names none.
	Offset uint32
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %v", e.Request, e.Errno)
	if e.Message != "" {
		s += fmt.Sprintf(" (%s)", e.Message)
	}
	if e.Offset != 0 {
		s += fmt.Sprintf(" [bad attribute at offset %d]", e.Offset)
	}
	return s
}

func (e *Error) Unwrap() error { return e.Errno }

// Request is a message plus what it is called in diagnostics.
type Request struct {
	Name string
	Msg  netlink.Message
}

// Reply is what came back for one request: messages other than the ACK
// (echoes, GET replies) and the sequence number the request was sent with.
type Reply struct {
	Seq   uint32
	Flags uint16 // the nlmsg_flags the request was sent with
	Msgs  []netlink.Message
}

// Do sends r with NLM_F_REQUEST|NLM_F_ACK and reads up to its ACK. When Do
// returns, every notification the request caused has been queued.
func (c *Conn) Do(r Request) (Reply, error) {
	m := r.Msg
	m.Header.Flags |= netlink.Request | netlink.Acknowledge
	m.Header.Sequence = NextSeq()
	if err := c.Sock.SendTo(m, 0, 0); err != nil {
		return Reply{}, fmt.Errorf("%s: %w", r.Name, err)
	}
	rep := Reply{Seq: m.Header.Sequence, Flags: uint16(m.Header.Flags)}
	for {
		d, err := c.recv(r.Name)
		if err != nil {
			return rep, err
		}
		for _, got := range d.Msgs {
			if got.Header.Sequence != m.Header.Sequence {
				return rep, fmt.Errorf("%s: reply with sequence %d, want %d", r.Name, got.Header.Sequence, m.Header.Sequence)
			}
			if got.Header.Type == netlink.Error {
				if err := ParseError(r.Name, got); err != nil {
					return rep, err
				}
				return rep, nil
			}
			rep.Msgs = append(rep.Msgs, got)
		}
	}
}

// Dump sends r with NLM_F_REQUEST|NLM_F_DUMP and returns the messages up to
// NLMSG_DONE, or the error the NLMSG_DONE carries.
func (c *Conn) Dump(r Request) ([]netlink.Message, error) {
	parts, err := c.DumpParts(r)
	return slices.Concat(parts...), err
}

// DumpParts is Dump, keeping the datagrams apart: the kernel fills one
// skb per pass of the dump callback, so a dump too long for one comes in
// several, the last ending with NLMSG_DONE (not returned).
func (c *Conn) DumpParts(r Request) ([][]netlink.Message, error) {
	m := r.Msg
	m.Header.Flags |= netlink.Request | netlink.Dump
	m.Header.Sequence = NextSeq()
	if err := c.Sock.SendTo(m, 0, 0); err != nil {
		return nil, fmt.Errorf("%s: %w", r.Name, err)
	}
	var parts [][]netlink.Message
	for {
		d, err := c.recv(r.Name)
		if err != nil {
			return nil, err
		}
		var part []netlink.Message
		for _, got := range d.Msgs {
			switch got.Header.Type {
			case netlink.Done:
				if err := DoneError(r.Name, got); err != nil {
					return nil, err
				}
				return append(parts, part), nil
			case netlink.Error:
				if err := ParseError(r.Name, got); err != nil {
					return nil, err
				}
			default:
				if got.Header.Flags&netlink.DumpInterrupted != 0 {
					return nil, fmt.Errorf("%s: dump interrupted", r.Name)
				}
				part = append(part, got)
			}
		}
		parts = append(parts, part)
	}
}

// recv waits for the next reply. Replies to a request are queued before
// sendmsg returns, and later dump parts are produced by recvmsg itself, so
// the wait only guards against a kernel that never answers.
func (c *Conn) recv(name string) (nlsock.Datagram, error) {
	for {
		d, err := c.Sock.Recv()
		if !errors.Is(err, nlsock.ErrEmpty) {
			if err != nil {
				return d, fmt.Errorf("%s: %w", name, err)
			}
			return d, nil
		}
		ok, err := c.Sock.Wait(5 * time.Second)
		if err != nil {
			return d, fmt.Errorf("%s: %w", name, err)
		}
		if !ok {
			return d, fmt.Errorf("%s: no reply within 5s", name)
		}
	}
}

// ParseError turns an NLMSG_ERROR message into nil (an ACK) or an *Error.
func ParseError(name string, m netlink.Message) error {
	if len(m.Data) < 4 {
		return fmt.Errorf("%s: short NLMSG_ERROR", name)
	}
	code := int32(binary.NativeEndian.Uint32(m.Data))
	if code == 0 {
		return nil
	}
	e := &Error{Request: name, Errno: unix.Errno(-code)}
	e.readExtack(m)
	return e
}

// ackErrno returns the errno an NLMSG_ERROR message carries (0 for an ACK).
func ackErrno(m netlink.Message) int {
	if len(m.Data) < 4 {
		return -1
	}
	return int(-int32(binary.NativeEndian.Uint32(m.Data)))
}

// readExtack fills e's Message and Offset from the extended ACK TLVs of
// the NLMSG_ERROR m, if it has any.
func (e *Error) readExtack(m netlink.Message) {
	if m.Header.Flags&netlink.AcknowledgeTLVs == 0 {
		return
	}
	// struct nlmsgerr: error (4) + the original header (16) + its payload
	// unless NLM_F_CAPPED; the TLVs follow.
	off := 4 + unix.NLMSG_HDRLEN
	if m.Header.Flags&netlink.Capped == 0 && len(m.Data) >= off {
		off = 4 + int(binary.NativeEndian.Uint32(m.Data[4:]))
	}
	if off > len(m.Data) {
		return
	}
	e.readTLVs(m.Data[nlsock.Align(off):])
}

// readTLVs takes the extended ACK attributes the kernel reports.
func (e *Error) readTLVs(b []byte) {
	forAttrs(b, func(typ uint16, v []byte) {
		switch {
		case typ == unix.NLMSGERR_ATTR_MSG:
			e.Message = string(trimNUL(v))
		case typ == unix.NLMSGERR_ATTR_OFFS && len(v) == 4:
			e.Offset = binary.NativeEndian.Uint32(v)
		}
	})
}

// attrs encodes attributes, panicking on an encoder error: the encoders here
// only fail on programming mistakes (oversized attributes).
func attrs(fn func(ae *netlink.AttributeEncoder)) []byte {
	ae := netlink.NewAttributeEncoder()
	fn(ae)
	b, err := ae.Encode()
	if err != nil {
		panic(err)
	}
	return b
}

func message(typ uint16, flags netlink.HeaderFlags, data ...[]byte) netlink.Message {
	var b []byte
	for _, d := range data {
		b = append(b, d...)
	}
	return netlink.Message{Header: netlink.Header{Type: netlink.HeaderType(typ), Flags: flags}, Data: b}
}
