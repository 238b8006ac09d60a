// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"
	"fmt"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/netns"
	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// netnsHeldBySocketNamesPeers: a namespace that one socket alone keeps
// alive (no process or thread in it, no handle, no mount, no other socket)
// still names its peers. N is made by hand so that s is the only socket it
// ever has: s makes the veth va in N with its peer vb in P, then N's handle
// is closed and the threads that entered N are waited out. An RTM_GETLINK
// for va sent from s then answers with the same IFLA_LINK_NETNSID as
// before, not -1 (NETNSA_NSID_NOT_ASSIGNED): only a namespace being torn
// down (no reference left) names no peer.
//
// No other socket: a closed netlink socket holds its netns until an RCU
// grace period has passed (netlink_release() -> call_rcu(..,
// deferred_put_nlk_sk) -> __sk_destruct() -> put_net_track()).
//
// Kernel: sk_alloc() takes a netns reference for a user socket;
// rtnl_getlink() -> rtnl_fill_ifinfo(.., src_net = the socket's netns) ->
// rtnl_fill_link_netnsid() -> peernet2id_alloc(src_net, link_net), which
// returns NETNSA_NSID_NOT_ASSIGNED only if refcount_read(&net->ns.count)
// == 0, and otherwise the peer's id, giving one if there is none.
func netnsHeldBySocketNamesPeers(t selftests.T) {
	p := selftests.NewNS(t, "P")
	n, err := netns.New("N")
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() { n.Close() })
	var st unix.Stat_t
	if err := unix.Fstat(n.FD(), &st); err != nil {
		t.Fatalf("netns N: fstat: %v", err)
	}
	raw, err := nlsock.Open(n, unix.NETLINK_ROUTE, "s")
	if err != nil {
		t.Fatalf("%v", err)
	}
	p.Adopt(raw) // closed by the case's cleanup; it lives in N
	if err := raw.Bind(0, 0); err != nil {
		t.Fatalf("%v", err)
	}
	s := &rtnl.Conn{Sock: raw}
	if _, err := s.Do(rtnl.NewVeth("va", "vb", p.FD())); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	before := linkNetnsid(t, s, "va")
	if before < 0 {
		t.Fatalf("%s: RTM_GETLINK va: IFLA_LINK_NETNSID %d while N has its handle: want N's id for P", raw, before)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("netns N: close handle: %v", err)
	}
	waitThreadsLeave(t, st.Ino)
	if after := linkNetnsid(t, s, "va"); after != before {
		t.Errorf("%s: RTM_GETLINK va with s as N's one reference: IFLA_LINK_NETNSID %d, want %d as before: a live netns names its peers (only a dying one answers -1)", raw, after, before)
	}
}

// waitThreadsLeave waits until no thread of the program is in the netns
// with nsfs inode ino: a goroutine that entered a namespace on a locked
// thread ends, and the runtime ends the thread after it.
func waitThreadsLeave(t selftests.T, ino uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		in := netns.ThreadsIn(ino)
		if len(in) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("threads %v of the program still in netns N (net:[%d]) after 10s", in, ino)
		}
		time.Sleep(time.Millisecond)
	}
}

// linkNetnsid asks c for the link called name and returns its
// IFLA_LINK_NETNSID.
func linkNetnsid(t selftests.T, c *rtnl.Conn, name string) int32 {
	t.Helper()
	rep, err := c.Do(rtnl.GetLink(name))
	if err != nil {
		t.Fatalf("%s: %v", c.Sock, err)
	}
	if len(rep.Msgs) != 1 || rep.Msgs[0].Header.Type != unix.RTM_NEWLINK {
		t.Fatalf("%s: RTM_GETLINK %s: %s, want one RTM_NEWLINK", c.Sock, name, headers(rep.Msgs))
	}
	id, err := linkNetnsidAttr(rep.Msgs[0].Data)
	if err != nil {
		t.Fatalf("%s: RTM_GETLINK %s: %v", c.Sock, name, err)
	}
	return id
}

// linkNetnsidAttr reads IFLA_LINK_NETNSID from an RTM_NEWLINK's payload.
func linkNetnsidAttr(b []byte) (int32, error) {
	if len(b) < unix.SizeofIfInfomsg {
		return 0, fmt.Errorf("a %d-byte RTM_NEWLINK", len(b))
	}
	ad, err := netlink.NewAttributeDecoder(b[unix.SizeofIfInfomsg:])
	if err != nil {
		return 0, err
	}
	for ad.Next() {
		if ad.Type() == unix.IFLA_LINK_NETNSID {
			return ad.Int32(), ad.Err()
		}
	}
	if err := ad.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("no IFLA_LINK_NETNSID")
}
