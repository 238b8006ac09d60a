// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"testing"

	"nlmcast/selftests"
)

// TestDeviceMoveInCurrentMode runs the device move part of
// switch_device_move_follows_netns once in whatever mode the kernel is in,
// without touching the switch: on a kernel without it, this checks the
// expectations against the unpatched walk.
func TestDeviceMoveInCurrentMode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces")
	}
	t.Logf("netlink_route_mc_index=%s", selftests.RouteMCIndex())
	deviceMoveFollowsNetns(t, "")
}
