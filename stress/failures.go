// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// The fault modes' failures that hit the broadcast are counted at the
// receivers that only a failed clone in the walk can overrun
// (cloneOnlyKinds), per receiver kind, and required per protocol and per
// kind: the NETLINK_ROUTE walk is what the series changes, and a run
// whose failures all hit the NETLINK_USERSOCK walk proves nothing of it.
const (
	protoRoute    = "NETLINK_ROUTE"
	protoUsersock = "NETLINK_USERSOCK"
)

// usersockShare divides -min-failures into what each NETLINK_USERSOCK
// clone-only kind must reach. A batch makes one usersock multicast
// against 6 ROUTE notifications a cycle, and usersock-foreign-all-nsid
// is one socket: on P-fault (-cycles 2 -switch-cycles 4, 20 %, TCG on a
// loaded host) the modes that ended once the ROUTE observer had read 100
// to 147 ENOBUFS had 5 to 14 at each usersock kind (and 9 to 46 in
// earlier runs), so a 50th of the ROUTE minimum leaves them a margin.
const usersockShare = 50

// kindMinimum is the failures a clone-only receiver kind of protocol
// proto must have read for a fault mode to have proved its minimum.
func kindMinimum(proto string, minFailures int64) int64 {
	if proto == protoUsersock {
		return max(1, (minFailures+usersockShare-1)/usersockShare)
	}
	return max(1, minFailures)
}

// failureVerdict judges the failures each clone-only kind read (counts,
// by kind; a kind not in counts read none) after a fault mode ran for
// elapsed: fails for what only a kernel explains, shorts for minima not
// reached. None at all fails, as does none in the ROUTE walk while the
// usersock kinds reached theirs: the injection reached the walks, but
// the ROUTE walk reported none of its failed clones.
func failureVerdict(counts map[string]int64, minFailures int64, failPercent int, elapsed time.Duration, maxDuration time.Duration) (fails, shorts []string) {
	perProto := map[string]int64{}
	for kind, proto := range cloneOnlyKinds {
		perProto[proto] += counts[kind]
	}
	total := perProto[protoRoute] + perProto[protoUsersock]
	if total == 0 {
		return []string{fmt.Sprintf("no failure hit the broadcast in %.1fs: none of %s read an ENOBUFS, though only a failed clone in do_one_broadcast() overruns them and %d%% of the senders' skbuff_head_cache allocations failed",
			elapsed.Seconds(), joinKinds(cloneOnlyKinds), failPercent)}, nil
	}
	if perProto[protoRoute] == 0 && failuresEnough(counts, minFailures, protoUsersock) {
		fails = append(fails, fmt.Sprintf("no failure hit the %s walk in %.1fs: %s read no ENOBUFS, while the %s subscribers read %d (%s), with %d%% of the senders' skbuff_head_cache allocations failing: the ROUTE walk hid its failed clones",
			protoRoute, elapsed.Seconds(), joinKinds(kindsOf(protoRoute)), protoUsersock, perProto[protoUsersock], countsOf(counts, protoUsersock), failPercent))
	}
	kinds := make([]string, 0, len(cloneOnlyKinds))
	for k := range cloneOnlyKinds {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, kind := range kinds {
		proto := cloneOnlyKinds[kind]
		min := kindMinimum(proto, minFailures)
		if n := counts[kind]; n < min {
			shorts = append(shorts, fmt.Sprintf("%d failures hit the %s broadcast at %s (ENOBUFS) in %.1fs (%.1f/s; -max-duration %s), fewer than the %d it must reach (-min-failures %d%s)",
				n, proto, kind, elapsed.Seconds(), perSecond(n, elapsed), maxDuration, min, minFailures, shareNote(proto)))
		}
	}
	return fails, shorts
}

func shareNote(proto string) string {
	if proto == protoUsersock {
		return fmt.Sprintf(", a %dth of it for each usersock kind", usersockShare)
	}
	return ""
}

// failuresEnough says every clone-only kind of proto ("" for all) has
// reached its minimum.
func failuresEnough(counts map[string]int64, minFailures int64, proto string) bool {
	for kind, p := range cloneOnlyKinds {
		if (proto == "" || p == proto) && counts[kind] < kindMinimum(p, minFailures) {
			return false
		}
	}
	return true
}

// kindsOf are the clone-only kinds of proto.
func kindsOf(proto string) map[string]string {
	m := map[string]string{}
	for k, p := range cloneOnlyKinds {
		if p == proto {
			m[k] = p
		}
	}
	return m
}

// countsOf lists the counts of proto's clone-only kinds.
func countsOf(counts map[string]int64, proto string) string {
	var l []string
	for k := range kindsOf(proto) {
		l = append(l, fmt.Sprintf("%s %d", k, counts[k]))
	}
	sort.Strings(l)
	return strings.Join(l, ", ")
}
