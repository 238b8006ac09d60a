package cases

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// nsidNotification is an RTM_NEWNSID or RTM_DELNSID that the kernel sends
// on its own (rtnl_net_notifyid() with no request: seq 0, pid 0) about the
// peer it has the id id for.
func nsidNotification(typ uint16, id int32) selftests.Msg {
	return selftests.Notification(typ, unix.RTNLGRP_NSID, fmt.Sprintf("nsid %d", id))
}

// assignNSID gives peer the id id in obs with an RTM_NEWNSID request from
// obs's control socket, checks with RTM_GETNSID that the id is in place,
// and returns the RTM_NEWNSID notification the request caused in obs
// (rtnl_net_newid() -> rtnl_net_notifyid() with the request's portid and
// header).
func assignNSID(t selftests.T, obs, peer *selftests.NS, id int32) selftests.Msg {
	t.Helper()
	rep := obs.Do(rtnl.NewNSID(peer.FD(), id))
	if got := obs.IDOf(peer); got != id {
		t.Fatalf("netns %s: gave netns %s the id %d, but RTM_GETNSID reports %d", obs.Name, peer.Name, id, got)
	}
	return selftests.Msg{Type: unix.RTM_NEWNSID, Seq: rep.Seq, Pid: obs.Ctl.Portid(), Group: unix.RTNLGRP_NSID,
		Detail: fmt.Sprintf("nsid %d", id)}
}

// netnsDeathDeadline bounds the wait for the RTM_DELNSID of a namespace
// whose last reference is gone. cleanup_net() runs on a workqueue shared by
// every dying namespace of the machine: tens of ms here, seconds on a debug
// kernel under emulation. Only a failing case waits this long.
const netnsDeathDeadline = 10 * time.Second
