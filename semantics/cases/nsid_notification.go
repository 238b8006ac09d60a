// SPDX-License-Identifier: GPL-2.0

package cases

import "nlmcast/selftests"

// nsidNotification and netnsDeathDeadline are the harness's
// (selftests.NSIDNotification, selftests.NetnsDeathDeadline), which the
// switch program shares.
var nsidNotification = selftests.NSIDNotification

const netnsDeathDeadline = selftests.NetnsDeathDeadline
