package cases

import (
	"errors"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// createTC sends a request that creates a tc object (qdisc, filter or
// action) from n's control socket. A kernel built without the qdisc,
// classifier or action kind answers ENOENT ("Specified qdisc kind is
// unknown", "TC classifier not found", "Failed to load TC action module")
// or EOPNOTSUPP: the case cannot run there and SKIPs, naming what is
// missing. Any other error fails the case.
func createTC(t selftests.T, n *selftests.NS, r rtnl.Request, needs string) rtnl.Reply {
	t.Helper()
	rep, err := n.Ctl.Do(r)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EOPNOTSUPP) {
		t.Skipf("%s not available in this kernel (%v)", needs, err)
	}
	if err != nil {
		t.Fatalf("netns %s: %v", n.Name, err)
	}
	return rep
}
