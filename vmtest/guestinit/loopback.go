// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"

	"nlmcast/selftests/netns"
	"nlmcast/selftests/rtnl"
)

// bringLoopbackUp sets IFF_UP on lo in ns: nothing else in the guest would,
// and the suites bind and route over it.
func bringLoopbackUp(ns *netns.NS) error {
	c, err := rtnl.Dial(ns)
	if err != nil {
		return fmt.Errorf("bring lo up in netns %s: %w", ns.Name, err)
	}
	defer c.Close()
	if _, err := c.Do(rtnl.SetUp(rtnl.LoopbackIndex, true)); err != nil {
		return fmt.Errorf("bring lo up in netns %s: %w", ns.Name, err)
	}
	return nil
}
