// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// NSIDNotification is an RTM_NEWNSID or RTM_DELNSID that the kernel sends
// on its own (rtnl_net_notifyid() with no request: seq 0, pid 0) on
// RTNLGRP_NSID about the peer it has the id id for.
func NSIDNotification(typ uint16, id int32) Msg {
	return Notification(typ, unix.RTNLGRP_NSID, fmt.Sprintf("nsid %d", id))
}

// NetnsDeathDeadline bounds the wait for the RTM_DELNSID of a namespace
// whose last reference is gone. cleanup_net() runs on a workqueue shared by
// every dying namespace of the machine: tens of ms here, seconds on a debug
// kernel under emulation. Only a failing case waits this long.
const NetnsDeathDeadline = 10 * time.Second
