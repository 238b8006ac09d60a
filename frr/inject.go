// SPDX-License-Identifier: GPL-2.0

package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/nlsock"
)

// The checks' self-test (-inject-deaf): a zebra made deaf to the kernel's
// notifications, as a kernel that loses them in that router's namespace
// would leave it. The harness takes every netlink socket of the router's
// zebra (pidfd_open, then pidfd_getfd on each socket descriptor in
// /proc/PID/fd) and drops, with NETLINK_DROP_MEMBERSHIP on its own copy,
// every group the NETLINK_ROUTE ones joined, or only the route groups.
// zebra's requests and their ACKs still work: it goes on installing what
// BGP learns; only what the kernel tells it unasked is lost.

// deafSpec is one item of -inject-deaf, ROUTER[:routes][@STEP], where
// ROUTER may also be obs, the observer's ip monitor.
type deafSpec struct {
	Router int    // 0 for r1, observerTarget for obs
	Routes bool   // only RTNLGRP_IPV4_ROUTE and RTNLGRP_IPV6_ROUTE
	Before string // the step before which; "" right after the lab starts
}

// observerTarget is deafSpec.Router for the observer.
const observerTarget = -1

func (d deafSpec) String() string {
	s := fmt.Sprintf("r%d", d.Router+1)
	if d.Router == observerTarget {
		s = "obs"
	}
	if d.Routes {
		s += ":routes"
	}
	if d.Before != "" {
		s += "@" + d.Before
	}
	return s
}

// routeGroups are the groups a zebra made deaf "to routes" leaves.
var routeGroups = []uint32{unix.RTNLGRP_IPV4_ROUTE, unix.RTNLGRP_IPV6_ROUTE}

var inject struct {
	deafFlag string
	deaf     []deafSpec
}

func registerFlags(fs *flag.FlagSet) {
	fs.StringVar(&inject.deafFlag, "inject-deaf", "", "SELF-TEST of the checks: a comma-separated list of `ROUTER[:routes][@STEP]` (r1, r2, r3, or obs; a step name): "+
		"drop every group (:routes: only the IPv4 and IPv6 route groups) from that router's zebra's netlink sockets (obs: the observer's ip monitor's), taken with pidfd_getfd, "+
		"right after each sequence's lab starts or just before STEP; the first step whose change that zebra (or the observer) must hear of then fails")
	ipMonitorFlags(fs)
}

func checkFlags() error {
	var err error
	inject.deaf, err = parseDeaf(inject.deafFlag)
	return err
}

// parseDeaf reads -inject-deaf's value.
func parseDeaf(v string) ([]deafSpec, error) {
	if v == "" {
		return nil, nil
	}
	var out []deafSpec
	for _, item := range strings.Split(v, ",") {
		var d deafSpec
		rest, stepName, hasStep := strings.Cut(item, "@")
		if hasStep {
			if !slices.ContainsFunc(steps, func(s step) bool { return s.Name == stepName }) {
				return nil, fmt.Errorf("-inject-deaf %q: no step %q", item, stepName)
			}
			d.Before = stepName
		}
		name, groups, hasGroups := strings.Cut(rest, ":")
		if hasGroups {
			if groups != "routes" {
				return nil, fmt.Errorf("-inject-deaf %q: %q is not \"routes\"", item, groups)
			}
			d.Routes = true
		}
		n, err := strconv.Atoi(strings.TrimPrefix(name, "r"))
		switch {
		case name == "obs":
			d.Router = observerTarget
		case !strings.HasPrefix(name, "r") || err != nil || n < 1 || n > routerCount:
			return nil, fmt.Errorf("-inject-deaf %q: %q is neither a router (r1 to r%d) nor obs", item, name, routerCount)
		default:
			d.Router = n - 1
		}
		out = append(out, d)
	}
	return out, nil
}

// injectBefore makes the zebras deaf that -inject-deaf names for step
// ("" once the lab has started).
func (s *sequence) injectBefore(t selftests.T, step string) {
	t.Helper()
	for _, d := range inject.deaf {
		if d.Before != step {
			continue
		}
		var pid int
		var who, ns string
		if d.Router == observerTarget {
			pid, who, ns = s.lab.obs.p.Cmd.Process.Pid, s.lab.obs.String(), "obs"
		} else {
			r := s.r(d.Router)
			p, err := r.hostPID("zebra")
			if err != nil {
				t.Fatalf("self-test -inject-deaf %s: %v", d, err)
			}
			pid, who, ns = p, "router "+r.Name+" zebra", r.Name
		}
		var only []uint32
		if d.Routes {
			only = routeGroups
		}
		did, err := deafen(pid, ns, only)
		if err != nil {
			t.Fatalf("self-test -inject-deaf %s: %s (pid %d): %v", d, who, pid, err)
		}
		t.Logf("self-test -inject-deaf %s: %s (pid %d) made deaf: %s", d, who, pid, strings.Join(did, "; "))
	}
}

// deafen drops the groups of every NETLINK_ROUTE socket of process pid
// (all it joined, or those of only) and says what it dropped where.
func deafen(pid int, nsName string, only []uint32) ([]string, error) {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, fmt.Errorf("pidfd_open: %w", err)
	}
	defer unix.Close(pidfd)
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var did []string
	for _, e := range ents {
		if target, err := os.Readlink(dir + "/" + e.Name()); err != nil || !strings.HasPrefix(target, "socket:") {
			continue
		}
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fd, err := unix.PidfdGetfd(pidfd, n, 0)
		if err != nil {
			return did, fmt.Errorf("pidfd_getfd of its fd %d: %w", n, err)
		}
		left, err := leaveGroups(fd, fmt.Sprintf("fd %d", n), nsName, only)
		unix.Close(fd) // the socket stays the daemon's, in the groups it has left
		if err != nil {
			return did, err
		}
		if len(left) > 0 {
			did = append(did, fmt.Sprintf("fd %d left groups %v", n, left))
		}
	}
	if len(did) == 0 {
		return nil, fmt.Errorf("none of its NETLINK_ROUTE sockets was in a group to drop (%v)", only)
	}
	return did, nil
}

// leaveGroups drops the groups of the socket fd, a copy of the daemon's,
// if it is a NETLINK_ROUTE socket.
func leaveGroups(fd int, name, nsName string, only []uint32) ([]uint32, error) {
	dom, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil || dom != unix.AF_NETLINK {
		return nil, nil
	}
	if proto, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PROTOCOL); err != nil || proto != unix.NETLINK_ROUTE {
		return nil, nil
	}
	sock := nlsock.FromFD(fd, unix.NETLINK_ROUTE, name, nsName)
	groups, err := sock.Memberships()
	if err != nil {
		return nil, err
	}
	var left []uint32
	for _, g := range groups {
		if only != nil && !slices.Contains(only, g) {
			continue
		}
		if err := sock.Leave(g); err != nil {
			return left, err
		}
		left = append(left, g)
	}
	return left, nil
}
