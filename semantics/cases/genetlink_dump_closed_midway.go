// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"bytes"
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

// genetlinkDumpClosedMidway: closing a NETLINK_GENERIC socket in the middle
// of a dump with a done() ends the dump as for rtnetlink, which has none:
// nlctrl's CTRL_CMD_GETPOLICY dump of a family's policies, the first
// family whose dump takes more than one datagram, closed with its first
// part unread. While the dump runs, the socket's
// /proc/net/netlink line says Dump 1 and the netns's NETLINK_GENERIC kernel
// socket is charged for the request the dump holds; after the close it is
// charged nothing, and a dump from another socket is the reference dump
// again. The done() frees the dump's state (genl's and nlctrl's); what user
// space cannot see of a done() left out, the kernel's leak detector sees
// in a scan after the program.
//
// Kernel: genl_family_rcv_msg_dumpit(): c.start = genl_start (allocates
// the genl_dumpit_info, and nlctrl's ctrl_dumppolicy_start() its policy
// walk state), c.done = genl_lock_done or genl_parallel_done (frees them
// through ctrl_dumppolicy_done()); __netlink_dump_start() holds the
// request (cb->skb); netlink_release(): if (nlk->cb_running) { if
// (nlk->cb.done) nlk->cb.done(&nlk->cb); module_put(nlk->cb.module);
// kfree_skb(nlk->cb.skb); }.
func genetlinkDumpClosedMidway(t selftests.T) {
	s := selftests.NewNS(t, "S")
	families := genlFamilyGroups(t, s.Socket("f", selftests.Proto(unix.NETLINK_GENERIC)))
	names := make([]string, 0, len(families))
	for name := range families {
		names = append(names, name)
	}
	slices.Sort(names)
	// Each dump is read on a fresh socket: a socket's first dump part is
	// allocated at the request, NLMSG_GOODSIZE long as nothing was read
	// on it yet, where later parts follow the size of the reads.
	var family string
	var want []policyMsg
	var parts int
	for i, name := range names {
		msgs, n := policyDump(t, s.Socket(fmt.Sprintf("p%d", i), selftests.Proto(unix.NETLINK_GENERIC)), name)
		if n > 1 {
			family, want, parts = name, msgs, n
			break
		}
	}
	if family == "" {
		t.Skipf("no generic netlink family's CTRL_CMD_GETPOLICY dump takes more than one datagram (families: %v): there is no middle to close one in", names)
	}
	if k, err := nlsock.ReadRow(s.NS, unix.NETLINK_GENERIC, 0); err != nil || k.Rmem != 0 {
		t.Fatalf("netns S: the NETLINK_GENERIC kernel socket before the dump: Rmem %d (%v), want 0: it holds no request between requests", k.Rmem, err)
	}

	// The request makes the first part; each read makes the next. So d,
	// left unread, holds the first part and its dump stays in the middle.
	d := s.Socket("d", selftests.Proto(unix.NETLINK_GENERIC))
	startPolicyDump(t, d, family)
	if row, err := nlsock.ReadRow(s.NS, unix.NETLINK_GENERIC, d.Portid()); err != nil || !row.Dump {
		t.Errorf("%s: /proc/net/netlink during %s's policy dump: %+v, %v; want Dump 1", d, family, row, err)
	}
	if k, err := nlsock.ReadRow(s.NS, unix.NETLINK_GENERIC, 0); err != nil || k.Rmem == 0 {
		t.Errorf("netns S: the NETLINK_GENERIC kernel socket during the dump: Rmem %d (%v), want the request's charge: the dump holds it", k.Rmem, err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("%v", err)
	}
	if k, err := nlsock.ReadRow(s.NS, unix.NETLINK_GENERIC, 0); err != nil || k.Rmem != 0 {
		t.Errorf("netns S: the NETLINK_GENERIC kernel socket after %s was closed mid-dump: Rmem %d (%v), want 0: the dump's request was not freed", d, k.Rmem, err)
	}
	a := s.Socket("a", selftests.Proto(unix.NETLINK_GENERIC))
	if again, _ := policyDump(t, a, family); !slices.EqualFunc(again, want, policyMsg.equal) {
		t.Errorf("%s: %s's policy dump after the close: %d messages, want the same %d as before it, message for message", a, family, len(again), len(want))
	}
	t.Logf("%s's CTRL_CMD_GETPOLICY dump: %d messages in %d parts on a fresh socket; closed with the first unread", family, len(want), parts)
}

// policyMsg is one message of a policy dump, without its sequence number
// and port id.
type policyMsg struct {
	typ   netlink.HeaderType
	flags netlink.HeaderFlags
	data  []byte
}

func (m policyMsg) equal(o policyMsg) bool {
	return m.typ == o.typ && m.flags == o.flags && bytes.Equal(m.data, o.data)
}

const (
	ctrlCmdGetPolicy = 10 // CTRL_CMD_GETPOLICY
	ctrlAttrFamName  = 2  // CTRL_ATTR_FAMILY_NAME
)

// startPolicyDump sends from g a CTRL_CMD_GETPOLICY dump request for every
// operation of family and returns its sequence number.
func startPolicyDump(t selftests.T, g *selftests.Sock, family string) uint32 {
	t.Helper()
	ae := netlink.NewAttributeEncoder()
	ae.String(ctrlAttrFamName, family)
	attrs, err := ae.Encode()
	if err != nil {
		t.Fatalf("%v", err)
	}
	seq := rtnl.NextSeq()
	req := netlink.Message{
		Header: netlink.Header{Type: unix.GENL_ID_CTRL, Flags: netlink.Request | netlink.Dump, Sequence: seq},
		Data:   append([]byte{ctrlCmdGetPolicy, 1, 0, 0}, attrs...), // struct genlmsghdr, then the name
	}
	if err := g.SendTo(req, 0, 0); err != nil {
		t.Fatalf("%v", err)
	}
	return seq
}

// policyDump reads family's whole policy dump on g: its messages, and in
// how many parts (datagrams) they came.
func policyDump(t selftests.T, g *selftests.Sock, family string) (msgs []policyMsg, parts int) {
	t.Helper()
	seq := startPolicyDump(t, g, family)
	for {
		dg, err := g.Recv()
		if errors.Is(err, nlsock.ErrEmpty) {
			t.Fatalf("%s: %s's policy dump stopped after %d parts without NLMSG_DONE", g, family, parts)
		}
		if err != nil {
			t.Fatalf("%v", err)
		}
		part, done := policyPart(t, g, family, dg, seq)
		msgs, parts = append(msgs, part...), parts+1
		if done {
			return msgs, parts
		}
	}
}

// policyPart checks one datagram of a policy dump (a unicast from the
// kernel of messages with the dump's sequence number, NLM_F_MULTI and
// nlctrl's type, NLMSG_DONE last if at all) and returns its messages and
// whether it ended the dump.
func policyPart(t selftests.T, g *selftests.Sock, family string, dg nlsock.Datagram, seq uint32) (msgs []policyMsg, done bool) {
	t.Helper()
	checkDumpPart(t, g, family+"'s policy dump", dg, seq)
	for i, m := range dg.Msgs {
		switch m.Header.Type {
		case netlink.Done:
			if i != len(dg.Msgs)-1 {
				t.Fatalf("%s: %s's policy dump: NLMSG_DONE is message %d of %d", g, family, i+1, len(dg.Msgs))
			}
			if len(m.Data) >= 4 {
				if e := int32(binary.NativeEndian.Uint32(m.Data)); e != 0 {
					t.Fatalf("%s: %s's policy dump ended with error %d", g, family, e)
				}
			}
			return msgs, true
		case unix.GENL_ID_CTRL:
		default:
			t.Fatalf("%s: %s's policy dump, message %d: %s", g, family, i, policyError(m))
		}
		msgs = append(msgs, policyMsg{m.Header.Type, m.Header.Flags, m.Data})
	}
	return msgs, false
}

// policyError renders a message that is neither nlctrl's nor NLMSG_DONE.
func policyError(m netlink.Message) string {
	if m.Header.Type == netlink.Error && len(m.Data) >= 4 {
		return fmt.Sprintf("error %d", int32(binary.NativeEndian.Uint32(m.Data)))
	}
	return fmt.Sprintf("type %d, want nlctrl's (%d)", m.Header.Type, unix.GENL_ID_CTRL)
}
