// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// Line is one entry of a socket's transcript: a received netlink message
// with everything the kernel told about it, or a receive error.
type Line struct {
	Type     uint16
	Flags    uint16 // nlmsg_flags
	Seq, Pid uint32 // nlmsghdr
	FromPid  uint32 // msg_name nl_pid (0: the kernel)
	FromMask uint32 // msg_name nl_groups
	PktInfo  *uint32
	NSID     *int32
	Creds    *unix.Ucred // SCM_CREDENTIALS
	Detail   string      // rtnl.Describe of the payload, or rtnl.RawDetail for a type it does not know
	// Payload is the payload of a message of a type rtnl.Describe does
	// not know, compared byte for byte; nil for the types it knows.
	Payload []byte
	Err     error // a recvmsg error (ENOBUFS) instead of a message
	// invalid says why an expected message cannot be judged (a type
	// without a description and no Payload given, say): it matches
	// nothing.
	invalid string
}

func (l Line) String() string {
	if l.Err != nil {
		return "recvmsg error " + errnoName(l.Err)
	}
	if l.invalid != "" {
		return rtnl.TypeName(l.Type) + " (cannot be judged: see above)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s flags=%s seq=%d pid=%d from=%d/%#x", rtnl.TypeName(l.Type), rtnl.FlagNames(l.Type, l.Flags), l.Seq, l.Pid, l.FromPid, l.FromMask)
	if l.PktInfo != nil {
		fmt.Fprintf(&b, " pktinfo=%d", *l.PktInfo)
	}
	if l.NSID != nil {
		fmt.Fprintf(&b, " nsid=%d", *l.NSID)
	}
	if l.Creds != nil {
		fmt.Fprintf(&b, " creds=%d/%d/%d", l.Creds.Pid, l.Creds.Uid, l.Creds.Gid)
	}
	if l.Detail != "" {
		fmt.Fprintf(&b, " [%s]", l.Detail)
	}
	return b.String()
}

func errnoName(err error) string {
	var errno unix.Errno
	if errors.As(err, &errno) {
		if n := unix.ErrnoName(errno); n != "" {
			return n
		}
	}
	return err.Error()
}

func lines(d nlsock.Datagram) []Line {
	var out []Line
	for _, m := range d.Msgs {
		l := Line{
			Type: uint16(m.Header.Type), Flags: uint16(m.Header.Flags), Seq: m.Header.Sequence, Pid: m.Header.PID,
			FromPid: d.FromPid, FromMask: d.FromMask, PktInfo: d.Group, NSID: d.NSID, Creds: d.Creds,
			Detail: rtnl.Describe(m),
		}
		if !rtnl.Describes(l.Type) {
			l.Payload = append([]byte{}, m.Data...)
			l.Detail = rtnl.RawDetail(m.Data)
		}
		out = append(out, l)
	}
	return out
}

// Msg is an expected message. Its payload is judged by Detail for a type
// rtnl.Describe knows, and byte for byte, as given with Payload, for any
// other type: an expected message of such a type without Payload fails
// the check, naming the description it lacks. The socket it is expected
// on fills in the rest: msg_name shows the group as a bitmask (0 above 32), a socket
// with NETLINK_PKTINFO gets the group in a control message, and one with
// SO_PASSCRED the sender's credentials: the kernel's (pid, uid and gid 0)
// for a message the kernel sent, those given with Creds for a user's.
type Msg struct {
	Type     uint16
	Flags    uint16 // nlmsg_flags, compared exactly on every socket
	Seq, Pid uint32
	Group    uint32 // the destination group (0 for a unicast)
	FromPid  uint32 // the sender's portid for user multicast, else 0
	Detail   string // compared when not empty; only for a type rtnl.Describes
	payload  []byte // set by Payload
	hasPay   bool
	nsid     *int32
	creds    *unix.Ucred
	err      error
}

// Creds gives the credentials an SO_PASSCRED receiver gets with m, sent
// by a user socket: the sender's process id and real uid and gid.
func (m Msg) Creds(pid int32, uid, gid uint32) Msg {
	m.creds = &unix.Ucred{Pid: pid, Uid: uid, Gid: gid}
	return m
}

// Payload gives the exact payload of a message of a type rtnl.Describe
// does not know (an NLMSG_NOOP from a user, say); nil or empty for none.
// A message the kernel builds, whose payload a case cannot predict byte
// for byte, needs a description in selftests/rtnl instead (HACKING.md).
func (m Msg) Payload(b []byte) Msg {
	m.payload, m.hasPay = append([]byte{}, b...), true
	return m
}

// NSID says the message comes from another namespace whose id, in the
// receiver's namespace, is id: a LISTEN_ALL_NSID receiver gets it as a
// control message.
func (m Msg) NSID(id int32) Msg { m.nsid = &id; return m }

// FromNSID returns msgs as a receiver sees them that has the id id for
// their source namespace: each with NSID(id).
func FromNSID(id int32, msgs ...Msg) []Msg {
	out := make([]Msg, len(msgs))
	for i, m := range msgs {
		out[i] = m.NSID(id)
	}
	return out
}

// Notification is a message the kernel multicasts on group without a
// request behind it (seq 0, pid 0).
func Notification(typ uint16, group uint32, detail string) Msg {
	return Msg{Type: typ, Group: group, Detail: detail}
}

// RecvError is a recvmsg() that fails with errno, e.g. ENOBUFS after an
// overrun.
func RecvError(errno unix.Errno) Msg { return Msg{err: errno} }

// Ack is the ACK of the request with sequence seq sent by portid pid. A
// success ACK carries only the request's header, never its payload, and
// says so with NLM_F_CAPPED (netlink_ack(): the payload is copied only for
// an error without NETLINK_CAP_ACK; every other ACK gets NLM_F_CAPPED; the
// same on 6.1, 6.12 and 6.18). The subscriber sockets that request have no
// NETLINK_EXT_ACK, so no NLM_F_ACK_TLVS.
func Ack(seq, pid uint32) Msg {
	return Msg{Type: unix.NLMSG_ERROR, Flags: unix.NLM_F_CAPPED, Seq: seq, Pid: pid, Detail: rtnl.AckDetail(0)}
}

// line is what m looks like on s.
func (m Msg) line(s *nlsock.Socket) Line {
	if m.err != nil {
		return Line{Err: m.err}
	}
	l := Line{Type: m.Type, Flags: m.Flags, Seq: m.Seq, Pid: m.Pid, FromPid: m.FromPid, FromMask: nlsock.GroupMask(m.Group), Detail: m.Detail}
	if l.invalid = m.unjudgeable(); l.invalid != "" {
		return l
	}
	if !rtnl.Describes(m.Type) {
		l.Payload, l.Detail = m.payload, rtnl.RawDetail(m.payload)
	}
	if s.PktInfo() {
		g := m.Group
		l.PktInfo = &g
	}
	if s.AllNSID() {
		l.NSID = m.nsid
	}
	if s.PassCred() {
		// A kernel skb's credentials are zero (__alloc_skb() clears
		// the control buffer); a user's message must state its own.
		l.Creds = m.creds
		if m.creds == nil && m.FromPid == 0 {
			l.Creds = &unix.Ucred{}
		}
	}
	return l
}

// unjudgeable says why m's payload cannot be judged, or "": a type
// rtnl.Describe does not know needs Payload, and one it knows a Detail
// instead of a Payload.
func (m Msg) unjudgeable() string {
	switch described := rtnl.Describes(m.Type); {
	case !described && !m.hasPay:
		return fmt.Sprintf("%s has no description in selftests/rtnl/describe.go: give the exact payload with Msg.Payload, or add a description (HACKING.md)", rtnl.TypeName(m.Type))
	case described && m.hasPay:
		return fmt.Sprintf("%s is described by rtnl.Describe: expect its Detail, not a Payload", rtnl.TypeName(m.Type))
	case !described && m.Detail != "":
		return fmt.Sprintf("%s has no description: its Detail is made from its Payload, not given", rtnl.TypeName(m.Type))
	}
	return ""
}

// matches says whether l is what want expects. A payload of a type
// rtnl.Describe knows is judged by its Detail, when want has one; any
// other payload byte for byte.
func (l Line) matches(want Line) bool {
	if want.invalid != "" || l.invalid != "" {
		return false
	}
	if want.Err != nil || l.Err != nil {
		return want.Err != nil && l.Err != nil && errors.Is(l.Err, want.Err)
	}
	payload := want.Detail == "" || l.Detail == want.Detail
	if !rtnl.Describes(want.Type) {
		payload = bytes.Equal(l.Payload, want.Payload)
	}
	return l.Type == want.Type && l.Flags == want.Flags && l.Seq == want.Seq && l.Pid == want.Pid &&
		l.FromPid == want.FromPid && l.FromMask == want.FromMask &&
		eqPtr(l.PktInfo, want.PktInfo) && eqPtr(l.NSID, want.NSID) && eqPtr(l.Creds, want.Creds) && payload
}

func eqPtr[V comparable](a, b *V) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// diff compares whole transcripts and renders them side by side, marking
// each differing row with '!'. It returns "" when they match.
func diff(want, got []Line) string {
	same := len(want) == len(got)
	for i := 0; same && i < len(want); i++ {
		same = got[i].matches(want[i])
	}
	if same {
		return ""
	}
	ws, gs := render(want), render(got)
	width := len("expected")
	for _, s := range ws {
		width = max(width, len(s))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  %-*s | %s\n", width, "expected", "actual")
	for i := 0; i < max(len(ws), len(gs)); i++ {
		w, g, mark := "-", "-", "!"
		if i < len(ws) {
			w = ws[i]
		}
		if i < len(gs) {
			g = gs[i]
		}
		if i < len(want) && i < len(got) && got[i].matches(want[i]) {
			mark = " "
		}
		fmt.Fprintf(&b, "%s %-*s | %s\n", mark, width, w, g)
	}
	return strings.TrimRight(b.String(), "\n")
}

// indent joins rendered lines, each indented, for a log message.
func indent(rows []string) string {
	return "  " + strings.Join(rows, "\n  ")
}

func render(ls []Line) []string {
	if len(ls) == 0 {
		return []string{"(nothing)"}
	}
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.String()
	}
	return out
}

// sentinel builds the unicast message that marks the end of a transcript.
func sentinel(seq, pid uint32) netlink.Message {
	// NLMSG_NOOP without NLM_F_REQUEST: a kernel socket would ignore it,
	// and it is sent to a user socket anyway.
	return netlink.Message{Header: netlink.Header{Type: unix.NLMSG_NOOP, Sequence: seq, PID: pid}}
}
