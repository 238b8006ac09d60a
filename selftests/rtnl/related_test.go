// SPDX-License-Identifier: GPL-2.0

package rtnl

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// An NLMSG_DONE as netlink_dump_done() writes it for a failed dump:
// the negative errno, then NLMSGERR_ATTR_MSG, flagged NLM_F_ACK_TLVS.
func TestDoneError(t *testing.T) {
	code := make([]byte, 4)
	errno := -int32(unix.EACCES)
	binary.NativeEndian.PutUint32(code, uint32(errno))
	msg := attrs(func(ae *netlink.AttributeEncoder) {
		ae.String(unix.NLMSGERR_ATTR_MSG, "ipv4: Invalid target network namespace id")
	})
	done := netlink.Message{Header: netlink.Header{Type: netlink.Done, Flags: netlink.Multi | netlink.AcknowledgeTLVs}, Data: append(code, msg...)}
	err := DoneError("dump", done)
	var e *Error
	if !errors.As(err, &e) || e.Errno != unix.EACCES || e.Message != "ipv4: Invalid target network namespace id" {
		t.Errorf("DoneError = %v, want EACCES with the message", err)
	}
	ok := netlink.Message{Header: netlink.Header{Type: netlink.Done, Flags: netlink.Multi}, Data: make([]byte, 4)}
	if err := DoneError("dump", ok); err != nil {
		t.Errorf("DoneError of a successful dump = %v", err)
	}
}

func TestGetAddrsLayout(t *testing.T) {
	id := int32(-1)
	m := GetAddrs(&id).Msg
	want := append([]byte{unix.AF_INET, 0, 0, 0, 0, 0, 0, 0}, attr(unix.IFA_TARGET_NETNSID, 0xffffffff)...)
	if m.Header.Type != unix.RTM_GETADDR || string(m.Data) != string(want) {
		t.Errorf("type %d payload %x, want %d %x", m.Header.Type, m.Data, unix.RTM_GETADDR, want)
	}
	if len(GetAddrs(nil).Msg.Data) != unix.SizeofIfAddrmsg {
		t.Errorf("untargeted dump request carries attributes")
	}
}

func TestParseAddr(t *testing.T) {
	b := []byte{unix.AF_INET, 24, 0x80, 0, 5, 0, 0, 0}
	b = append(b, attr(unix.IFA_TARGET_NETNSID, 9)...)
	b = append(b, attr(unix.IFA_LOCAL, 0x0a0b0c0d)...)
	a, err := ParseAddr(netlink.Message{Header: netlink.Header{Type: unix.RTM_NEWADDR}, Data: b})
	if err != nil {
		t.Fatal(err)
	}
	if a.PrefixLen != 24 || a.Index != 5 || len(a.Attrs) != 2 {
		t.Fatalf("parsed %v", a)
	}
	if ids := a.TargetNSID(); len(ids) != 1 || ids[0] != 9 {
		t.Errorf("TargetNSID = %v, want [9]", ids)
	}
	plain := a.Without(unix.IFA_TARGET_NETNSID)
	if len(plain.TargetNSID()) != 0 || len(plain.Attrs) != 1 || plain.Equal(a) || !plain.Equal(plain) {
		t.Errorf("Without/Equal: %v against %v", plain, a)
	}
}

// The standalone action request has the layout of its notification:
// tcamsg, TCA_ROOT_TAB, one nest with kind and options.
func TestActionIndex(t *testing.T) {
	m := NewMirredAction(7, 1).Msg
	if got := Describe(netlink.Message{Header: netlink.Header{Type: unix.RTM_DELACTION}, Data: m.Data}); got != "mirred index 7" {
		t.Errorf("Describe = %q", got)
	}
}

func TestParseTCReplace(t *testing.T) {
	o, err := ParseTC(ReplaceU32(1, 1, U32FirstKey, 0x10001).Msg)
	if err != nil {
		t.Fatal(err)
	}
	if o.Ifindex != 1 || o.Handle != U32FirstKey || o.Parent != tcIngressHandle || o.Kind != "u32" || o.U32ClassID() != 0x10001 {
		t.Errorf("parsed %v", o)
	}
	c, err := ParseTC(NewChain(1, 7).Msg)
	if err != nil || c.Chain == nil || *c.Chain != 7 {
		t.Errorf("chain request parsed as %v, %v", c, err)
	}
}
