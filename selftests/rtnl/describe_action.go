// SPDX-License-Identifier: GPL-2.0

package rtnl

import (
	"fmt"

	"github.com/mdlayher/netlink"
)

// describeAction summarises an RTM_NEWACTION/RTM_DELACTION message as the
// kind and index of its first action ("mirred index 7").
func describeAction(m netlink.Message) string {
	kind, index, ok := ActionIndex(m)
	if !ok {
		return "no action"
	}
	return fmt.Sprintf("%s index %d", kind, index)
}
