// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
	"nlmcast/stress/internal/verify"
)

// Namespace ids: O calls sender i nsidObserver+i, F calls it nsidChurn+i.
const (
	nsidObserver = 10
	nsidChurn    = 20
	idleSpaces   = 4
)

// bindMask is groups 5 and 7 as a bind(2) bitmask; group 36 has no bit.
var bindMask = nlsock.GroupMask(groupAddr, groupRoute)

var routeGroups = []uint32{groupAddr, groupRoute, groupStats}

// topology is everything one mode builds: namespaces, senders, stable
// receivers, idle subscribers and churn pools. close releases it all.
type topology struct {
	cfg      config
	faults   bool // allocations fail in the senders' threads
	senders  []*sender
	names    []string // source i < n: sender i's ROUTE notifications; n+i: its usersock multicasts
	foreign  map[string]*space
	stables  []*stable
	draining bool // the stables' drainers run
	idle     []*nlsock.Socket
	idleHome *space // the namespace of idle[0]
	churn    *churn
	places   []where
	members  []*churnSock // membership churn pool
	options  []*churnSock // option churn pool
	exact    []*churnSock // churn sockets whose transcript is known (in options)
	cleanups []func()
	// writeTimes is what the switch writer's writes took (switch mode).
	writeTimes writeTimes
	progress   *progress // what the mode's progress lines say; may be nil
}

// stableOf returns the first stable receiver of kind, or nil.
func (t *topology) stableOf(kind string) *stable {
	for _, st := range t.stables {
		if st.kind == kind {
			return st
		}
	}
	return nil
}

// messageIdle is the idle subscribers' self-test (-inject-idle): one
// user-space unicast into the first of them, which must then fail the
// run's emptiness check.
func (t *topology) messageIdle() error {
	target := t.idle[0]
	socks, err := openMany(t.idleHome.NS, unix.NETLINK_ROUTE, 1, "idle-injector")
	if err != nil {
		return err
	}
	defer closeAll(socks)
	if err := socks[0].Bind(0, 0); err != nil {
		return err
	}
	m := netlink.Message{Header: netlink.Header{Type: netlink.Noop, Sequence: 1, PID: socks[0].Portid()}}
	return socks[0].SendTo(m, target.Portid(), 0)
}

func (t *topology) onClose(f func()) { t.cleanups = append(t.cleanups, f) }

// close stops the drainers still running and releases everything, last
// made first.
func (t *topology) close() {
	for _, st := range t.stables {
		if t.draining {
			st.stop.Store(true)
			<-st.done
		}
	}
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

// build makes the whole topology; on error, what was made is released by
// close.
func (t *topology) build(cpus []int) error {
	for _, step := range []func() error{
		func() error { return t.buildSenders(cpus) },
		t.buildForeign,
		t.buildStables,
		t.buildIdle,
		t.buildChurn,
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// buildSenders makes each sender in a quiet namespace of its own, with its
// NETLINK_USERSOCK sender and sink, and (-inject-duplicate) S0's injector.
func (t *topology) buildSenders(cpus []int) error {
	n := t.cfg.senders
	t.names = make([]string, 2*n)
	for i := 0; i < n; i++ {
		sp, err := newSpace(fmt.Sprintf("S%d", i), true)
		if err != nil {
			return err
		}
		t.onClose(sp.close)
		s := &sender{idx: i, name: sp.Name, sp: sp, cpu: cpus[i%len(cpus)], cycles: t.cfg.cycles,
			faults: t.faults, unsure: map[verify.Msg]bool{}, addUnsure: map[netip.Prefix][]verify.Msg{},
			echoes: map[verify.Msg]verify.Echo{}}
		if err := s.setup(); err != nil {
			return err
		}
		us, err := t.open(sp, unix.NETLINK_USERSOCK, 2, "usersock")
		if err != nil {
			return err
		}
		for _, u := range us {
			if err := u.Bind(0, 0); err != nil {
				return err
			}
		}
		s.us, s.sink = us[0], us[1]
		s.us.Name, s.sink.Name = "usersock-sender", "usersock-sink"
		s.usPid = s.us.Portid()
		if t.cfg.injectDup && i == 0 {
			inj, err := t.open(sp, unix.NETLINK_ROUTE, 1, "injector")
			if err != nil {
				return err
			}
			if err := inj[0].Bind(0, 0); err != nil {
				return err
			}
			s.injector, s.injectAt = inj[0], time.Now().Add(t.cfg.duration/2)
		}
		t.senders = append(t.senders, s)
		t.names[i], t.names[n+i] = sp.Name, sp.Name+"/usersock"
	}
	return nil
}

// makeExact turns option churn socket cs, in sender i's namespace, into
// one judged exactly, on the groups it holds.
func (t *topology) makeExact(cs *churnSock, i int) error {
	var groups []uint32
	for _, g := range churnGroups {
		if cs.rules.EverJoined[g] {
			groups = append(groups, g)
		}
	}
	st, err := newStable("churn-option-local", t.senders[i].sp.NS, cs.s, verify.Receiver{Groups: groups, Sees: map[int]verify.Tag{i: verify.Local}})
	if err != nil {
		return err
	}
	cs.exact = st
	t.exact = append(t.exact, cs)
	return nil
}

func (t *topology) open(sp *space, proto, count int, prefix string) ([]*nlsock.Socket, error) {
	socks, err := openMany(sp.NS, proto, count, prefix)
	if err != nil {
		return nil, err
	}
	t.onClose(func() { closeAll(socks) })
	return socks, nil
}

// buildForeign makes O, which maps every sender (the observer's
// namespace), F, which maps them too (churn), and N, which maps none.
func (t *topology) buildForeign() error {
	t.foreign = map[string]*space{}
	for _, name := range []string{"O", "N", "F"} {
		sp, err := newSpace(name, false)
		if err != nil {
			return err
		}
		t.onClose(sp.close)
		t.foreign[name] = sp
	}
	for i, s := range t.senders {
		if err := t.foreign["O"].mapPeer(s.sp, int32(nsidObserver+i)); err != nil {
			return err
		}
		if err := t.foreign["F"].mapPeer(s.sp, int32(nsidChurn+i)); err != nil {
			return err
		}
		switch id, err := t.foreign["N"].ctl.PeerID(s.sp.FD()); {
		case err != nil:
			return err
		case id != rtnl.NotAssigned:
			return fmt.Errorf("netns N has the id %d for %s; it must have none", id, s.name)
		}
	}
	return nil
}

// stableSpec is one stable receiver to make.
type stableSpec struct {
	kind    string
	sp      *space
	proto   int
	mask    uint32   // bind(2) groups
	join    []uint32 // NETLINK_ADD_MEMBERSHIP groups
	allNSID bool
	want    verify.Receiver
}

// foreignRoute is the Receiver of a NETLINK_ROUTE socket in another
// namespace than the senders it sees: netlink_set_err() does not reach it.
func foreignRoute(groups []uint32, sees map[int]verify.Tag) verify.Receiver {
	return verify.Receiver{Groups: groups, Sees: sees, SetErrMisses: true}
}

// cloneOnlyKinds are the stable receivers that only a failed clone in the
// broadcast walk can overrun (do_one_broadcast(): the failing socket and
// every one after it): the foreign LISTEN_ALL_NSID observer, which
// netlink_set_err() does not reach (do_one_set_err() skips other
// namespaces), and the NETLINK_USERSOCK subscribers, whose sender's
// sendmsg() allocates the message itself (it fails, and is repeated,
// before any walk) and shares it, so that every one of them gets a clone.
// Their ENOBUFS count the failures that hit the broadcast; the map gives
// each kind's protocol.
var cloneOnlyKinds = map[string]string{"foreign-all-nsid-mapped": protoRoute, "usersock-local": protoUsersock, "usersock-foreign-all-nsid": protoUsersock}

// cloneFailures counts the ENOBUFS the cloneOnly receivers have read, per
// receiver kind.
func (t *topology) cloneFailures() map[string]int64 {
	n := map[string]int64{}
	for _, st := range t.stables {
		if st.cloneOnly {
			n[st.kind] += st.overruns.Load()
		}
	}
	return n
}

// buildStables makes the stable receivers and starts their drainers.
func (t *topology) buildStables() error {
	n := len(t.senders)
	var specs []stableSpec
	observed := map[int]verify.Tag{}
	userObserved := map[int]verify.Tag{}
	for i, s := range t.senders {
		local := map[int]verify.Tag{i: verify.Local}
		userLocal := map[int]verify.Tag{n + i: verify.Local}
		specs = append(specs,
			stableSpec{"local-plain", s.sp, unix.NETLINK_ROUTE, bindMask, []uint32{groupStats}, false, verify.Receiver{Groups: routeGroups, Sees: local}},
			stableSpec{"local-bind", s.sp, unix.NETLINK_ROUTE, bindMask, nil, false, verify.Receiver{Groups: []uint32{groupAddr, groupRoute}, Sees: local}},
			stableSpec{"local-setsockopt", s.sp, unix.NETLINK_ROUTE, 0, routeGroups, false, verify.Receiver{Groups: routeGroups, Sees: local}},
			stableSpec{"local-all-nsid", s.sp, unix.NETLINK_ROUTE, bindMask, []uint32{groupStats}, true, verify.Receiver{Groups: routeGroups, Sees: local}},
			stableSpec{"usersock-local", s.sp, unix.NETLINK_USERSOCK, nlsock.GroupMask(groupUser), nil, false, verify.Receiver{Groups: []uint32{groupUser}, Sees: userLocal}},
		)
		// The sink gets each usersock multicast's unicast copy; it
		// reports the group it was sent to, like a multicast copy.
		if err := t.addStable("usersock-sink", s.sp, s.sink, 0, nil, false, verify.Receiver{Groups: []uint32{groupUser}, Sees: userLocal}); err != nil {
			return err
		}
		observed[i] = verify.NSID(int32(nsidObserver + i))
		userObserved[n+i] = verify.NSID(int32(nsidObserver + i))
	}
	o, nn := t.foreign["O"], t.foreign["N"]
	specs = append(specs,
		stableSpec{"foreign-all-nsid-mapped", o, unix.NETLINK_ROUTE, bindMask, []uint32{groupStats}, true, foreignRoute(routeGroups, observed)},
		stableSpec{"foreign-plain", o, unix.NETLINK_ROUTE, bindMask, []uint32{groupStats}, false, foreignRoute(routeGroups, nil)},
		stableSpec{"foreign-all-nsid-unmapped", nn, unix.NETLINK_ROUTE, bindMask, []uint32{groupStats}, true, foreignRoute(routeGroups, nil)},
		stableSpec{"usersock-foreign-all-nsid", o, unix.NETLINK_USERSOCK, nlsock.GroupMask(groupUser), nil, true, verify.Receiver{Groups: []uint32{groupUser}, Sees: userObserved}},
		stableSpec{"usersock-foreign-plain", o, unix.NETLINK_USERSOCK, nlsock.GroupMask(groupUser), nil, false, verify.Receiver{Groups: []uint32{groupUser}}},
	)
	for _, sp := range specs {
		socks, err := t.open(sp.sp, sp.proto, 1, sp.kind)
		if err != nil {
			return err
		}
		if err := t.addStable(sp.kind, sp.sp, socks[0], sp.mask, sp.join, sp.allNSID, sp.want); err != nil {
			return err
		}
	}
	for _, st := range t.stables {
		_, st.cloneOnly = cloneOnlyKinds[st.kind]
		go st.drain()
	}
	t.draining = true
	return nil
}

// addStable binds sock (unless it is bound already), joins its groups,
// sets its options and registers it as a stable receiver. Binding comes
// first: a socket that never bound has portid 0, which every notification
// excludes.
func (t *topology) addStable(kind string, home *space, sock *nlsock.Socket, mask uint32, join []uint32, allNSID bool, want verify.Receiver) error {
	st, err := newStable(kind, home.NS, sock, want)
	if err != nil {
		return err
	}
	if pid := sock.Portid(); pid == 0 {
		if err := sock.Bind(0, mask); err != nil {
			return err
		}
	} else if mask != 0 {
		return fmt.Errorf("%s: already bound, cannot set groups %#x", sock, mask)
	}
	for _, g := range join {
		if err := sock.Join(g); err != nil {
			return err
		}
	}
	if allNSID {
		if err := sock.SetOption(unix.NETLINK_LISTEN_ALL_NSID, true); err != nil {
			return err
		}
	}
	t.stables = append(t.stables, st)
	return nil
}

// buildIdle makes the idle subscribers in namespaces of their own: they
// make every walk of the global list long and must receive nothing. Half
// are also on group 36, one in eight on the LISTEN_ALL_NSID list; none of
// their namespaces maps a sender.
func (t *topology) buildIdle() error {
	for k := 0; k < idleSpaces && t.cfg.idle > 0; k++ {
		sp, err := newSpace(fmt.Sprintf("I%d", k), false)
		if err != nil {
			return err
		}
		t.onClose(sp.close)
		if k == 0 {
			t.idleHome = sp
		}
		count := t.cfg.idle / idleSpaces
		if k < t.cfg.idle%idleSpaces {
			count++
		}
		socks, err := t.open(sp, unix.NETLINK_ROUTE, count, sp.Name+"-idle")
		if err != nil {
			return err
		}
		for j, s := range socks {
			if err := s.Bind(0, bindMask); err != nil {
				return err
			}
			if j%2 == 0 {
				if err := s.Join(groupStats); err != nil {
					return err
				}
			}
			if j%8 == 0 {
				if err := s.SetOption(unix.NETLINK_LISTEN_ALL_NSID, true); err != nil {
					return err
				}
			}
		}
		t.idle = append(t.idle, socks...)
	}
	return nil
}

// buildChurn makes the churn pools: six sockets in every sender's
// namespace and in F, half for membership churn, half (also on group 7,
// so that they are subscribed) for option churn. An option churn socket
// in a sender's namespace keeps its groups while LISTEN_ALL_NSID goes on
// and off under it, and its namespace has an id for no other: it must get
// exactly its sender's notifications on its groups, once each, whichever
// list (the namespace's or the LISTEN_ALL_NSID one) the walk finds it on.
// Those are judged as stable receivers are, with a buffer deep enough for
// the option churn's reads.
func (t *topology) buildChurn() error {
	t.churn = &churn{names: t.names}
	for i, s := range t.senders {
		t.places = append(t.places, where{ns: s.sp.NS, localSender: i, mapped: map[int32]int{}})
	}
	fMapped := map[int32]int{}
	for i := range t.senders {
		fMapped[int32(nsidChurn+i)] = i
	}
	t.places = append(t.places, where{ns: t.foreign["F"].NS, localSender: -1, mapped: fMapped})
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))
	for _, w := range t.places {
		socks, err := openMany(w.ns, unix.NETLINK_ROUTE, 6, w.ns.Name+"-churn")
		if err != nil {
			return err
		}
		t.onClose(func() { closeAll(socks) })
		for j, s := range socks {
			cs := &churnSock{s: s, rules: w.rules(s.Name)}
			if err := t.churn.prepare(cs, rng); err != nil {
				return err
			}
			if j%2 == 0 {
				t.members = append(t.members, cs)
				continue
			}
			if err := t.churn.join(cs, groupRoute); err != nil {
				return err
			}
			t.options = append(t.options, cs)
			if w.localSender >= 0 {
				if err := t.makeExact(cs, w.localSender); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
