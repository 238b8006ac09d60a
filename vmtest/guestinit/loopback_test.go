// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

func TestLinkUpRequest(t *testing.T) {
	m, err := linkUpRequest("lo")
	if err != nil {
		t.Fatal(err)
	}
	if m.Header.Type != unix.RTM_NEWLINK || m.Header.Flags != netlink.Request|netlink.Acknowledge {
		t.Errorf("header = %+v, want RTM_NEWLINK with request and ack flags", m.Header)
	}
	if len(m.Data) < unix.SizeofIfInfomsg {
		t.Fatalf("data is %d bytes, shorter than ifinfomsg", len(m.Data))
	}
	ifinfo := m.Data[:unix.SizeofIfInfomsg]
	if index := binary.NativeEndian.Uint32(ifinfo[4:8]); index != 0 {
		t.Errorf("ifi_index = %d, want 0 (lookup by name)", index)
	}
	if flags := binary.NativeEndian.Uint32(ifinfo[8:12]); flags != unix.IFF_UP {
		t.Errorf("ifi_flags = %#x, want IFF_UP", flags)
	}
	if change := binary.NativeEndian.Uint32(ifinfo[12:16]); change != unix.IFF_UP {
		t.Errorf("ifi_change = %#x, want IFF_UP", change)
	}
	attrs, err := netlink.UnmarshalAttributes(m.Data[unix.SizeofIfInfomsg:])
	if err != nil {
		t.Fatal(err)
	}
	if len(attrs) != 1 || attrs[0].Type != unix.IFLA_IFNAME || !bytes.Equal(attrs[0].Data, []byte("lo\x00")) {
		t.Errorf("attributes = %+v, want one IFLA_IFNAME \"lo\\x00\"", attrs)
	}
}
