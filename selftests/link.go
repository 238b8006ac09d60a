// SPDX-License-Identifier: GPL-2.0

package selftests

import "nlmcast/selftests/rtnl"

// LinkIndex returns the ifindex of the interface called name in n
// (RTM_GETLINK), failing the case if there is no such interface.
func (n *NS) LinkIndex(name string) uint32 {
	n.t.Helper()
	rep := n.Do(rtnl.GetLink(name))
	if len(rep.Msgs) != 1 {
		n.t.Fatalf("netns %s: RTM_GETLINK %s: %d replies, want 1", n.Name, name, len(rep.Msgs))
	}
	i, err := rtnl.LinkIndex(rep.Msgs[0])
	if err != nil {
		n.t.Fatalf("netns %s: RTM_GETLINK %s: %v", n.Name, name, err)
	}
	return i
}
