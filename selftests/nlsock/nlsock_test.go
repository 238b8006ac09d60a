// SPDX-License-Identifier: GPL-2.0

package nlsock

import (
	"encoding/binary"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func header(b []byte, length uint32, typ uint16, seq uint32) []byte {
	h := make([]byte, 16)
	binary.NativeEndian.PutUint32(h[0:], length)
	binary.NativeEndian.PutUint16(h[4:], typ)
	binary.NativeEndian.PutUint32(h[8:], seq)
	return append(b, h...)
}

func TestParseMessages(t *testing.T) {
	// Two messages: one with a 5-byte payload padded to 8, one bare.
	var b []byte
	b = header(b, 16+5, unix.RTM_NEWADDR, 1)
	b = append(b, 1, 2, 3, 4, 5, 0, 0, 0)
	b = header(b, 16, unix.NLMSG_NOOP, 2)
	msgs, err := ParseMessages(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || len(msgs[0].Data) != 5 || msgs[0].Header.Sequence != 1 || msgs[1].Header.Type != unix.NLMSG_NOOP {
		t.Errorf("got %+v", msgs)
	}
}

func TestParseMessagesRejectsBadLengths(t *testing.T) {
	for name, b := range map[string][]byte{
		"short header":     make([]byte, 10),
		"length too small": header(nil, 8, 1, 0),
		"length past end":  header(nil, 64, 1, 0),
		"trailing garbage": append(header(nil, 16, 1, 0), 0, 0),
	} {
		if _, err := ParseMessages(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// controlBuffer builds a control buffer of 4-byte SOL_NETLINK control
// messages of the given types, as recvmsg() returns it.
func controlBuffer(types []int32, values ...uint32) []byte {
	oob := make([]byte, len(types)*unix.CmsgSpace(4))
	for i, typ := range types {
		off := i * unix.CmsgSpace(4)
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[off]))
		h.Level, h.Type = unix.SOL_NETLINK, typ
		h.SetLen(unix.CmsgLen(4))
		binary.NativeEndian.PutUint32(oob[off+unix.CmsgLen(0):], values[i])
	}
	return oob
}

func TestDatagramControlMessages(t *testing.T) {
	oob := controlBuffer([]int32{unix.NETLINK_PKTINFO, unix.NETLINK_LISTEN_ALL_NSID}, 36, 0)
	var d Datagram
	if err := d.parseControl(oob); err != nil {
		t.Fatal(err)
	}
	if d.Group == nil || *d.Group != 36 || d.NSID == nil || *d.NSID != 0 {
		t.Errorf("group %v nsid %v, want 36 and 0", d.Group, d.NSID)
	}
}

func TestGroupMask(t *testing.T) {
	for g, want := range map[uint32]uint32{0: 0, 1: 1, 5: 0x10, 32: 0x80000000, 33: 0, 36: 0} {
		if got := GroupMask(g); got != want {
			t.Errorf("GroupMask(%d) = %#x, want %#x", g, got, want)
		}
	}
	if got := GroupMask(5, 7, 36); got != 0x50 {
		t.Errorf("GroupMask(5, 7, 36) = %#x, want 0x50", got)
	}
}

// A datagram must carry each control message at most once: a second
// PKTINFO or nsid is an error, not a silent overwrite.
func TestDatagramDuplicateControlMessages(t *testing.T) {
	for name, types := range map[string][]int32{
		"two PKTINFO":            {unix.NETLINK_PKTINFO, unix.NETLINK_PKTINFO},
		"two nsids":              {unix.NETLINK_LISTEN_ALL_NSID, unix.NETLINK_LISTEN_ALL_NSID},
		"nsid, PKTINFO, nsid":    {unix.NETLINK_LISTEN_ALL_NSID, unix.NETLINK_PKTINFO, unix.NETLINK_LISTEN_ALL_NSID},
		"PKTINFO, nsid, PKTINFO": {unix.NETLINK_PKTINFO, unix.NETLINK_LISTEN_ALL_NSID, unix.NETLINK_PKTINFO},
	} {
		var d Datagram
		err := d.parseControl(controlBuffer(types, 5, 7, 5))
		if err == nil {
			t.Errorf("%s: accepted (group %v, nsid %v)", name, d.Group, d.NSID)
		} else if !strings.Contains(err.Error(), "two ") {
			t.Errorf("%s: %v, want an error naming the duplicate", name, err)
		}
	}
	var d Datagram
	if err := d.parseControl(controlBuffer([]int32{unix.NETLINK_PKTINFO}, 5)); err != nil || d.Group == nil || *d.Group != 5 || d.NSID != nil {
		t.Errorf("one PKTINFO: group %v nsid %v err %v, want group 5 and no nsid", d.Group, d.NSID, err)
	}
}

func TestParseInUse(t *testing.T) {
	const text = `protocol  size sockets  memory press maxhdr  slab module     cl co di ac io in de sh ss gs se re bi br ha uh gp em
PACKET    1600      2      -1   NI       0   no   kernel      n  n  n  n  n  n  n  n  n  n  n  n  n  n  n  n  n  n
NETLINK   1096     17      -1   NI       0   no   kernel      n  n  n  n  n  n  n  n  n  n  n  n  n  n  n  n  n  n
UNIX      1088      5      -1   NI       0   yes  kernel      n  n  n  n  n  n  n  n  n  n  n  n  n  n  n  n  n  n
`
	if n, err := parseInUse(text); err != nil || n != 17 {
		t.Errorf("parseInUse = %d, %v; want 17, nil", n, err)
	}
	for name, bad := range map[string]string{
		"no NETLINK row": strings.Replace(text, "NETLINK", "NETLINX", 1),
		"other header":   strings.Replace(text, "sockets", "memory ", 1),
		"not a number":   strings.Replace(text, "  17  ", "  x7  ", 1),
		"empty":          "",
	} {
		if n, err := parseInUse(bad); err == nil {
			t.Errorf("%s: %d, no error", name, n)
		}
	}
}

// SCM_CREDENTIALS is read into Creds beside the netlink control messages,
// and a second one on the same datagram is an error.
func TestDatagramCredentials(t *testing.T) {
	creds := unix.UnixCredentials(&unix.Ucred{Pid: 42, Uid: 7, Gid: 9})
	oob := append(controlBuffer([]int32{unix.NETLINK_PKTINFO}, 5), creds...)
	var d Datagram
	if err := d.parseControl(oob); err != nil {
		t.Fatal(err)
	}
	if d.Group == nil || *d.Group != 5 || d.Creds == nil || *d.Creds != (unix.Ucred{Pid: 42, Uid: 7, Gid: 9}) {
		t.Errorf("group %v creds %+v, want 5 and pid 42 uid 7 gid 9", d.Group, d.Creds)
	}
	d = Datagram{}
	if err := d.parseControl(append(creds, creds...)); err == nil || !strings.Contains(err.Error(), "two SCM_CREDENTIALS") {
		t.Errorf("two SCM_CREDENTIALS: %v, want an error naming the duplicate", err)
	}
}
