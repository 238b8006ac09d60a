// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"fmt"
	"os"

	"nlmcast/selftests/netns"
	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// space is one namespace of a run with its control connection.
type space struct {
	*netns.NS
	ctl *rtnl.Conn
}

// newSpace creates a namespace. quiet prepares it for exact counting:
// IPv6 off before any device comes up (no DAD, no autoconf, no router
// solicitation), then lo up, before any subscriber exists, so that later
// notifications in it are only the ones the run causes.
func newSpace(name string, quiet bool) (*space, error) {
	ns, err := netns.New(name)
	if err != nil {
		return nil, err
	}
	if quiet {
		for _, knob := range []string{"all", "default"} {
			err := ns.WriteSysctl("net/ipv6/conf/"+knob+"/disable_ipv6", "1")
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				ns.Close()
				return nil, fmt.Errorf("netns %s: %w", name, err)
			}
		}
	}
	ctl, err := rtnl.Dial(ns)
	if err != nil {
		ns.Close()
		return nil, err
	}
	if quiet {
		if _, err := ctl.Do(rtnl.SetUp(rtnl.LoopbackIndex, true)); err != nil {
			ctl.Close()
			ns.Close()
			return nil, fmt.Errorf("netns %s: %w", name, err)
		}
	}
	return &space{NS: ns, ctl: ctl}, nil
}

func (s *space) close() {
	s.ctl.Close()
	s.NS.Close()
}

// mapPeer gives peer the id nsid in s and checks that RTM_GETNSID reports it.
func (s *space) mapPeer(peer *space, nsid int32) error {
	if _, err := s.ctl.Do(rtnl.NewNSID(peer.FD(), nsid)); err != nil {
		return fmt.Errorf("netns %s: map %s: %w", s.Name, peer.Name, err)
	}
	got, err := s.ctl.PeerID(peer.FD())
	if err != nil {
		return fmt.Errorf("netns %s: id of %s: %w", s.Name, peer.Name, err)
	}
	if got != nsid {
		return fmt.Errorf("netns %s: gave %s the id %d, RTM_GETNSID reports %d", s.Name, peer.Name, nsid, got)
	}
	return nil
}

// openMany creates n netlink sockets of protocol proto in ns from one
// thread (one setns for all of them), named prefix-0, prefix-1, ...
func openMany(ns *netns.NS, proto, n int, prefix string) ([]*nlsock.Socket, error) {
	socks := make([]*nlsock.Socket, 0, n)
	err := ns.Do(func() error {
		for i := 0; i < n; i++ {
			s, err := nlsock.OpenHere(proto, fmt.Sprintf("%s-%d", prefix, i), ns.Name)
			if err != nil {
				return err
			}
			socks = append(socks, s)
		}
		return nil
	})
	if err != nil {
		closeAll(socks)
		return nil, err
	}
	return socks, nil
}

func closeAll(socks []*nlsock.Socket) {
	for _, s := range socks {
		s.Close()
	}
}
