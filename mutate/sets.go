// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"io"
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
		doc:  "a socket's way into and out of the lists (create, bind, join and leave groups, release, destruct), a notification's way to a reader (nlmsg_notify, the group send, the walk, delivery, the receive queue's accounting, recvmsg and its control messages), error reports, and the series' lists and walk macro",
		funcs: []string{
			// the series' lists and walk
			"netlink_route_mc_head?", "netlink_route_mc_update?", "netlink_mc_sk?",
			"netlink_route_mc_net_init?", "netlink_route_mc_net_exit?", "#netlink_for_each_mc?",
			// the table's locks, taken on every way in and out and by the walk
			"netlink_table_grab", "netlink_table_ungrab", "netlink_lock_table", "netlink_unlock_table",
			"#nl_deref_protected?",
			// a socket's way in and out
			"__netlink_create", "netlink_create", "netlink_insert", "netlink_autobind", "netlink_remove",
			"netlink_sock_destruct", "deferred_put_nlk_sk",
			// membership: bind, join, leave
			"netlink_update_listeners", "netlink_release", "netlink_allowed",
			"netlink_update_subscriptions", "netlink_realloc_groups", "netlink_undo_bind",
			"netlink_bind", "netlink_update_socket_mc?", "netlink_setsockopt", "netlink_getsockopt",
			"__netlink_change_ngroups", "__netlink_clear_multicast_users", "netlink_has_listeners",
			// a notification's way to the walk: rtnetlink's and a user's group send
			"nlmsg_notify", "netlink_sendmsg",
			// the walk and the delivery
			"netlink_overrun", "netlink_trim", "netlink_skb_set_owner_r", "netlink_skb_destructor",
			"__netlink_sendskb", "netlink_broadcast_deliver", "do_one_broadcast",
			"netlink_broadcast_filtered?", "netlink_broadcast",
			// errors
			"do_one_set_err", "netlink_set_err",
			// recvmsg's control messages
			"netlink_cmsg_recv_pktinfo", "netlink_cmsg_listen_all_nsid", "netlink_rcv_wake", "netlink_recvmsg",
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
			var err error
			if macro, ok := strings.CutPrefix(name, cfunc.MacroPrefix); ok {
				_, err = cfunc.FindMacro(text, macro)
			} else {
				_, err = cfunc.FindFunc(masked, name)
			}
			if err != nil {
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

// writeSummary prints how many mutants each function (or macro) and each
// operator has: a table with one row per function in the set's order and
// one column per operator, and the totals.
func writeSummary(w io.Writer, ms []cfunc.Mutant) {
	var funcs []string
	count := map[string]map[string]int{}
	opTotal := map[string]int{}
	for _, m := range ms {
		if count[m.Func] == nil {
			count[m.Func] = map[string]int{}
			funcs = append(funcs, m.Func)
		}
		count[m.Func][m.Op]++
		opTotal[m.Op]++
	}
	var ops []string
	for _, op := range cfunc.Operators {
		if opTotal[op] > 0 {
			ops = append(ops, op)
		}
	}
	fmt.Fprintf(w, "| function | %s | all |\n|---|%s---|\n", strings.Join(ops, " | "), strings.Repeat("---|", len(ops)))
	for _, f := range funcs {
		row := []string{}
		all := 0
		for _, op := range ops {
			row = append(row, fmt.Sprint(count[f][op]))
			all += count[f][op]
		}
		fmt.Fprintf(w, "| %s | %s | %d |\n", f, strings.Join(row, " | "), all)
	}
	row := []string{}
	for _, op := range ops {
		row = append(row, fmt.Sprint(opTotal[op]))
	}
	fmt.Fprintf(w, "| all %d functions | %s | %d |\n", len(funcs), strings.Join(row, " | "), len(ms))
}
