// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"errors"
	"net/netip"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A datagram sent with SendUDP is queued on the BindUDP socket of its
// destination, once, and a second read finds nothing.
func TestUDP(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates a network namespace")
	}
	dst := netip.MustParseAddrPort("127.0.0.1:9")
	s := Suite{Name: "prog", Cases: []Case{{Name: "udp", Run: func(t T) {
		n := NewNS(t, "U")
		u := n.BindUDP(dst)
		if err := n.SendUDP(dst, []byte("nlmc")); err != nil {
			t.Fatalf("%v", err)
		}
		p := make([]byte, 64)
		if k, err := u.Recv(p); err != nil || string(p[:k]) != "nlmc" {
			t.Errorf("%s: %q, %v; want \"nlmc\"", u, p[:k], err)
		}
		if _, err := u.Recv(p); !errors.Is(err, unix.EAGAIN) {
			t.Errorf("%s: a second read: %v, want EAGAIN", u, err)
		}
		if err := n.SendUDP(netip.MustParseAddrPort("[::1]:9"), nil); err == nil {
			t.Errorf("SendUDP to an IPv6 address did not fail")
		}
	}}}}
	var out strings.Builder
	if code := Run(s, nil, &out, &strings.Builder{}); code != 0 {
		t.Errorf("exit %d:\n%s", code, out.String())
	}
}
