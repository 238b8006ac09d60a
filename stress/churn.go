// SPDX-License-Identifier: GPL-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/selftests/netns"
	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
	"nlmcast/stress/internal/verify"
)

// churnGroups are the groups churn sockets join and leave: the senders'.
var churnGroups = []uint32{groupAddr, groupRoute, groupStats}

// churnCounts counts churn operations by kind.
type churnCounts struct {
	SocketOpenClose atomic.Int64
	Join            atomic.Int64
	Leave           atomic.Int64
	Rebind          atomic.Int64
	AllNSIDSet      atomic.Int64
	AllNSIDClear    atomic.Int64
	NetnsCreated    atomic.Int64
	NSIDMapped      atomic.Int64
	MsgsChecked     atomic.Int64
	Overruns        atomic.Int64 // ENOBUFS on churn sockets: allowed, they are not exact
}

// churn runs the churn threads and collects what they found wrong.
type churn struct {
	names  []string
	counts churnCounts

	mu       sync.Mutex
	problems []string
	dropped  int
	// receipts holds, for every sender's message a churn socket read,
	// the most copies one churn socket read: that it was sent.
	receipts map[verify.FromSender]int
}

const maxChurnProblems = 10

func (c *churn) problem(p string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.problems) < maxChurnProblems {
		c.problems = append(c.problems, p)
	} else {
		c.dropped++
	}
}

// churnSock is a churn socket with what it may receive. exact, if set,
// records its stream to be judged as a stable receiver's.
type churnSock struct {
	s     *nlsock.Socket
	rules verify.Churn
	exact *stable
	read  map[verify.FromSender]int // what it read, per sender (not for exact)
}

// where names the namespace a churn socket lives in and what it may see.
type where struct {
	ns          *netns.NS
	localSender int           // -1: nobody sends in this namespace
	mapped      map[int32]int // nsid -> sender, in this namespace
}

func (w where) rules(name string) verify.Churn {
	return verify.Churn{Name: name, EverJoined: map[uint32]bool{}, LocalSender: w.localSender, Mapped: w.mapped}
}

// check reads everything queued on cs and judges each message (or, for
// an exact socket, records it).
func (c *churn) check(cs *churnSock) {
	for {
		d, at, err := recv(cs.s)
		if errors.Is(err, nlsock.ErrEmpty) {
			if cs.exact != nil {
				cs.exact.event(verify.Drained, at)
			}
			return
		}
		if errors.Is(err, unix.ENOBUFS) {
			if cs.exact != nil {
				cs.exact.event(verify.Overrun, at)
				continue
			}
			c.counts.Overruns.Add(1)
			continue
		}
		if err == nil && cs.exact != nil {
			c.counts.MsgsChecked.Add(int64(len(d.Msgs)))
			cs.exact.add(d, at)
			continue
		}
		if err != nil {
			c.problem(err.Error())
			return
		}
		for _, m := range d.Msgs {
			c.counts.MsgsChecked.Add(1)
			if d.Group == nil {
				c.problem(fmt.Sprintf("%s: message without NETLINK_PKTINFO group: %s", cs.s, rtnl.TypeName(uint16(m.Header.Type))))
				continue
			}
			g := toGot(d, m)
			if p := verify.CheckChurn(cs.rules, g, sourceOf, c.names); p != "" {
				c.problem(fmt.Sprintf("%s: %s", cs.s, p))
			} else if s, ok := sentBy(cs.rules, g); ok {
				if cs.read == nil {
					cs.read = map[verify.FromSender]int{}
				}
				cs.read[verify.FromSender{Sender: s, Msg: g.Msg}]++
			}
		}
	}
}

// sentBy tells which sender a message a churn socket read (and that its
// rules allow) comes from: its nsid, or a local sender, or what the
// message says; ok is false when none of them tells (RTM_NEWSTATS with no
// nsid where more than one sender is visible).
func sentBy(rules verify.Churn, g verify.Got) (int, bool) {
	if g.Tag.HasNSID {
		s, ok := rules.Mapped[g.Tag.NSID]
		return s, ok
	}
	if s, ok := sourceOf(g.Msg); ok {
		return s, true
	}
	if rules.LocalSender >= 0 && (!rules.EverAllNSID || len(rules.Mapped) == 0) {
		return rules.LocalSender, true
	}
	if rules.LocalSender < 0 && len(rules.Mapped) == 1 {
		for _, s := range rules.Mapped {
			return s, true
		}
	}
	return 0, false
}

// retire ends a churn socket's part in the walks: it leaves every group
// (the walk finds it no more: leaving takes netlink_table_grab(), which
// waits for the broadcasts under way), then everything queued is read,
// so that what it got counts as proof of sending (receipts), and the
// caller may close it.
func (c *churn) retire(cs *churnSock) error {
	if err := cs.s.Bind(cs.s.Portid(), 0); err != nil {
		return err
	}
	if err := cs.s.Leave(groupStats); err != nil {
		return err
	}
	c.check(cs)
	c.keep(cs)
	return nil
}

// keep adds what cs read to the receipts.
func (c *churn) keep(cs *churnSock) {
	if len(cs.read) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.receipts == nil {
		c.receipts = map[verify.FromSender]int{}
	}
	for k, n := range cs.read {
		c.receipts[k] = max(c.receipts[k], n)
	}
	cs.read = nil
}

// prepare makes a fresh churn socket: PKTINFO on (every message then says
// its group), bound, with a random set of groups, some by bind, some by
// setsockopt, and LISTEN_ALL_NSID at random.
func (c *churn) prepare(cs *churnSock, rng *rand.Rand) error {
	if err := cs.s.SetOption(unix.NETLINK_PKTINFO, true); err != nil {
		return err
	}
	// Bind before any join: an unbound socket has portid 0 and would
	// be skipped as the "excluded" portid of every notification.
	if err := cs.s.Bind(0, randomBindMask(cs, rng)); err != nil {
		return err
	}
	if rng.IntN(2) == 0 {
		if err := c.join(cs, groupStats); err != nil {
			return err
		}
	}
	if rng.IntN(2) == 0 {
		return c.setAllNSID(cs, true)
	}
	return nil
}

// randomBindMask picks each of the senders' groups that bind can set (1..32)
// with probability 1/2, widening cs's rule before the kernel can deliver.
func randomBindMask(cs *churnSock, rng *rand.Rand) uint32 {
	var mask uint32
	for _, g := range []uint32{groupAddr, groupRoute} {
		if rng.IntN(2) == 0 {
			mask |= nlsock.GroupMask(g)
			cs.rules.EverJoined[g] = true
		}
	}
	return mask
}

func (c *churn) join(cs *churnSock, g uint32) error {
	// The rule is widened before the kernel can deliver on g.
	cs.rules.EverJoined[g] = true
	c.counts.Join.Add(1)
	return cs.s.Join(g)
}

func (c *churn) setAllNSID(cs *churnSock, on bool) error {
	if on {
		cs.rules.EverAllNSID = true
		c.counts.AllNSIDSet.Add(1)
	} else {
		c.counts.AllNSIDClear.Add(1)
	}
	return cs.s.SetOption(unix.NETLINK_LISTEN_ALL_NSID, on)
}

// sockets opens and closes churn sockets in w's namespace until ctx ends,
// from one thread that stays in that namespace.
func (c *churn) sockets(ctx context.Context, w where, name string, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 1))
	return w.ns.Do(func() error {
		for n := 0; ctx.Err() == nil; n++ {
			s, err := nlsock.OpenHere(unix.NETLINK_ROUTE, fmt.Sprintf("%s-%d", name, n), w.ns.Name)
			if err != nil {
				return err
			}
			cs := &churnSock{s: s}
			cs.rules = w.rules(cs.s.Name)
			err = c.prepare(cs, rng)
			if err == nil {
				// Give the walk a few chances to find it.
				for i := 0; i < 1+rng.IntN(4) && ctx.Err() == nil; i++ {
					cs.s.Wait(time.Duration(1+rng.IntN(3)) * time.Millisecond)
					c.check(cs)
				}
				err = c.retire(cs)
			}
			cs.s.Close()
			c.counts.SocketOpenClose.Add(1)
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// membership keeps a pool of sockets and changes their groups until ctx
// ends: join and leave by setsockopt, and re-bind (own portid) with a new
// mask, which replaces groups 1..32 and keeps 36.
func (c *churn) membership(ctx context.Context, pool []*churnSock, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 2))
	for ctx.Err() == nil {
		cs := pool[rng.IntN(len(pool))]
		g := churnGroups[rng.IntN(len(churnGroups))]
		var err error
		switch rng.IntN(3) {
		case 0:
			err = c.join(cs, g)
		case 1:
			c.counts.Leave.Add(1)
			err = cs.s.Leave(g)
		case 2:
			c.counts.Rebind.Add(1)
			err = cs.s.Bind(cs.s.Portid(), randomBindMask(cs, rng))
		}
		if err != nil {
			return err
		}
		c.check(cs)
	}
	return nil
}

// options sets and clears NETLINK_LISTEN_ALL_NSID on a pool of subscribed
// sockets until ctx ends.
func (c *churn) options(ctx context.Context, pool []*churnSock, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 3))
	for ctx.Err() == nil {
		cs := pool[rng.IntN(len(pool))]
		if err := c.setAllNSID(cs, rng.IntN(2) == 0); err != nil {
			return err
		}
		c.check(cs)
	}
	return nil
}

// namespaces creates namespaces until ctx ends. Each maps one sender
// (RTM_NEWNSID from inside it, id chosen by the kernel), holds two
// subscribers (LISTEN_ALL_NSID, which sees that sender, and plain, which
// sees nothing), and is then dropped, taking its mapping with it. pace
// bounds the creation rate: namespace teardown is asynchronous, and a
// slow kernel must not pile up dying namespaces.
func (c *churn) namespaces(ctx context.Context, senders []*sender, pace time.Duration, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 4))
	tick := time.NewTicker(pace)
	defer tick.Stop()
	for n := 0; ctx.Err() == nil; n++ {
		if err := c.oneNamespace(ctx, senders, rng, n); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
	return nil
}

func (c *churn) oneNamespace(ctx context.Context, senders []*sender, rng *rand.Rand, n int) error {
	ns, err := netns.New(fmt.Sprintf("C%d", n))
	if err != nil {
		return err
	}
	defer ns.Close()
	c.counts.NetnsCreated.Add(1)
	ctl, err := rtnl.Dial(ns)
	if err != nil {
		return err
	}
	defer ctl.Close()
	peer := senders[rng.IntN(len(senders))]
	if _, err := ctl.Do(rtnl.NewNSID(peer.sp.FD(), -1)); err != nil {
		return fmt.Errorf("netns %s: map %s: %w", ns.Name, peer.name, err)
	}
	id, err := ctl.PeerID(peer.sp.FD())
	if err != nil {
		return fmt.Errorf("netns %s: %w", ns.Name, err)
	}
	c.counts.NSIDMapped.Add(1)
	socks, err := openMany(ns, unix.NETLINK_ROUTE, 2, ns.Name)
	if err != nil {
		return err
	}
	defer closeAll(socks)
	w := where{ns: ns, localSender: -1, mapped: map[int32]int{id: peer.idx}}
	var css []*churnSock
	for _, s := range socks {
		cs := &churnSock{s: s, rules: w.rules(s.Name)}
		if err := cs.s.SetOption(unix.NETLINK_PKTINFO, true); err != nil {
			return err
		}
		// Bind before joining by setsockopt: an unbound socket has
		// portid 0, the excluded portid of every notification.
		cs.rules.EverJoined[groupAddr], cs.rules.EverJoined[groupRoute] = true, true
		if err := cs.s.Bind(0, nlsock.GroupMask(groupAddr, groupRoute)); err != nil {
			return err
		}
		if err := c.join(cs, groupStats); err != nil {
			return err
		}
		css = append(css, cs)
	}
	if err := c.setAllNSID(css[0], true); err != nil {
		return err
	}
	for i := 0; i < 4 && ctx.Err() == nil; i++ {
		css[0].s.Wait(5 * time.Millisecond)
		for _, cs := range css {
			c.check(cs)
		}
	}
	for _, cs := range css {
		if err := c.retire(cs); err != nil {
			return err
		}
	}
	return nil
}
