// SPDX-License-Identifier: GPL-2.0

package kmsg

import "strings"

// A KCSAN kernel instruments every plain access in the kernel, and reports
// the races of the scheduler, the timers and memory management (a TLB
// flush reading mm_cpumask while a context switch sets a bit of it) as
// readily as the networking code's. Which of those a run meets depends
// on where the scheduler puts the program's threads, not on what the
// program tests: a verdict that failed on them would fail at random. The
// suite judges the races in networking code: a KCSAN report with a
// networking frame anywhere in either access's stack (the socket call,
// the notification, the namespace's setup or teardown that led to the
// access) fails the case like any other report; one without any is
// printed, with its fingerprint, and set aside. Every other kind of
// report (WARNING, KASAN, lockdep, ...) fails wherever it was raised.

// netPrefixes start the names of networking functions: net/core,
// net/netlink and the rtnetlink families, sockets and skbs, IPv4/IPv6
// addresses, routes and neighbours, nexthops, traffic control, the link
// types the suite makes, and the network namespace's life.
var netPrefixes = []string{
	"rtnl", "rtnetlink", "rtm_", "rtmsg", "nlmsg", "nla_", "__nla_", "genl",
	"sock", "__sock", "____sock", "sk_", "__sk_", "skb", "__skb", "kfree_skb", "__kfree_skb",
	"consume_skb", "alloc_skb", "__alloc_skb", "napi_",
	"net", "__net", "____net", "dev_", "__dev_", "register_netdev", "unregister_netdev",
	"inet", "__inet", "ip_", "__ip_", "ip6", "__ip6", "ipv4", "ipv6", "addrconf", "__addrconf",
	"fib", "__fib", "nexthop", "nh_", "__nh_", "neigh", "__neigh", "arp_", "ndisc",
	"tc_", "tcf_", "__tcf_", "tcindex", "qdisc", "__qdisc", "cls_", "u32_", "mirred", "tcx_",
	"veth", "br_", "__br_", "macvlan", "lo_", "loopback",
	"cleanup_net", "setup_net", "copy_net_ns", "peernet", "ops_init", "ops_exit", "default_device_exit",
	"udp", "__udp", "tcp", "__tcp", "ping_", "packet_", "unix_", "__unix_",
	"raw_rcv", "raw_send", "raw_recv", "raw_v4", "raw_v6", "rawv6_",
}

// notNet are the names the prefixes above would take for networking and
// are not: the network filesystems' helper library (fs/netfs, under 9p).
var notNet = []string{"netfs", "__netfs"}

// netInfixes are parts of networking names that do not start them: the
// socket system calls (__sys_sendmsg, __x64_sys_setsockopt), netlink's
// own functions and its socket (nlk).
var netInfixes = []string{
	"netlink", "nlk", "sock",
	"sys_send", "sys_recv", "sys_socket", "sys_bind", "sys_connect", "sys_accept", "sys_listen",
	"sys_setsockopt", "sys_getsockopt", "sys_getsockname", "sys_getpeername", "sys_shutdown",
}

// networkingFunc says whether a function (a stack frame's name, without
// its offset or clone suffix) is networking code: netlink's, rtnetlink's
// or the namespace's (netlink_functions.txt), or a name the lists above
// take.
func networkingFunc(name string) bool {
	if netlinkFile(name) != "" {
		return true
	}
	for _, p := range notNet {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	for _, p := range netPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	for _, s := range netInfixes {
		if strings.Contains(name, s) {
			return true
		}
	}
	return false
}

// OutsideNetworking says whether r is a KCSAN data race that is none of
// the suite's: its report has stacks, and no frame of any of them is
// networking code. Any other report, and a KCSAN report whose stacks
// could not be read, is the suite's to judge.
func OutsideNetworking(r Report) bool {
	if r.Kind != "KCSAN" || len(r.Stacks) == 0 {
		return false
	}
	frames := 0
	for _, s := range r.Stacks {
		for _, f := range s {
			if networkingFunc(f) {
				return false
			}
			frames++
		}
	}
	return frames > 0
}
