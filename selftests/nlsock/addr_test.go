// SPDX-License-Identifier: GPL-2.0

package nlsock

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// name is a msg_name buffer as recvmsg() leaves it: fill, then the
// address's fields, then fill.
func name(family, pad uint16, pid, groups uint32) []byte {
	b := bytes.Repeat([]byte{nameFill}, unix.SizeofSockaddrNetlink+4)
	binary.NativeEndian.PutUint16(b[0:], family)
	binary.NativeEndian.PutUint16(b[2:], pad)
	binary.NativeEndian.PutUint32(b[4:], pid)
	binary.NativeEndian.PutUint32(b[8:], groups)
	return b
}

func TestSenderAddr(t *testing.T) {
	if nl, err := senderAddr(name(unix.AF_NETLINK, 0, 7, 4), unix.SizeofSockaddrNetlink); err != nil || nl.Pid != 7 || nl.Groups != 4 {
		t.Errorf("a kernel-filled address: %+v, %v", nl, err)
	}
	past := name(unix.AF_NETLINK, 0, 7, 4)
	past[unix.SizeofSockaddrNetlink] = 0
	for _, tc := range []struct {
		name    []byte
		namelen int
		want    string
	}{
		{name(unix.AF_NETLINK, 1, 7, 0), unix.SizeofSockaddrNetlink, "nl_pad 0x1, want 0"},
		{name(unix.AF_NETLINK, 0xa5a5, 7, 0), unix.SizeofSockaddrNetlink, "nl_pad 0xa5a5, want 0 (0xa5a5: never written)"},
		{name(unix.AF_INET, 0, 7, 0), unix.SizeofSockaddrNetlink, "nl_family 2, want AF_NETLINK"},
		{name(unix.AF_NETLINK, 0, 7, 0), 0, "msg_namelen 0, want 12"},
		{past, unix.SizeofSockaddrNetlink, "byte 12 of msg_name, past the 12-byte address, was written"},
	} {
		if _, err := senderAddr(tc.name, tc.namelen); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("senderAddr(% x, %d) = %v, want an error with %q", tc.name, tc.namelen, err, tc.want)
		}
	}
}
