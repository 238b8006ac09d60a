package cases

import (
	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

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
