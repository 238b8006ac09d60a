// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	var ino uint64
	var st unix.Stat_t
	if err := unix.Fstat(n.FD(), &st); err != nil {
		t.Fatalf("netns N: fstat: %v", err)
	}
	ino = st.Ino
	raw, err := nlsock.Open(n, unix.NETLINK_ROUTE, "s")
	if err != nil {
		t.Fatalf("%v", err)
	}
	s := p.Adopt(raw) // closed by the case's cleanup; it lives in N
	if err := raw.Bind(0, 0); err != nil {
		t.Fatalf("%v", err)
	}
	request(t, s, rtnl.NewVeth("va", "vb", p.FD()))
	before := linkNetnsid(t, s, "va")
	if before < 0 {
		t.Fatalf("%s: RTM_GETLINK va: IFLA_LINK_NETNSID %d while N has its handle: want N's id for P", s, before)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("netns N: close handle: %v", err)
	}
	waitThreadsLeave(t, ino)
	if after := linkNetnsid(t, s, "va"); after != before {
		t.Errorf("%s: RTM_GETLINK va with s as N's one reference: IFLA_LINK_NETNSID %d, want %d as before: a live netns names its peers (only a dying one answers -1)", s, after, before)
	}
}

// waitThreadsLeave waits until no thread of the program is in the netns
// with nsfs inode ino: a goroutine that entered a namespace on a locked
// thread ends, and the runtime ends the thread after it.
func waitThreadsLeave(t selftests.T, ino uint64) {
	t.Helper()
	want := fmt.Sprintf("net:[%d]", ino)
	deadline := time.Now().Add(10 * time.Second)
	for {
		in := 0
		tasks, _ := filepath.Glob("/proc/self/task/*/ns/net")
		for _, l := range tasks {
			if v, err := os.Readlink(l); err == nil && v == want {
				in++
			}
		}
		if in == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d threads of the program still in %s after 10s", in, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// request sends r from s and reads its ACK (s is subscribed to nothing:
// nothing else comes).
func request(t selftests.T, s *selftests.Sock, r rtnl.Request) {
	t.Helper()
	seq := s.Request(r, 0)
	dg, err := s.Recv()
	if err != nil {
		t.Fatalf("%s: %s (seq %d): %v", s, r.Name, seq, err)
	}
	if len(dg.Msgs) != 1 || dg.Msgs[0].Header.Type != netlink.Error || dg.Msgs[0].Header.Sequence != seq || len(dg.Msgs[0].Data) < 4 {
		t.Fatalf("%s: %s (seq %d): %s, want its ACK", s, r.Name, seq, headers(dg.Msgs))
	}
	if e := int32(binary.NativeEndian.Uint32(dg.Msgs[0].Data)); e != 0 {
		t.Fatalf("%s: %s: error %d", s, r.Name, e)
	}
}

// linkNetnsid sends RTM_GETLINK for name from s and returns the reply's
// IFLA_LINK_NETNSID; the reply and the ACK are queued before sendmsg()
// returns.
func linkNetnsid(t selftests.T, s *selftests.Sock, name string) int32 {
	t.Helper()
	seq := s.Request(rtnl.GetLink(name), 0)
	var id *int32
	for acked := false; !acked; {
		dg, err := s.Recv()
		if errors.Is(err, nlsock.ErrEmpty) {
			t.Fatalf("%s: RTM_GETLINK %s (seq %d): no ACK", s, name, seq)
		}
		if err != nil {
			t.Fatalf("%v", err)
		}
		for _, m := range dg.Msgs {
			if m.Header.Sequence != seq {
				t.Fatalf("%s: RTM_GETLINK %s (seq %d): %s", s, name, seq, headers([]netlink.Message{m}))
			}
			switch m.Header.Type {
			case unix.RTM_NEWLINK:
				v, err := linkNetnsidAttr(m.Data)
				if err != nil {
					t.Fatalf("%s: RTM_GETLINK %s: %v", s, name, err)
				}
				id = &v
			case netlink.Error:
				if len(m.Data) < 4 {
					t.Fatalf("%s: RTM_GETLINK %s: a short NLMSG_ERROR", s, name)
				}
				if e := int32(binary.NativeEndian.Uint32(m.Data)); e != 0 {
					t.Fatalf("%s: RTM_GETLINK %s: error %d", s, name, e)
				}
				acked = true
			default:
				t.Fatalf("%s: RTM_GETLINK %s: %s", s, name, headers([]netlink.Message{m}))
			}
		}
	}
	if id == nil {
		t.Fatalf("%s: RTM_GETLINK %s: ACK without an RTM_NEWLINK", s, name)
	}
	return *id
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
