// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// diagListsUnboundSubscribers: the socket monitoring interface (what
// `ss -f netlink` reads: NETLINK_SOCK_DIAG's SOCK_DIAG_BY_FAMILY dump for
// AF_NETLINK) lists the requester's netns's bound NETLINK_ROUTE sockets,
// with or without groups, and an unbound one (portid 0: it never bound,
// sent or connected) exactly while it is a member of a group: once, from
// its first NETLINK_ADD_MEMBERSHIP until it has dropped its last group,
// and again when it joins one, with portid 0 and its groups (those above
// 32 included). A socket of another netns is never listed.
//
// The unbound sockets are the ones the kernel finds only on the
// protocol's multicast list, so the listing shows when a socket is on
// it: a socket that kept its place there after leaving its last group
// would cost every broadcast of the protocol a step of its walk, and
// show nothing else a user can see.
//
// Kernel: __netlink_diag_dump() walks the protocol's hash table (bound
// sockets), then sk_for_each_bound(sk, &tbl->mc_list), skipping
// sk_hashed() sockets and those of other netns; sk_diag_dump_groups()
// puts NETLINK_DIAG_GROUPS, the nlk->groups bitmap, where there is one.
// netlink_update_socket_mc(): subscriptions = nlk->subscriptions - old +
// new, old the group's bit before; netlink_update_subscriptions() adds
// the socket to mc_list when the count leaves 0 and deletes it when it
// returns to 0. The series' index keeps the socket on mc_list in both
// modes.
//
// A bound member is listed by both walks, so twice (seen on 6.1 and
// 6.18): sk_hashed() tests sk_node, which netlink sockets never use
// (netlink_insert() puts nlk->node in an rhashtable), so the second walk
// skips no one. And a walk of the rhashtable may list a socket twice when
// the table, shared by every netns, is resized meanwhile
// (rhashtable_walk_next()'s -EAGAIN). So a bound socket's entries are
// checked, not counted: at least one, each with its portid and groups.
func diagListsUnboundSubscribers(t selftests.T) {
	s := selftests.NewNS(t, "S")
	o := selftests.NewNS(t, "O")
	d := diagSocket(t, s, "diag")
	od := diagSocket(t, o, "odiag")

	u := s.Adopt(openSocket(t, s, "u"))
	if pid := u.Portid(); pid != 0 {
		t.Fatalf("%s: portid %d before any bind or send, want 0", u, pid)
	}
	expectListed(t, d, u, false, 0)

	// Member of one group, then of one above 32 as well.
	mustJoin(t, u, unix.RTNLGRP_IPV4_IFADDR)
	expectListed(t, d, u, true, 0, unix.RTNLGRP_IPV4_IFADDR)
	mustJoin(t, u, unix.RTNLGRP_BRVLAN)
	expectListed(t, d, u, true, 0, unix.RTNLGRP_IPV4_IFADDR, unix.RTNLGRP_BRVLAN)

	// An unbound member in O is O's, not S's.
	ou := o.Adopt(openSocket(t, o, "ou"))
	mustJoin(t, ou, unix.RTNLGRP_IPV4_IFADDR)
	expectListed(t, od, ou, true, 0, unix.RTNLGRP_IPV4_IFADDR)
	expectListed(t, d, ou, false, 0)
	expectListed(t, od, u, false, 0)

	// Dropping a group the socket is not in changes nothing; dropping
	// the groups one by one keeps it listed until the last.
	mustLeave(t, u, unix.RTNLGRP_LINK)
	expectListed(t, d, u, true, 0, unix.RTNLGRP_IPV4_IFADDR, unix.RTNLGRP_BRVLAN)
	mustLeave(t, u, unix.RTNLGRP_IPV4_IFADDR)
	expectListed(t, d, u, true, 0, unix.RTNLGRP_BRVLAN)
	mustLeave(t, u, unix.RTNLGRP_BRVLAN)
	expectListed(t, d, u, false, 0)

	// Joined twice, the same group is one membership: one drop ends it.
	mustJoin(t, u, unix.RTNLGRP_LINK)
	mustJoin(t, u, unix.RTNLGRP_LINK)
	expectListed(t, d, u, true, 0, unix.RTNLGRP_LINK)
	mustLeave(t, u, unix.RTNLGRP_LINK)
	expectListed(t, d, u, false, 0)

	// A member again, then closed: gone.
	mustJoin(t, u, unix.RTNLGRP_NEIGH)
	expectListed(t, d, u, true, 0, unix.RTNLGRP_NEIGH)
	ino := sockIno(t, u)
	if err := u.Close(); err != nil {
		t.Fatalf("%v", err)
	}
	if n := diagDump(t, d).count(ino); n != 0 {
		t.Errorf("%s (ino %d): listed %d times after its close, want not listed", u, ino, n)
	}

	// A bound socket is listed whether or not it has groups.
	b := s.Socket("b")
	expectBoundListed(t, d, b)
	mustJoin(t, b, unix.RTNLGRP_IPV4_IFADDR)
	n := expectBoundListed(t, d, b, unix.RTNLGRP_IPV4_IFADDR)
	t.Logf("%s, bound and a member of a group, is listed %d times", b, n)
	mustLeave(t, b, unix.RTNLGRP_IPV4_IFADDR)
	expectBoundListed(t, d, b)
}

// diagSocket opens and binds a NETLINK_SOCK_DIAG socket in n, and SKIPs
// the case where the kernel has no netlink socket monitoring: no
// NETLINK_SOCK_DIAG protocol, or no handler for AF_NETLINK in it (a
// kernel built without CONFIG_NETLINK_DIAG answers ENOENT).
func diagSocket(t selftests.T, n *selftests.NS, name string) *selftests.Sock {
	t.Helper()
	s, err := nlsock.Open(n.NS, unix.NETLINK_SOCK_DIAG, name)
	if errors.Is(err, unix.EPROTONOSUPPORT) {
		t.Skipf("the kernel has no NETLINK_SOCK_DIAG: %v", err)
	}
	if err != nil {
		t.Fatalf("%v", err)
	}
	if err := s.Bind(0, 0); err != nil {
		t.Fatalf("%v", err)
	}
	sock := n.Adopt(s)
	sendDiagRequest(t, sock)
	_, errno := readDiagDump(t, sock)
	if errno == unix.ENOENT {
		t.Skipf("the kernel has no netlink socket monitoring (CONFIG_NETLINK_DIAG): SOCK_DIAG_BY_FAMILY for AF_NETLINK is ENOENT")
	}
	if errno != 0 {
		t.Fatalf("%s: SOCK_DIAG_BY_FAMILY dump for AF_NETLINK: %v", sock, errno)
	}
	return sock
}

// openSocket opens a NETLINK_ROUTE socket in n and leaves it unbound.
func openSocket(t selftests.T, n *selftests.NS, name string) *nlsock.Socket {
	t.Helper()
	s, err := nlsock.Open(n.NS, unix.NETLINK_ROUTE, name)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return s
}

// The monitoring interface's ABI (include/uapi/linux/netlink_diag.h).
const (
	diagShowGroups  = 0x2 // NDIAG_SHOW_GROUPS
	diagAttrGroups  = 1   // NETLINK_DIAG_GROUPS
	sizeofDiagReq   = 20  // struct netlink_diag_req
	sizeofDiagMsg   = 24  // struct netlink_diag_msg
	diagProtoRoute  = unix.NETLINK_ROUTE
	diagFamilyNL    = unix.AF_NETLINK
	diagReplyPrefix = "SOCK_DIAG_BY_FAMILY dump for AF_NETLINK"
)

// diagEntry is one socket the dump lists.
type diagEntry struct {
	typ         uint8
	portid, ino uint32
	groups      []uint32 // members of, ascending; nil without NETLINK_DIAG_GROUPS
}

func (e diagEntry) String() string {
	return fmt.Sprintf("ino %d type %d portid %d groups %v", e.ino, e.typ, e.portid, e.groups)
}

type diagListing []diagEntry

func (l diagListing) count(ino uint32) int { return len(l.entries(ino)) }

// entries are the listing's entries of the socket with inode ino.
func (l diagListing) entries(ino uint32) []diagEntry {
	var out []diagEntry
	for _, e := range l {
		if e.ino == ino {
			out = append(out, e)
		}
	}
	return out
}

// sendDiagRequest asks on d for the NETLINK_ROUTE sockets of d's netns,
// with their groups, and returns the request's sequence number.
func sendDiagRequest(t selftests.T, d *selftests.Sock) uint32 {
	t.Helper()
	req := make([]byte, sizeofDiagReq)
	req[0], req[1] = diagFamilyNL, diagProtoRoute
	binary.NativeEndian.PutUint32(req[8:], diagShowGroups)
	seq := rtnl.NextSeq()
	m := netlink.Message{
		Header: netlink.Header{Type: unix.SOCK_DIAG_BY_FAMILY, Flags: netlink.Request | netlink.Dump, Sequence: seq},
		Data:   req,
	}
	if err := d.SendTo(m, 0, 0); err != nil {
		t.Fatalf("%v", err)
	}
	return seq
}

// diagDump lists, through d, the NETLINK_ROUTE sockets of d's netns.
func diagDump(t selftests.T, d *selftests.Sock) diagListing {
	t.Helper()
	seq := sendDiagRequest(t, d)
	l, errno := readDiagDump(t, d)
	if errno != 0 {
		t.Fatalf("%s: %s (seq %d): %v", d, diagReplyPrefix, seq, errno)
	}
	return l
}

// readDiagDump reads a whole dump on d: its entries, or the errno of an
// NLMSG_ERROR that answered the request instead.
func readDiagDump(t selftests.T, d *selftests.Sock) (diagListing, unix.Errno) {
	t.Helper()
	var l diagListing
	for part := 1; ; part++ {
		dg, err := d.Recv()
		if errors.Is(err, nlsock.ErrEmpty) {
			t.Fatalf("%s: %s stopped after %d parts without NLMSG_DONE", d, diagReplyPrefix, part-1)
		}
		if err != nil {
			t.Fatalf("%v", err)
		}
		if part == 1 && len(dg.Msgs) == 1 && dg.Msgs[0].Header.Type == netlink.Error {
			if len(dg.Msgs[0].Data) < 4 {
				t.Fatalf("%s: %s: a short NLMSG_ERROR", d, diagReplyPrefix)
			}
			e := -int32(binary.NativeEndian.Uint32(dg.Msgs[0].Data))
			if e <= 0 {
				t.Fatalf("%s: %s: NLMSG_ERROR %d, want a dump or an error", d, diagReplyPrefix, -e)
			}
			return nil, unix.Errno(e)
		}
		checkDumpPart(t, d, diagReplyPrefix, dg, dg.Msgs[0].Header.Sequence)
		for i, m := range dg.Msgs {
			switch m.Header.Type {
			case netlink.Done:
				if i != len(dg.Msgs)-1 {
					t.Fatalf("%s: %s: NLMSG_DONE is message %d of %d", d, diagReplyPrefix, i+1, len(dg.Msgs))
				}
				return l, 0
			case unix.SOCK_DIAG_BY_FAMILY:
				e, err := parseDiagEntry(m.Data)
				if err != nil {
					t.Fatalf("%s: %s, part %d message %d: %v", d, diagReplyPrefix, part, i, err)
				}
				l = append(l, e)
			default:
				t.Fatalf("%s: %s, part %d message %d: type %d", d, diagReplyPrefix, part, i, m.Header.Type)
			}
		}
	}
}

// parseDiagEntry reads a struct netlink_diag_msg of a NETLINK_ROUTE
// socket and its attributes.
func parseDiagEntry(b []byte) (diagEntry, error) {
	if len(b) < sizeofDiagMsg {
		return diagEntry{}, fmt.Errorf("a %d-byte entry, want at least %d", len(b), sizeofDiagMsg)
	}
	if b[0] != diagFamilyNL || b[2] != diagProtoRoute {
		return diagEntry{}, fmt.Errorf("an entry of family %d protocol %d, want %d and %d", b[0], b[2], diagFamilyNL, diagProtoRoute)
	}
	e := diagEntry{
		typ:    b[1],
		portid: binary.NativeEndian.Uint32(b[4:]),
		ino:    binary.NativeEndian.Uint32(b[16:]),
	}
	ad, err := netlink.NewAttributeDecoder(b[sizeofDiagMsg:])
	if err != nil {
		return e, fmt.Errorf("entry %v: %w", e, err)
	}
	for ad.Next() {
		if ad.Type() != diagAttrGroups {
			continue
		}
		for i, c := range ad.Bytes() {
			for bit := range 8 {
				if c&(1<<bit) != 0 {
					e.groups = append(e.groups, uint32(i*8+bit+1))
				}
			}
		}
	}
	if err := ad.Err(); err != nil {
		return e, fmt.Errorf("entry %v: %w", e, err)
	}
	return e, nil
}

// expectListed checks that d's dump lists s, an unbound socket, exactly
// once, a raw NETLINK_ROUTE socket with portid and the groups want, or
// (listed false) not at all.
func expectListed(t selftests.T, d *selftests.Sock, s *selftests.Sock, listed bool, portid uint32, want ...uint32) {
	t.Helper()
	ino := sockIno(t, s)
	got := diagDump(t, d).entries(ino)
	if !listed {
		if len(got) != 0 {
			t.Errorf("%s (ino %d): listed by %s's socket monitoring as %v, want not listed (groups now %v)", s, ino, d.NS().Name, got, memberships(t, s))
		}
		return
	}
	if len(got) != 1 {
		t.Errorf("%s (ino %d): listed %d times by %s's socket monitoring, want once: %v", s, ino, len(got), d.NS().Name, got)
		return
	}
	checkEntry(t, s, got[0], portid, want)
}

// expectBoundListed checks that d's dump lists s, a bound socket, at
// least once, and every time with its portid and the groups want, and
// returns how many times.
func expectBoundListed(t selftests.T, d *selftests.Sock, s *selftests.Sock, want ...uint32) int {
	t.Helper()
	ino := sockIno(t, s)
	got := diagDump(t, d).entries(ino)
	if len(got) == 0 {
		t.Errorf("%s (ino %d, portid %d): not listed by %s's socket monitoring, want listed: it is bound", s, ino, s.Portid(), d.NS().Name)
	}
	for _, e := range got {
		checkEntry(t, s, e, s.Portid(), want)
	}
	return len(got)
}

func checkEntry(t selftests.T, s *selftests.Sock, e diagEntry, portid uint32, want []uint32) {
	t.Helper()
	if e.typ != unix.SOCK_RAW || e.portid != portid || !slices.Equal(e.groups, want) {
		t.Errorf("%s: listed as %v, want type %d portid %d groups %v", s, e, unix.SOCK_RAW, portid, want)
	}
}

// memberships is s's NETLINK_LIST_MEMBERSHIPS, for a diagnostic.
func memberships(t selftests.T, s *selftests.Sock) []uint32 {
	g, err := s.Memberships()
	if err != nil {
		t.Logf("%v", err)
	}
	return g
}

// sockIno is the socket's inode number, the id the monitoring lists it by.
func sockIno(t selftests.T, s *selftests.Sock) uint32 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Fstat(s.FD(), &st); err != nil {
		t.Fatalf("%s: fstat: %v", s, err)
	}
	return uint32(st.Ino)
}
