// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"nlmcast/ktap"
	"nlmcast/selftests"
)

// runDeaf runs the program's mode0 sequence up to step last with
// -inject-deaf spec; that step must fail, with every want in the output.
func runDeaf(t *testing.T, spec, last string, want ...string) {
	t.Helper()
	needLab(t)
	args := []string{"-v", "-inject-deaf", spec}
	n := 0
	for _, st := range steps {
		args = append(args, "-t", "mode0."+st.Name)
		n++
		if st.Name == last {
			break
		}
	}
	var out bytes.Buffer
	code := selftests.Run(suite, args, &out, &out)
	t.Logf("%s", out.String())
	failed := fmt.Sprintf("not ok %d netlink_mcast_frr.mode0.%s ", n, last)
	if code != ktap.ExitFail || !strings.Contains(out.String(), failed) {
		t.Fatalf("-inject-deaf %s: exit %d, want %d and %q", spec, code, ktap.ExitFail, failed)
	}
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("-inject-deaf %s: the diagnosis lacks %q", spec, w)
		}
	}
}

// r2's and r3's zebras made deaf to every group once the lab has
// converged, just before learn: they still install what BGP learns
// (requests and ACKs), but learn, which changes every router, fails naming
// what each missed. (Deaf from the lab's first instant, a zebra may miss
// its own links' addresses, on a loaded host, before BGP is up: start
// then fails instead, which proves nothing about learn.)
func TestDeafZebrasFailLearn(t *testing.T) {
	runDeaf(t, "r2@learn,r3@learn", "learn",
		"self-test -inject-deaf r2@learn: router r2 zebra (pid ", "self-test -inject-deaf r3@learn: router r3 zebra (pid ",
		"r2: zebra: address 198.51.100.17/28 on stub: false, want true",
		"r2: kernel: 203.0.113.16/29 dev 4 proto static | zebra: nothing selected",
		"r3: zebra: address 198.51.100.33/28 on stub: false, want true",
		"r3: zebra: 2001:db8:201:2::/64: absent, want a kernel route")
}

// r1's zebra made deaf to the route groups only, before withdraw_route:
// the routes deleted with their link up stay in r1's zebra, which goes on
// announcing them; the step fails naming both. (withdraw_link, the only
// withdrawal of routes before, passes so: zebra drops the routes of a
// link that goes down by itself.)
func TestDeafToRoutesFailsWithdrawRoute(t *testing.T) {
	runDeaf(t, "r1:routes@withdraw_route", "withdraw_route",
		"self-test -inject-deaf r1:routes@withdraw_route: router r1 zebra (pid ",
		"left groups [7 11]",
		"r1: kernel: no 203.0.113.0/29 | zebra: 203.0.113.0/29 dev 3 (kernel): a deletion zebra missed",
		"r1: kernel: no 2001:db8:200::/64 | zebra: 2001:db8:200::/64 dev 3 (kernel): a deletion zebra missed",
		"r3: r1's 203.0.113.0/29 via 192.0.2.5 dev 2 proto bgp nhid ")
}

// The observer's ip monitor made deaf to the route groups right after
// the lab starts: learn fails, naming the route events it did not print
// (those of the harness's requests), each with its router's nsid.
func TestDeafObserverFailsLearn(t *testing.T) {
	runDeaf(t, "obs:routes", "learn",
		"self-test -inject-deaf obs:routes: ip monitor all-nsid in netns obs (pid ",
		"did not print exactly what the step changed",
		"missing: [nsid 1][ROUTE]unicast 203.0.113.0/29 table main",
		"missing: [nsid 3][ROUTE]unicast 2001:db8:201:2::/64 table main")
}
