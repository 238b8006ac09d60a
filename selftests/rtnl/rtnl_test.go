// SPDX-License-Identifier: GPL-2.0

package rtnl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

func TestNewNSIDLayout(t *testing.T) {
	m := NewNSID(7, 42).Msg
	if m.Header.Type != unix.RTM_NEWNSID {
		t.Fatalf("type %d", m.Header.Type)
	}
	// rtgenmsg padded to 4 bytes, then NETNSA_NSID (s32) and NETNSA_FD (u32).
	want := []byte{unix.AF_UNSPEC, 0, 0, 0}
	want = append(want, attr(unix.NETNSA_NSID, 42)...)
	want = append(want, attr(unix.NETNSA_FD, 7)...)
	if string(m.Data) != string(want) {
		t.Errorf("payload %x, want %x", m.Data, want)
	}
	if id, err := NSIDOf(m); err != nil || id != 42 {
		t.Errorf("NSIDOf = %d, %v; want 42", id, err)
	}
}

func attr(typ uint16, v uint32) []byte {
	b := make([]byte, 8)
	binary.NativeEndian.PutUint16(b[0:], 8)
	binary.NativeEndian.PutUint16(b[2:], typ)
	binary.NativeEndian.PutUint32(b[4:], v)
	return b
}

func TestTcmsgLayout(t *testing.T) {
	b := tcmsg(1, 0xffff0000, 0xfffffff1, 0)
	if len(b) != 20 {
		t.Fatalf("tcmsg is %d bytes, want 20", len(b))
	}
	if got := binary.NativeEndian.Uint32(b[4:]); got != 1 {
		t.Errorf("ifindex %d", got)
	}
	if got := binary.NativeEndian.Uint32(b[8:]); got != 0xffff0000 {
		t.Errorf("handle %#x", got)
	}
	if got := binary.NativeEndian.Uint32(b[12:]); got != 0xfffffff1 {
		t.Errorf("parent %#x", got)
	}
}

// nlmsgerr builds an NLMSG_ERROR as the kernel sends it with NLM_F_CAPPED:
// the errno, the request's header alone, then the extack TLVs.
func nlmsgerr(errno int32, msg string) netlink.Message {
	b := make([]byte, 4+unix.NLMSG_HDRLEN)
	binary.NativeEndian.PutUint32(b, uint32(-errno))
	binary.NativeEndian.PutUint32(b[4:], unix.NLMSG_HDRLEN)
	flags := netlink.Capped
	if msg != "" {
		ae := netlink.NewAttributeEncoder()
		ae.String(unix.NLMSGERR_ATTR_MSG, msg)
		tlv, _ := ae.Encode()
		b = append(b, tlv...)
		flags |= netlink.AcknowledgeTLVs
	}
	return netlink.Message{Header: netlink.Header{Type: netlink.Error, Flags: flags}, Data: b}
}

func TestParseError(t *testing.T) {
	if err := ParseError("ack", nlmsgerr(0, "")); err != nil {
		t.Errorf("an ACK gave %v", err)
	}
	err := ParseError("RTM_NEWNSID", nlmsgerr(int32(unix.EEXIST), "Peer netns already has a nsid assigned"))
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, unix.EEXIST) {
		t.Fatalf("got %v, want an *Error wrapping EEXIST", err)
	}
	if e.Message != "Peer netns already has a nsid assigned" {
		t.Errorf("extack message %q", e.Message)
	}
	if ackErrno(nlmsgerr(int32(unix.ENOBUFS), "")) != int(unix.ENOBUFS) {
		t.Errorf("ackErrno did not return ENOBUFS")
	}
}

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{NewAddr(1, netip.MustParsePrefix("198.51.100.7/32")), "198.51.100.7/32 dev 1"},
		{NewAddr(1, netip.MustParsePrefix("2001:db8::1/128")), "2001:db8::1/128 dev 1"},
		{withIfaFlags(NewAddr(1, netip.MustParsePrefix("2001:db8::1/128")), unix.IFA_F_TENTATIVE), "2001:db8::1/128 dev 1 tentative"},
		{NewNexthop(Nexthop{ID: 10, Blackhole: true}), "id 10"},
		{NewIngress(1), "dev 1 ingress"},
		{NewNSID(3, 5), "nsid 5"},
		{NewMirredAction(7, 1), "mirred index 7"},
		{delAction(GetMirredAction(9)), "mirred index 9"}, // TCA_ACT_INDEX
	} {
		if got := Describe(tc.req.Msg); got != tc.want {
			t.Errorf("Describe(%s) = %q, want %q", tc.req.Name, got, tc.want)
		}
	}
}

// withIfaFlags sets an address message's ifa_flags byte.
func withIfaFlags(r Request, flags uint8) Request {
	r.Msg.Data = bytes.Clone(r.Msg.Data)
	r.Msg.Data[2] = flags
	return r
}

// delAction turns a request into an RTM_DELACTION with the same payload.
func delAction(r Request) Request {
	r.Msg.Header.Type = unix.RTM_DELACTION
	return r
}

// The action index tells two notifications apart: the kinds match, the
// indexes do not.
func TestDescribeActionIndex(t *testing.T) {
	if a, b := Describe(NewMirredAction(7, 1).Msg), Describe(NewMirredAction(8, 1).Msg); a == b {
		t.Errorf("actions 7 and 8 both describe as %q", a)
	}
}

func TestFlagNames(t *testing.T) {
	for _, tc := range []struct {
		typ, flags uint16
		want       string
	}{
		{unix.RTM_NEWROUTE, 0, "0"},
		{unix.RTM_NEWROUTE, unix.NLM_F_CREATE | unix.NLM_F_EXCL, "EXCL|CREATE"},
		{unix.RTM_NEWTFILTER, unix.NLM_F_REQUEST | unix.NLM_F_ACK | unix.NLM_F_ECHO | unix.NLM_F_REPLACE, "REQUEST|ACK|ECHO|REPLACE"},
		{unix.NLMSG_ERROR, unix.NLM_F_CAPPED, "CAPPED"},
		{unix.RTM_DELROUTE, unix.NLM_F_NONREC, "NONREC"},
		{unix.RTM_NEWADDR, 0x8000, "0x8000"},
	} {
		if got := FlagNames(tc.typ, tc.flags); got != tc.want {
			t.Errorf("FlagNames(%s, %#x) = %q, want %q", TypeName(tc.typ), tc.flags, got, tc.want)
		}
	}
}

// A neighbour message reads as destination, device and state.
func TestDescribeNeigh(t *testing.T) {
	ndmsg := make([]byte, 12)
	ndmsg[0] = unix.AF_INET
	binary.NativeEndian.PutUint32(ndmsg[4:], 3)
	binary.NativeEndian.PutUint16(ndmsg[8:], unix.NUD_REACHABLE)
	ae := netlink.NewAttributeEncoder()
	ae.Bytes(unix.NDA_DST, []byte{192, 0, 2, 2})
	attrs, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	m := netlink.Message{Header: netlink.Header{Type: unix.RTM_NEWNEIGH}, Data: append(ndmsg, attrs...)}
	if got, want := Describe(m), "192.0.2.2 dev 3 reachable"; got != want {
		t.Errorf("Describe(RTM_NEWNEIGH) = %q, want %q", got, want)
	}
	binary.NativeEndian.PutUint16(m.Data[8:], unix.NUD_STALE|0x100)
	if got, want := Describe(m), "192.0.2.2 dev 3 stale|state 0x100"; got != want {
		t.Errorf("Describe(RTM_NEWNEIGH) = %q, want %q", got, want)
	}
}

// Describes names exactly the types Describe summarises; the others'
// payloads are compared byte for byte by the transcripts.
func TestDescribes(t *testing.T) {
	for typ, want := range map[uint16]bool{unix.RTM_NEWADDR: true, unix.RTM_DELNSID: true, unix.NLMSG_ERROR: true,
		unix.RTM_NEWACTION: true, unix.RTM_NEWRULE: false, unix.NLMSG_NOOP: false, unix.NLMSG_DONE: false} {
		if got := Describes(typ); got != want {
			t.Errorf("Describes(%s) = %v, want %v", TypeName(typ), got, want)
		}
	}
	if d := Describe(netlink.Message{Header: netlink.Header{Type: unix.RTM_NEWRULE}, Data: []byte{2, 32}}); d != "" {
		t.Errorf("Describe of an undescribed type = %q, want \"\"", d)
	}
}
