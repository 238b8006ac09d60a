package main

import "nlmcast/selftests"

// cases is the suite in run order; ../shared/design/cases.md §5 describes
// each one, and each case's doc comment names the kernel code behind it.
var cases = []selftests.Case{
	{Name: "local_subscriber_delivery", Run: localSubscriberDelivery},
	{Name: "foreign_plain_subscriber_isolated", Run: foreignPlainSubscriberIsolated},
	{Name: "all_nsid_unmapped_source_ignored", Run: allNSIDUnmappedSourceIgnored},
	{Name: "all_nsid_mapped_source_reports_nsid", Run: allNSIDMappedSourceReportsNSID},
	{Name: "local_all_nsid_single_copy", Run: localAllNSIDSingleCopy},
	{Name: "all_nsid_option_toggle_live", Run: allNSIDOptionToggleLive},
	{Name: "all_nsid_requires_cap_net_broadcast", Run: allNSIDRequiresCapNetBroadcast},
	{Name: "sender_and_portid_excluded", Run: senderAndPortidExcluded},
	{Name: "bind_bitmask_membership", Run: bindBitmaskMembership},
	{Name: "setsockopt_add_drop_membership", Run: setsockoptAddDropMembership},
	{Name: "groups_above_32", Run: groupsAbove32},
	{Name: "pktinfo_group_reporting", Run: pktinfoGroupReporting},
	{Name: "socket_close_unsubscribes", Run: socketCloseUnsubscribes},
	{Name: "device_move_between_netns", Run: deviceMoveBetweenNetns},
	{Name: "netns_delete_while_subscribed", Run: netnsDeleteWhileSubscribed},
	{Name: "netns_churn", Run: netnsChurn},
	{Name: "overrun_enobufs", Run: overrunENOBUFS},
	{Name: "nexthop_compat_mode_recipients", Run: nexthopCompatModeRecipients},
	{Name: "tc_group_delivery", Run: tcGroupDelivery},
	{Name: "tc_echo_requester", Run: tcEchoRequester},
	{Name: "other_protocol_usersock_unaffected", Run: otherProtocolUsersockUnaffected},
}
