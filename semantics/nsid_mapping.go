package main

import (
	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// mapPeerExactly gives peer the id nsid in obs (RTM_NEWNSID from inside obs)
// and stops the case unless RTM_GETNSID then reports exactly that id.
func mapPeerExactly(t selftests.T, obs, peer *selftests.NS, nsid int32) {
	t.Helper()
	if got := obs.Map(peer, nsid); got != nsid {
		t.Fatalf("netns %s: gave netns %s the id %d, but RTM_GETNSID reports %d", obs.Name, peer.Name, nsid, got)
	}
}

// requireNoPeerID stops the case unless obs has no id for peer, as
// RTM_GETNSID reports it now: the premise of an "unmapped" expectation.
// Ids also appear implicitly (veth peers, device moves), so the cases
// check right where it matters instead of trusting the setup.
func requireNoPeerID(t selftests.T, obs, peer *selftests.NS) {
	t.Helper()
	if id := obs.IDOf(peer); id != rtnl.NotAssigned {
		t.Fatalf("netns %s has the id %d for netns %s, want none (RTM_GETNSID)", obs.Name, id, peer.Name)
	}
}
