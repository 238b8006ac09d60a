// SPDX-License-Identifier: GPL-2.0

// Package cases holds the semantics suite's case table: which sockets
// receive NETLINK_ROUTE multicast notifications. Every case must pass on
// every kernel, with net.core.netlink_route_mc_index absent, 0 or 1.
package cases

import "nlmcast/selftests"

// All is the suite in run order. Each case's doc comment says what the
// kernel does and names the code behind it. The switch program runs the
// same table again with net.core.netlink_route_mc_index at 0 and at 1.
//
// Every case works in namespaces of its own and changes nothing global
// (no switch, no sysctl outside its namespaces), so the table is one
// Group: its cases run concurrently. What the kernel shares between
// namespaces, they allow for: tc builds its notifications when anyone,
// in any namespace, listens to RTNLGRP_TC, and the tc cases assert only
// what holds either way. The cases that wait for namespaces to die are
// Slow: they start first.
var All = group(Group, []selftests.Case{
	{Name: "local_subscriber_delivery", Run: localSubscriberDelivery},
	{Name: "foreign_plain_subscriber_isolated", Run: foreignPlainSubscriberIsolated},
	{Name: "all_nsid_unmapped_source_ignored", Run: allNSIDUnmappedSourceIgnored},
	{Name: "all_nsid_mapped_source_reports_nsid", Run: allNSIDMappedSourceReportsNSID},
	{Name: "address_delete_notified", Run: addressDeleteNotified},
	{Name: "local_all_nsid_single_copy", Run: localAllNSIDSingleCopy},
	{Name: "all_nsid_option_toggle_live", Run: allNSIDOptionToggleLive},
	{Name: "all_nsid_requires_cap_net_broadcast", Run: allNSIDRequiresCapNetBroadcast},
	{Name: "sender_and_portid_excluded", Run: senderAndPortidExcluded},
	{Name: "bind_bitmask_membership", Run: bindBitmaskMembership},
	{Name: "setsockopt_add_drop_membership", Run: setsockoptAddDropMembership},
	{Name: "groups_above_32", Run: groupsAbove32},
	{Name: "pktinfo_group_reporting", Run: pktinfoGroupReporting},
	{Name: "socket_close_unsubscribes", Run: socketCloseUnsubscribes},
	{Name: "device_move_between_netns", Run: deviceMoveBetweenNetns, Slow: true},
	{Name: "netns_delete_while_subscribed", Run: netnsDeleteWhileSubscribed, Slow: true},
	{Name: "netns_churn", Run: netnsChurn, Slow: true},
	{Name: "overrun_enobufs", Run: overrunENOBUFS},
	{Name: "nexthop_compat_mode_recipients", Run: nexthopCompatModeRecipients},
	{Name: "tc_group_delivery", Run: tcGroupDelivery},
	{Name: "tc_echo_requester", Run: tcEchoRequester},
	{Name: "other_protocol_usersock_unaffected", Run: otherProtocolUsersockUnaffected},
	{Name: "target_netnsid_dump_matches_setns_dump", Run: targetNetnsidDumpMatchesSetnsDump},
	{Name: "target_netnsid_dump_needs_strict_check", Run: targetNetnsidDumpNeedsStrictCheck},
	{Name: "target_netnsid_dump_requires_cap_net_admin", Run: targetNetnsidDumpRequiresCapNetAdmin},
	{Name: "tc_echo_without_listener", Run: tcEchoWithoutListener},
	{Name: "tc_foreign_listener_gets_nothing", Run: tcForeignListenerGetsNothing},
	{Name: "tc_subscribed_echo_single_copy", Run: tcSubscribedEchoSingleCopy},
})

// Group is the table's selftests.Case.Group.
const Group = "semantics"

func group(name string, cases []selftests.Case) []selftests.Case {
	for i := range cases {
		cases[i].Group = name
	}
	return cases
}
