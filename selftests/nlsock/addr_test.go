// SPDX-License-Identifier: GPL-2.0

package nlsock

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestSenderAddr(t *testing.T) {
	if nl, err := senderAddr(&unix.SockaddrNetlink{Family: unix.AF_NETLINK, Pid: 7, Groups: 4}); err != nil || nl.Pid != 7 || nl.Groups != 4 {
		t.Errorf("a kernel-filled address: %+v, %v", nl, err)
	}
	for _, tc := range []struct {
		from unix.Sockaddr
		want string
	}{
		{&unix.SockaddrNetlink{Family: unix.AF_NETLINK, Pad: 1, Pid: 7}, "nl_pad 1, want 0"},
		{nil, "<nil>, want a netlink address"},
		{&unix.SockaddrInet4{}, "*unix.SockaddrInet4, want a netlink address"},
	} {
		if _, err := senderAddr(tc.from); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("senderAddr(%#v) = %v, want an error with %q", tc.from, err, tc.want)
		}
	}
}
