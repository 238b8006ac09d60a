// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"nlmcast/mutate/internal/cfunc"
)

// funcSet is a named set of functions of one file, the unit a campaign
// samples from. A name ending in "?" is optional: it is left out on trees
// that do not have it (e.g. helpers that only 6.12 has).
type funcSet struct {
	file  string
	funcs []string
	doc   string
}

// defaultSet is the multicast path of af_netlink.c on the patched tree.
const defaultSet = "af_netlink-mc"

var funcSets = map[string]funcSet{
	defaultSet: {
		file: "net/netlink/af_netlink.c",
		doc:  "bind, join and leave groups, walk and deliver a broadcast, report errors, recvmsg's control messages, and the series' lists",
		funcs: []string{
			// the series' lists
			"netlink_route_mc_head?", "netlink_route_mc_update?", "netlink_mc_sk?",
			"netlink_route_mc_net_init?", "netlink_route_mc_net_exit?",
			// membership: bind, join, leave
			"netlink_update_listeners", "netlink_release", "netlink_allowed",
			"netlink_update_subscriptions", "netlink_realloc_groups", "netlink_undo_bind",
			"netlink_bind", "netlink_update_socket_mc?", "netlink_setsockopt", "netlink_getsockopt",
			"__netlink_change_ngroups", "__netlink_clear_multicast_users", "netlink_has_listeners",
			// the walk and the delivery
			"netlink_overrun", "netlink_broadcast_deliver", "do_one_broadcast",
			"netlink_broadcast_filtered?", "netlink_broadcast",
			// errors
			"do_one_set_err", "netlink_set_err",
			// recvmsg's control messages
			"netlink_cmsg_recv_pktinfo", "netlink_cmsg_listen_all_nsid", "netlink_recvmsg",
		},
	},
	"rtnetlink-notify": {
		file:  "net/core/rtnetlink.c",
		doc:   "rtnetlink's notification helpers (and on 6.12 the conditional-notification helpers)",
		funcs: []string{"rtnl_notify", "rtnl_set_sk_err", "rtnl_unicast", "rtnl_notify_needed?", "rtnl_has_listeners?"},
	},
	"net_namespace-nsid": {
		file:  "net/core/net_namespace.c",
		doc:   "peernet2id and friends: the nsid a listener's cmsg carries, and the nsid requests and notifications (RTM_NEWNSID, RTM_GETNSID and its dump, RTM_DELNSID when a netns dies)",
		funcs: []string{"alloc_netid", "net_eq_idr", "__peernet2id", "peernet2id_alloc", "peernet2id", "peernet_has_id", "get_net_ns_by_id", "rtnl_net_notifyid", "rtnl_net_newid", "rtnl_net_getid", "rtnl_net_fill", "unhash_nsid", "rtnl_net_dumpid_one", "rtnl_net_dumpid", "rtnl_valid_dump_net_req"},
	},
}

// setNames are the sets' names, sorted.
func setNames() []string {
	var n []string
	for k := range funcSets {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// setMutants returns every mutant of the set in the tree at src.
func setMutants(src, name string) ([]cfunc.Mutant, error) {
	set, ok := funcSets[name]
	if !ok {
		return nil, fmt.Errorf("no function set %q (have %s)", name, strings.Join(setNames(), ", "))
	}
	text, err := os.ReadFile(filepath.Join(src, set.file))
	if err != nil {
		return nil, err
	}
	masked := cfunc.Mask(text)
	var funcs []string
	for _, f := range set.funcs {
		if name, optional := strings.CutSuffix(f, "?"); optional {
			if _, err := cfunc.FindFunc(masked, name); err != nil {
				continue
			}
			f = name
		}
		if !slices.Contains(funcs, f) {
			funcs = append(funcs, f)
		}
	}
	return cfunc.Mutants(set.file, text, funcs)
}
