// SPDX-License-Identifier: GPL-2.0

// Command netlink_mcast_frr is the suite's real-clients program: the
// heaviest real consumer of ROUTE multicast, a routing daemon, and
// iproute2's `ip monitor`, run against the kernel's notifications.
//
// FRR (Debian's frr package: zebra and bgpd) runs in three router
// namespaces in a line, dual-stack eBGP, beside a namespace of idle
// foreign subscribers and an observer namespace where `ip monitor
// all-nsid` listens to every router. One sequence of steps, each a TAP
// result, is run with net.core.netlink_route_mc_index at 0 (mode0.*), at
// 1 (mode1.*) and while a writer flips it (flipping.*): learn, install,
// ping, withdraw_addr, withdraw_route, withdraw_link, reinstall, each
// changing every router. Each waits for convergence with a deadline and
// records how long it took; after each, every zebra's view must equal its
// kernel's, the observer must have printed what the step changed, and
// while flipping a flip must have landed. -inject-deaf makes chosen
// zebras deaf, the self-test of those checks. The ip monitor cases
// (ipmonitor.*) compare what `ip monitor` and `ip monitor all-nsid`
// print, and what the harness's own sockets received, each with the
// notifications the kernel sends for the case's series of changes.
//
// Files: main.go (the suite), spawn.go (starting a client in a
// namespace), keeper.go (the per-router process that runs the daemons),
// router.go, lab.go and config.go (the routers, the topology, bgpd.conf),
// kernel.go (the kernel's routes, nexthops and addresses), zebra.go
// (zebra's view and the comparison), sequence.go (a sequence and its
// mode), steps.go (the steps), observer.go (the sequence's ip monitor
// all-nsid), inject.go (-inject-deaf), ipmonitor.go and
// ipmonitor_parse.go (the ip monitor cases).
package main

import (
	"os"
	"strings"

	"nlmcast/selftests"
	"nlmcast/selftests/mcswitch"
)

func main() {
	os.Exit(selftests.Main(suite))
}

var suite = selftests.Suite{
	Name: "netlink_mcast_frr",
	About: "Real clients of ROUTE multicast: FRR's zebra and bgpd in three dual-stack routers (learn, install, ping,\n" +
		"withdraw, reinstall) at 0, at 1 and while the switch flips, and `ip monitor` against the suite's own sockets.",
	Cases:  cases(),
	Switch: true,
	Setup:  setup,
	Flags:  registerFlags,
	Check:  checkFlags,
}

// prog is what the cases share: where FRR is, the switch, and the
// sequence whose lab is running.
var prog struct {
	frr    frrInstall
	frrErr error
	ip     string // iproute2's ip: the sequences' observer
	// seqSkip says which package the sequences lack, or "".
	seqSkip string
	sw      *mcswitch.Switch
	swSkip  string
	seq     *sequence // guarded by seqMu
}

// setup finds FRR, ip and ping (a missing one makes every sequence case
// SKIP naming its package, not the program fail) and takes the switch
// Main holds (locked against the other programs that change it, saved,
// and restored on every way out); its teardown stops any daemon still
// running.
func setup(log func(format string, args ...any)) (func() error, error) {
	prog.frr, prog.frrErr = findFRR()
	prog.ip = findIP()
	prog.seqSkip = sequenceNeeds(prog.frrErr, prog.ip, findPing())
	prog.sw, prog.swSkip = selftests.HeldSwitch()
	return func() error {
		if s := current(); s != nil {
			return s.end(nil)
		}
		return nil
	}, nil
}

// sequenceNeeds names the packages the sequences lack, or "".
func sequenceNeeds(frrErr error, ip, ping string) string {
	var missing []string
	if frrErr != nil {
		missing = append(missing, frrErr.Error())
	}
	if ip == "" {
		missing = append(missing, "no ip (Debian package iproute2: the observer's ip monitor all-nsid)")
	}
	if ping == "" {
		missing = append(missing, "no ping (Debian package iputils-ping: the ping step)")
	}
	return strings.Join(missing, "; ")
}

func cases() []selftests.Case {
	var cs []selftests.Case
	for _, m := range modes {
		cs = append(cs, sequenceCases(m)...)
	}
	return append(cs, ipMonitorCases()...)
}
