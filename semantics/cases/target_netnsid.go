// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// The IFA_TARGET_NETNSID cases: a monitor that got a notification with
// nsid N from a LISTEN_ALL_NSID socket asks for that namespace's addresses
// with an RTM_GETADDR dump carrying IFA_TARGET_NETNSID=N, from its own
// namespace, without setns(). The dump is a unicast reply; the cases also
// prove that it multicasts nothing to anyone.

// targetInvalidMsg is the extended ACK text inet_valid_dump_ifaddr_req()
// sets whenever rtnl_get_net_ns_capable() refuses the id (EINVAL: no
// namespace has it; EACCES: no CAP_NET_ADMIN over the one that has it),
// the same on Linux 6.1, 6.12 and 6.18.
const targetInvalidMsg = "ipv4: Invalid target network namespace id"

// addrGroups are the groups the bystanders of these cases join: every
// group an address dump could conceivably touch, and RTNLGRP_NSID, which
// would show an id allocated on the way (the dump only looks ids up).
var addrGroups = selftests.Join(unix.RTNLGRP_IPV4_IFADDR, unix.RTNLGRP_IPV4_ROUTE, unix.RTNLGRP_LINK, unix.RTNLGRP_NSID)

// dumpConn opens a control socket in n for address dumps, with
// NETLINK_GET_STRICT_CHK set or not.
func dumpConn(t selftests.T, n *selftests.NS, strict bool) *rtnl.Conn {
	t.Helper()
	c, err := rtnl.Dial(n.NS)
	if err != nil {
		t.Fatalf("netns %s: %v", n.Name, err)
	}
	t.Cleanup(func() { c.Close() })
	if strict {
		if err := c.Sock.SetOption(unix.NETLINK_GET_STRICT_CHK, true); err != nil {
			t.Fatalf("%v", err)
		}
	}
	return c
}

// dumpAddrs dumps the IPv4 addresses through c (targeted at target, if
// not nil) and takes every reply apart.
func dumpAddrs(t selftests.T, c *rtnl.Conn, target *int32) ([]rtnl.Addr, error) {
	t.Helper()
	msgs, err := c.Dump(rtnl.GetAddrs(target))
	if err != nil {
		return nil, err
	}
	out := make([]rtnl.Addr, len(msgs))
	for i, m := range msgs {
		if out[i], err = rtnl.ParseAddr(m); err != nil {
			t.Fatalf("%s: reply %d: %v", c.Sock, i, err)
		}
	}
	return out, nil
}

// mustDumpAddrs is dumpAddrs that fails the case on an error.
func mustDumpAddrs(t selftests.T, c *rtnl.Conn, target *int32) []rtnl.Addr {
	t.Helper()
	addrs, err := dumpAddrs(t, c, target)
	if err != nil {
		t.Fatalf("%s: %v", c.Sock, err)
	}
	return addrs
}

// expectSameAddrs checks got against want field by field, entry by entry:
// got is want as seen through the id target (each entry with exactly one
// IFA_TARGET_NETNSID=*target and otherwise identical), or, with target
// nil, exactly want (no IFA_TARGET_NETNSID anywhere).
func expectSameAddrs(t selftests.T, what string, got, want []rtnl.Addr, target *int32) {
	t.Helper()
	var wantIDs []int32
	if target != nil {
		wantIDs = []int32{*target}
	}
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		ok = slices.Equal(got[i].TargetNSID(), wantIDs) && len(want[i].TargetNSID()) == 0 &&
			got[i].Without(unix.IFA_TARGET_NETNSID).Equal(want[i])
	}
	switch {
	case !ok:
		t.Errorf("%s: got %d addresses, want %d (target nsid %v)\ngot:\n%s\nwant:\n%s",
			what, len(got), len(want), wantIDs, renderAddrs(got), renderAddrs(want))
	case selftests.Verbose():
		t.Logf("%s: as expected:\n%s", what, renderAddrs(got))
	}
}

func renderAddrs(addrs []rtnl.Addr) string {
	if len(addrs) == 0 {
		return "  (none)"
	}
	rows := make([]string, len(addrs))
	for i, a := range addrs {
		rows[i] = "  " + a.String()
	}
	return strings.Join(rows, "\n")
}

// expectAddrSet checks that addrs hold exactly the addresses want
// ("198.51.100.1/32 dev 1"), in any order.
func expectAddrSet(t selftests.T, what string, addrs []rtnl.Addr, want ...string) {
	t.Helper()
	var got []string
	for _, a := range addrs {
		got = append(got, addrKey(a))
	}
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: addresses %v, want %v", what, got, want)
	}
}

// addrKey is the IFA_LOCAL address of a with its prefix length and device.
func addrKey(a rtnl.Addr) string {
	for _, at := range a.Attrs {
		if at.Type == unix.IFA_LOCAL && len(at.Value) == 4 {
			return fmt.Sprintf("%s/%d dev %d", netip.AddrFrom4([4]byte(at.Value)), a.PrefixLen, a.Index)
		}
	}
	return fmt.Sprintf("(no IFA_LOCAL) dev %d", a.Index)
}

// expectDumpError checks that a dump failed with errno and the extended
// ACK text msg.
func expectDumpError(t selftests.T, what string, addrs []rtnl.Addr, err error, errno unix.Errno, msg string) {
	t.Helper()
	var e *rtnl.Error
	switch {
	case err == nil:
		t.Errorf("%s: %d addresses, want %v (%q)\n%s", what, len(addrs), errno, msg, renderAddrs(addrs))
	case !errors.As(err, &e) || e.Errno != errno || e.Message != msg:
		t.Errorf("%s: %v, want %v (%q)", what, err, errno, msg)
	}
}

func nsidPtr(id int32) *int32 { return &id }

// loAddr is the address lo gets when it comes up.
const loAddr = "127.0.0.1/8 dev 1"
