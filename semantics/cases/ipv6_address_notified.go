// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"
	"net/netip"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// ipv6AddressNotified: IPv6 address notifications, which the kernel
// allocates and broadcasts with GFP_ATOMIC, follow the same delivery rules
// as IPv4's: the local RTNLGRP_IPV6_IFADDR subscriber and the
// LISTEN_ALL_NSID one that maps S (with its id) get each once, the plain
// one in O nothing, the IPv4 subscriber nothing. An address added to lo
// is notified twice with RTM_NEWADDR: at once, tentative (before the
// request's ACK), and again when duplicate address detection is done,
// which lo skips but which runs from the addrconf workqueue all the same,
// so the pair is awaited. Its deletion is one RTM_DELADDR, before the
// ACK. All are the kernel's own: seq 0, pid 0, flags 0.
//
// Kernel: inet6_addr_add(): ipv6_ifa_notify(0, ifp) unless
// IFA_F_OPTIMISTIC or IFA_F_NODAD (RTM_NEWADDR, IFA_F_TENTATIVE set);
// addrconf_dad_start() -> addrconf_mod_dad_work(); addrconf_dad_work() ->
// addrconf_dad_begin() (IFF_LOOPBACK: no DAD) -> addrconf_dad_completed()
// -> ipv6_ifa_notify(RTM_NEWADDR) -> inet6_ifa_notify():
// nlmsg_new(GFP_ATOMIC), inet6_fill_ifaddr() with portid 0 and seq 0,
// rtnl_notify(..., RTNLGRP_IPV6_IFADDR, NULL, GFP_ATOMIC). inet6_addr_del()
// -> ipv6_del_addr() -> ipv6_ifa_notify(RTM_DELADDR). (Older kernels
// took rcu_read_lock_bh() in ipv6_ifa_notify(); 6.1.192, 6.12 and 6.18
// call it under RTNL alone, a context that may sleep.)
func ipv6AddressNotified(t selftests.T) {
	s, o := selftests.NewNS(t, "S"), selftests.NewNS(t, "O")
	id := o.Map(s, 9).ID
	enableIPv6OnLo(t, s)
	group := selftests.Join(unix.RTNLGRP_IPV6_IFADDR)
	local := s.Socket("local", group)
	v4 := s.Socket("v4", selftests.Join(unix.RTNLGRP_IPV4_IFADDR))
	allNSID := o.Socket("all_nsid", selftests.With(unix.NETLINK_LISTEN_ALL_NSID), group)
	foreign := o.Socket("foreign", group)

	p := netip.MustParsePrefix("2001:db8::1/128")
	addr := selftests.Notification(unix.RTM_NEWADDR, unix.RTNLGRP_IPV6_IFADDR, rtnl.AddrDetail(p, rtnl.LoopbackIndex))
	tentative := addr
	tentative.Detail += rtnl.TentativeSuffix
	s.Do(rtnl.NewAddr(rtnl.LoopbackIndex, p))
	local.ExpectEventually(ipv6DADDeadline, tentative, addr)
	allNSID.ExpectEventually(ipv6DADDeadline, tentative.NSID(id), addr.NSID(id))
	v4.Expect()
	foreign.Expect()

	del := addr
	del.Type = unix.RTM_DELADDR
	s.Do(rtnl.DelAddr(rtnl.LoopbackIndex, p))
	local.Expect(del)
	allNSID.Expect(del.NSID(id))
	v4.Expect()
	foreign.Expect()
}

// enableIPv6OnLo turns IPv6 on for lo in s alone, before any socket of
// the case exists. Every namespace of the suite starts with IPv6 off, so
// that no address of the kernel's own (::1, link-local) is notified at a
// time of its choosing; turning it on for lo, which is up, adds ::1 and
// notifies it at once (init_loopback() -> add_addr() -> ipv6_ifa_notify()),
// while no one listens.
func enableIPv6OnLo(t selftests.T, s *selftests.NS) {
	t.Helper()
	const knob = "net/ipv6/conf/lo/disable_ipv6"
	err := s.WriteSysctl(knob, "0")
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("netns %s: no %s: this kernel has no IPv6 (CONFIG_IPV6)", s.Name, knob)
	}
	if err != nil {
		t.Fatalf("netns %s: %s=0: %v", s.Name, knob, err)
	}
}

// ipv6DADDeadline bounds the wait for the addrconf workqueue, which runs
// the work at once (delay 0): far more than a loaded machine needs.
const ipv6DADDeadline = 10 * time.Second
