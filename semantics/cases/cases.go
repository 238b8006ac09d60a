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
// FaultInjection are the cases that need a kernel with fault injection
// (fail-nth, failslab): they make the kernel's own allocations fail, and
// change failslab's global settings while they run. They are not in All:
// on every production kernel they SKIP, and netdev's CI (NIPA) reports a
// program with a skipped case as skipped. The stress program runs them,
// with the switch at 0 and at 1, beside its fault modes.
var FaultInjection = []selftests.Case{
	{Name: "notification_alloc_failure_enobufs", Run: notificationAllocFailureENOBUFS, About: "a notification the kernel cannot allocate (fail-nth) is ENOBUFS once, with a POLLERR wake-up, to each member of its group in the source netns, no one else"},
	{Name: "tc_clone_failure_broadcast_error", Run: tcCloneFailureBroadcastError, About: "a notification clone the kernel cannot allocate (fail-nth) is ENOBUFS and a drop for that subscriber, and fails the tc request exactly when that subscriber set NETLINK_BROADCAST_ERROR"},
	{Name: "broadcast_copies_may_sleep", Run: broadcastCopiesMaySleep, About: "a process's multicast is copied with its GFP_KERNEL: with fail-nth counting only allocations that cannot sleep, four subscribers make no more of them than one, and each gets the message once"},
	{Name: "nsid_request_alloc_failure_enomem", Run: nsidRequestAllocFailureENOMEM, About: "an RTM_NEWNSID or RTM_GETNSID whose allocation fails (fail-nth) is ENOMEM and does nothing: no id given, no bare ACK; never EEXIST"},
	{Name: "stats_notification_alloc_failure_enobufs", Run: statsNotificationAllocFailureENOBUFS, About: "an RTM_NEWSTATS the kernel cannot allocate (fail-nth) is ENOBUFS to the members of RTNLGRP_STATS, rtnetlink's last group on 6.1, no one else; the request succeeds"},
	{Name: "membership_alloc_failure_enomem", Run: membershipAllocFailureENOMEM, About: "a bind() or NETLINK_ADD_MEMBERSHIP whose group bitmap cannot be allocated (fail-nth) is ENOMEM and changes nothing: no portid from bind, no group; asked again, it subscribes"},
	{Name: "nsid_notification_alloc_failure_enomem", Run: nsidNotificationAllocFailureENOMEM, About: "an RTM_NEWNSID the kernel cannot allocate (fail-nth) is ENOMEM once to each RTNLGRP_NSID member in its netns, NO_ENOBUFS ones included; the id is given"},
}

// FaultInjectionInModes is FaultInjection as the stress program runs it:
// each case with the switch at 0 (on any kernel, as an unpatched kernel
// walks every subscriber, as 0 does), named failnth0.NAME, then at 1,
// failnth1.NAME.
func FaultInjectionInModes() []selftests.Case {
	var out []selftests.Case
	for _, v := range []string{"0", "1"} {
		for _, c := range FaultInjection {
			c.Name = "failnth" + v + "." + c.Name
			c.About = "with the switch at " + v + ": " + c.About
			c.Run = selftests.InSwitchMode(v, true, c.Run)
			out = append(out, c)
		}
	}
	return out
}

var All = append(group(Group, []selftests.Case{
	{Name: "local_subscriber_delivery", Run: localSubscriberDelivery, About: "a subscriber in the source netns gets every notification of its groups once, by bind bitmask or NETLINK_ADD_MEMBERSHIP, and nothing of other groups"},
	{Name: "foreign_plain_subscriber_isolated", Run: foreignPlainSubscriberIsolated, About: "a subscriber in another netns without LISTEN_ALL_NSID gets nothing, even with nsids mapped both ways"},
	{Name: "all_nsid_unmapped_source_ignored", Run: allNSIDUnmappedSourceIgnored, About: "a LISTEN_ALL_NSID subscriber gets nothing from a netns it has no id for, and the next event, tagged, once it maps it"},
	{Name: "all_nsid_mapped_source_reports_nsid", Run: allNSIDMappedSourceReportsNSID, About: "LISTEN_ALL_NSID subscribers get a mapped source's notification once, with their own netns's id for it (0 included)"},
	{Name: "ipv6_address_notified", Run: ipv6AddressNotified, About: "IPv6 address notifications, sent with GFP_ATOMIC, reach local and mapping ALL_NSID subscribers once, seq 0 pid 0: RTM_NEWADDR after DAD work, RTM_DELADDR before the ACK"},
	{Name: "neighbour_resolved_notified", Run: neighbourResolvedNotified, About: "a neighbour ARP resolves is notified from the receive softirq (atomic context) to local and mapping ALL_NSID subscribers once: reachable in the sender's netns, stale in the peer's"},
	{Name: "address_delete_notified", Run: addressDeleteNotified, About: "deleting an address notifies RTM_DELADDR then RTM_DELROUTE locally and to a mapping LISTEN_ALL_NSID subscriber, not to a foreign plain one"},
	{Name: "local_all_nsid_single_copy", Run: localAllNSIDSingleCopy, About: "a LISTEN_ALL_NSID subscriber in the source netns gets each local notification exactly once, without an nsid"},
	{Name: "all_nsid_option_toggle_live", Run: allNSIDOptionToggleLive, About: "LISTEN_ALL_NSID on and off takes effect on the next notification, independent of group membership; getsockopt reads it back"},
	{Name: "all_nsid_requires_cap_net_broadcast", Run: allNSIDRequiresCapNetBroadcast, About: "setting LISTEN_ALL_NSID needs CAP_NET_BROADCAST (EPERM), and a listener whose opener lacked it gets no foreign notification"},
	{Name: "sender_and_portid_excluded", Run: senderAndPortidExcluded, About: "a multicast skips its sender and every socket whose portid is the excluded one, in every netns"},
	{Name: "bind_bitmask_membership", Run: bindBitmaskMembership, About: "bind() subscribes groups 1-32 by bitmask; a re-bind replaces them (its portid must match) and keeps groups above 32; the MROUTE_R bits need CAP_NET_ADMIN"},
	{Name: "setsockopt_add_drop_membership", Run: setsockoptAddDropMembership, About: "ADD/DROP_MEMBERSHIP set and clear one group each, idempotently; group 0 and groups above RTNLGRP_MAX are EINVAL"},
	{Name: "diag_lists_unbound_subscribers", Run: diagListsUnboundSubscribers, About: "socket monitoring (NETLINK_SOCK_DIAG) lists a netns's bound sockets, and an unbound one exactly while it is a member of a group, once each, with its groups; never another netns's"},
	{Name: "groups_above_32", Run: groupsAbove32, About: "groups above 32 follow the same delivery rules: once locally with PKTINFO and nl_groups 0, with the nsid to a mapping ALL_NSID member"},
	{Name: "scm_credentials_reported", Run: scmCredentialsReported, About: "SO_PASSCRED adds SCM_CREDENTIALS to every datagram: the kernel's (0/0/0) with notifications and ACKs, a user sender's own pid, uid and gid"},
	{Name: "short_buffer_msg_trunc", Run: shortBufferMsgTrunc, About: "a notification read into a buffer of its size comes whole; one byte short it is cut with MSG_TRUNC; MSG_TRUNC in the flags returns its full length"},
	{Name: "options_read_back", Run: optionsReadBack, About: "getsockopt reads back each SOL_NETLINK flag as last set, independently; NETLINK_LIST_MEMBERSHIPS reports its size with optlen 0 and is EFAULT into unwritable memory; an unreadable optlen or option value is EFAULT and changes nothing"},
	{Name: "pktinfo_group_reporting", Run: pktinfoGroupReporting, About: "NETLINK_PKTINFO gives the delivering group on every message (with the nsid for ALL_NSID), and stops at once when cleared"},
	{Name: "socket_close_unsubscribes", Run: socketCloseUnsubscribes, About: "closing a subscribed socket, queue unread, takes it out of delivery and leaves the other subscribers exactly as they were"},
	{Name: "socket_close_ends_dump", Run: socketCloseEndsDump, About: "closing a socket in the middle of a dump ends it: the request the dump held is freed (the rtnetlink kernel socket is charged nothing), and other dumps list everything"},
	{Name: "dump_parts_follow_reader_buffer", Run: dumpPartsFollowReaderBuffer, About: "a dump's parts grow to the reader's buffer, up to 32 KiB: a page before any read, more after a 32 KiB read where order-3 blocks are to spare, never more than 32 KiB after 1 MiB reads; every address once"},
	{Name: "socket_close_wakes_blocked_sender", Run: socketCloseWakesBlockedSender, About: "a sendto() blocked on a full receiver is woken by the receiver's close and fails with ECONNREFUSED at once, not at its SO_SNDTIMEO"},
	{Name: "socket_close_releases_accounting", Run: socketCloseReleasesAccounting, About: "the netns's count of netlink sockets (/proc/net/protocols) rises by one per socket opened and falls by one per socket closed, exactly"},
	{Name: "device_move_between_netns", Run: deviceMoveBetweenNetns, Slow: true, About: "moving a device notifies RTM_DELLINK in the old netns and RTM_NEWLINK in the new one, after RTM_NEWNSID, each to its own subscribers"},
	{Name: "netns_delete_while_subscribed", Run: netnsDeleteWhileSubscribed, Slow: true, About: "a netns whose handle is gone keeps delivering while its sockets are open, and its death sends one RTM_DELNSID to each mapper"},
	{Name: "netns_death_removes_linked_device", Run: netnsDeathRemovesLinkedDevice, Slow: true, About: "a device linked to a dying netns goes with it: RTM_DELNSID, then RTM_DELLINK with link netnsid -1, to the surviving netns's subscribers; the id is free again"},
	{Name: "netns_churn", Run: netnsChurn, Slow: true, About: "netns with plain and ALL_NSID subscribers come and go under traffic, and every delivery stays exact"},
	{Name: "netns_held_by_socket_names_peers", Run: netnsHeldBySocketNamesPeers, About: "a netns one socket alone keeps alive still names its peers: RTM_GETLINK of a veth from that socket reports the peer's netns by the same id as before, not -1"},
	{Name: "nsid_assignment_notified", Run: nsidAssignmentNotified, About: "an id the kernel chooses is the lowest free (0 first); a requested id is given exactly or refused with EEXIST; each id given is one RTM_NEWNSID on RTNLGRP_NSID"},
	{Name: "nsid_lookup_matches_delivery", Run: nsidLookupMatchesDelivery, Slow: true, About: "RTM_GETNSID by pid, fd or id, in the own netns or a target one, and its dump report the nsid a LISTEN_ALL_NSID delivery carries, and keep no reference to the netns"},
	{Name: "nsid_requests_refused", Run: nsidRequestsRefused, About: "an RTM_NEWNSID or RTM_GETNSID the kernel cannot carry out fails with its errno, extended ACK text and blamed attribute, announces nothing and changes no id"},
	{Name: "nsid_dump_in_parts", Run: nsidDumpInParts, Timeout: nsidDumpInPartsTimeout, About: "an RTM_GETNSID dump longer than one skb carries on where it stopped: every id once, ascending, over several datagrams"},
	{Name: "no_enobufs_ends_congestion", Run: noENOBUFSEndsCongestion, About: "a congested socket drops broadcasts and blocks unicast senders even with room, until NETLINK_NO_ENOBUFS is set: the sender is woken and delivers, the next broadcast is queued"},
	{Name: "socket_filter_drops_own_copy", Run: socketFilterDropsOwnCopy, About: "a socket filter that drops everything takes that socket's copy of a notification only: the subscribers walked before and after it get theirs"},
	{Name: "first_copy_freed_midwalk", Run: firstCopyFreedMidwalk, About: "a notification whose first recipient frees its copy on another CPU while the walk goes on reaches every subscriber once, each charged alone (Rmem 0 once read); SKIPs on one CPU"},
	{Name: "overrun_enobufs", Run: overrunENOBUFS, About: "an overflowing subscriber loses the rest of a burst and gets ENOBUFS once (NO_ENOBUFS hides it; BROADCAST_ERROR fails the request)"},
	{Name: "dump_continuation_enobufs", Run: dumpContinuationENOBUFS, About: "a dump whose next part does not fit beside a queued notification stops with ENOBUFS, woken as an error, and goes on, losing nothing, at the next read"},
	{Name: "nexthop_compat_mode_recipients", Run: nexthopCompatModeRecipients, About: "a nexthop replace notifies RTNLGRP_NEXTHOP, and the routes using it only while nexthop_compat_mode is 1, to local and ALL_NSID subscribers"},
	{Name: "tc_group_delivery", Run: tcGroupDelivery, About: "tc qdisc, chain and filter notifications follow the same delivery rules: local and mapping ALL_NSID subscribers, not foreign plain ones"},
	{Name: "tc_echo_requester", Run: tcEchoRequester, About: "a tc request with NLM_F_ECHO gets its notification back once, before the ACK, subscribed or not; without ECHO only the ACK"},
	{Name: "genetlink_table_covers_groups", Run: genetlinkTableCoversGroups, About: "NETLINK_GENERIC's group table covers every family's multicast group id, in whole longs once a family besides nlctrl has groups: its last group can be joined, the next is EINVAL"},
	{Name: "genetlink_dump_closed_midway", Run: genetlinkDumpClosedMidway, About: "closing a NETLINK_GENERIC socket in the middle of a policy dump ends it: the request is freed (the kernel socket is charged nothing), the dump's done() runs, and the next dump is the same"},
	{Name: "uevent_listener_gets_synthetic_event", Run: ueventListenerGetsSyntheticEvent, About: "a synthetic uevent reaches each NETLINK_KOBJECT_UEVENT member of group 1 once, in every netns the initial user namespace owns, from the kernel as root; the write() reports its full length"},
	{Name: "other_protocol_usersock_unaffected", Run: otherProtocolUsersockUnaffected, About: "NETLINK_USERSOCK multicast follows the same per-socket rules as NETLINK_ROUTE, in every mode; anyone may send to its groups, only CAP_NET_ADMIN may listen (EPERM)"},
	{Name: "route_send_needs_cap_net_admin", Run: routeSendNeedsCapNetAdmin, About: "on NETLINK_ROUTE only CAP_NET_ADMIN may send to a group or another socket: without it sendto() is EPERM and nothing arrives; with it the multicast and the unicast arrive once each"},
	{Name: "send_above_sndbuf_emsgsize", Run: sendAboveSndbufEMSGSIZE, About: "a datagram longer than sk_sndbuf - 32 is EMSGSIZE and reaches no one; one of exactly that length reaches the group's member and the peer once each"},
	{Name: "unknown_socket_type_refused", Run: unknownSocketTypeRefused, About: "socket(AF_NETLINK) is made for SOCK_RAW and SOCK_DGRAM only: SOCK_STREAM, SOCK_SEQPACKET and SOCK_RDM are ESOCKTNOSUPPORT"},
	{Name: "unknown_protocol_refused", Run: unknownProtocolRefused, About: "socket(AF_NETLINK) for a protocol the kernel does not have (-1, 32 and above, NETLINK_UNUSED) is EPROTONOSUPPORT, never a socket of another protocol"},
	{Name: "target_netnsid_dump_matches_setns_dump", Run: targetNetnsidDumpMatchesSetnsDump, About: "an address dump with IFA_TARGET_NETNSID set to a notification's nsid returns what a dump inside that netns returns"},
	{Name: "target_netnsid_dump_needs_strict_check", Run: targetNetnsidDumpNeedsStrictCheck, About: "without NETLINK_GET_STRICT_CHK IFA_TARGET_NETNSID is ignored (the own netns's addresses); with it an unassigned or negative id is EINVAL"},
	{Name: "target_netnsid_dump_requires_cap_net_admin", Run: targetNetnsidDumpRequiresCapNetAdmin, About: "a targeted address dump needs CAP_NET_ADMIN over the target's user namespace in the socket opener's credentials"},
	{Name: "tc_echo_without_listener", Run: tcEchoWithoutListener, About: "with no RTNLGRP_TC listener, tc requests take effect and an ECHO requester gets exactly its own notifications"},
	{Name: "tc_foreign_listener_gets_nothing", Run: tcForeignListenerGetsNothing, About: "RTNLGRP_TC listeners only in another netns make tc build notifications, but none reaches them"},
	{Name: "tc_notification_charged_trimmed", Run: tcNotificationChargedTrimmed, About: "a tc notification built in a page-sized buffer is trimmed before delivery: each receiver is charged the same, less than that buffer, and nothing once it has read it"},
	{Name: "tc_subscribed_echo_single_copy", Run: tcSubscribedEchoSingleCopy, About: "an ECHO requester subscribed to RTNLGRP_TC gets each notification once (its own as the echo), then the ACK"},
}),
	// Alone, after the group: where its sockets are RTNLGRP_TC's only
	// members, a member missing from the listeners bitmap gets nothing.
	selftests.Case{Name: "tc_listener_by_bind", Run: tcListenerByBind, About: "a socket that joined RTNLGRP_TC by bind() or re-bind alone is a listener: tc notifies it; a re-bind without the group ends that"},
)

// Group is the table's selftests.Case.Group.
const Group = "semantics"

func group(name string, cases []selftests.Case) []selftests.Case {
	for i := range cases {
		cases[i].Group = name
	}
	return cases
}
