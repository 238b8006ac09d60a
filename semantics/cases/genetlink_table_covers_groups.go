// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"unsafe"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// genetlinkTableCoversGroups: NETLINK_GENERIC's group table covers every
// multicast group the generic netlink families have, in whole longs once
// a family other than nlctrl has any. nlctrl registers its one group
// (GENL_ID_CTRL) before the protocol's kernel socket exists, so the table
// starts at netlink_kernel_create()'s 32 groups; every family with groups
// that registers later, built in or a module, grows it to
// mc_groups_longs * BITS_PER_LONG groups, the size of the bitmap its ids
// come from. So, with the families and their group ids read from
// nlctrl's CTRL_CMD_GETFAMILY dump: a socket that joined a group reports
// (NETLINK_LIST_MEMBERSHIPS with optlen 0) a table of at least the
// highest id's bits, a whole number of longs when another family has
// groups, and on a kernel without modules (no /proc/modules: no family
// ever unregisters) exactly 32 groups or the longs that cover the highest
// id; the table's last group can be joined and the one after is EINVAL;
// and the highest id can be joined.
//
// Kernel: genl_init(): genl_register_family(&genl_ctrl) before
// register_pernet_subsys(&genl_pernet_ops); genl_pernet_init():
// netlink_kernel_create(net, NETLINK_GENERIC, &cfg) without cfg.groups
// (32: if (!cfg || cfg->groups < 32) groups = 32);
// genl_validate_assign_mc_groups(): if (!init_net.genl_sock) return 0;
// ... __netlink_change_ngroups(net->genl_sock, mc_groups_longs *
// BITS_PER_LONG) (or netlink_change_ngroups() for a family without
// netnsok): if (groups < 32) groups = 32; tbl->groups = groups;
// netlink_realloc_groups() gives a joining socket the table's size;
// netlink_setsockopt(): if (!val || val - 1 >= nlk->ngroups) return
// -EINVAL.
func genetlinkTableCoversGroups(t selftests.T) {
	s := selftests.NewNS(t, "S")
	g := s.Socket("g", selftests.Proto(unix.NETLINK_GENERIC), selftests.Join(unix.GENL_ID_CTRL))
	families := genlFamilyGroups(t, g)
	ids, others := []uint32{}, []string{}
	for name, groups := range families {
		for _, id := range groups {
			ids = append(ids, id)
		}
		if name != "nlctrl" && len(groups) > 0 {
			others = append(others, name)
		}
	}
	slices.Sort(others)
	highest := slices.Max(append(ids, unix.GENL_ID_CTRL))
	size, err := g.MembershipsSize()
	if err != nil {
		t.Fatalf("%v", err)
	}
	table := uint32(size) * 8
	long := int(unsafe.Sizeof(uintptr(0)))
	switch {
	case table < highest:
		t.Errorf("%s: NETLINK_GENERIC's table has %d groups (%d bytes), below the highest group id %d (%v)", g, table, size, highest, families)
	case len(others) > 0 && (size < long || size%long != 0):
		t.Errorf("%s: NETLINK_GENERIC's table is %d bytes, not a whole number of %d-byte longs, although %v registered groups after nlctrl (genl_validate_assign_mc_groups() -> __netlink_change_ngroups(mc_groups_longs * BITS_PER_LONG))",
			g, size, long, others)
	}
	// Without modules no family ever unregisters, so the table is exactly
	// what the families listed made it: 32 groups if nlctrl is alone,
	// else the longs that cover the highest id ever given.
	if _, err := os.Stat("/proc/modules"); errors.Is(err, os.ErrNotExist) {
		want := uint32(32)
		if len(others) > 0 {
			bits := uint32(8 * long)
			want = (highest + 1 + bits - 1) / bits * bits
		}
		if table != want {
			t.Errorf("%s: NETLINK_GENERIC's table has %d groups; a kernel without modules, whose families with groups besides nlctrl are %v (highest id %d), makes it exactly %d",
				g, table, others, highest, want)
		}
	}
	t.Logf("NETLINK_GENERIC: %d groups, highest id %d, families with groups besides nlctrl: %v", table, highest, others)

	j := s.Socket("j", selftests.Proto(unix.NETLINK_GENERIC))
	for _, group := range []uint32{highest, table} {
		if err := j.Join(group); err != nil {
			t.Errorf("%s: NETLINK_ADD_MEMBERSHIP %d on a table of %d groups: %v", j, group, table, err)
		} else if err := j.Leave(group); err != nil {
			t.Errorf("%s: NETLINK_DROP_MEMBERSHIP %d: %v", j, group, err)
		}
	}
	if err := j.Join(table + 1); !errors.Is(err, unix.EINVAL) {
		t.Errorf("%s: NETLINK_ADD_MEMBERSHIP %d, past a table of %d groups: %v, want EINVAL", j, table+1, table, err)
	}
	expectMemberships(t, j)
}

// genlFamilyGroups is nlctrl's CTRL_CMD_GETFAMILY dump read on g: each
// family's name and its multicast group ids.
func genlFamilyGroups(t selftests.T, g *selftests.Sock) map[string][]uint32 {
	t.Helper()
	const (
		ctrlCmdGetFamily  = 3 // CTRL_CMD_GETFAMILY
		ctrlAttrName      = 2 // CTRL_ATTR_FAMILY_NAME
		ctrlAttrMcGroups  = 7 // CTRL_ATTR_MCAST_GROUPS
		ctrlAttrMcGroupID = 2 // CTRL_ATTR_MCAST_GRP_ID
	)
	seq := rtnl.NextSeq()
	req := netlink.Message{
		Header: netlink.Header{Type: unix.GENL_ID_CTRL, Flags: netlink.Request | netlink.Dump, Sequence: seq},
		Data:   []byte{ctrlCmdGetFamily, 1, 0, 0}, // struct genlmsghdr: cmd, version
	}
	if err := g.SendTo(req, 0, 0); err != nil {
		t.Fatalf("%v", err)
	}
	out := map[string][]uint32{}
	for {
		dg, err := g.Recv()
		if errors.Is(err, nlsock.ErrEmpty) {
			t.Fatalf("%s: nlctrl's family dump stopped before NLMSG_DONE", g)
		}
		if err != nil {
			t.Fatalf("%v", err)
		}
		for _, m := range dg.Msgs {
			if m.Header.Sequence != seq {
				continue // a notification of nlctrl's group, which g joined
			}
			if m.Header.Type == netlink.Done {
				return out
			}
			if m.Header.Type == netlink.Error {
				t.Fatalf("%s: nlctrl's family dump: error %d", g, int32(binary.NativeEndian.Uint32(m.Data)))
			}
			name, groups, err := parseGenlFamily(m.Data, ctrlAttrName, ctrlAttrMcGroups, ctrlAttrMcGroupID)
			if err != nil {
				t.Fatalf("%s: nlctrl's family dump: %v", g, err)
			}
			out[name] = groups
		}
	}
}

// parseGenlFamily reads a CTRL_CMD_NEWFAMILY message's payload: the family
// name and the ids of its multicast groups.
func parseGenlFamily(b []byte, nameAttr, groupsAttr, idAttr uint16) (string, []uint32, error) {
	if len(b) < 4 {
		return "", nil, fmt.Errorf("a %d-byte message, shorter than struct genlmsghdr", len(b))
	}
	ad, err := netlink.NewAttributeDecoder(b[4:])
	if err != nil {
		return "", nil, err
	}
	var name string
	var ids []uint32
	for ad.Next() {
		switch ad.Type() {
		case nameAttr:
			name = ad.String()
		case groupsAttr:
			ad.Nested(func(groups *netlink.AttributeDecoder) error {
				for groups.Next() {
					groups.Nested(func(grp *netlink.AttributeDecoder) error {
						for grp.Next() {
							if grp.Type() == idAttr {
								ids = append(ids, grp.Uint32())
							}
						}
						return grp.Err()
					})
				}
				return groups.Err()
			})
		}
	}
	if err := ad.Err(); err != nil {
		return "", nil, err
	}
	if name == "" {
		return "", nil, errors.New("a family without CTRL_ATTR_FAMILY_NAME")
	}
	return name, ids, nil
}
