// SPDX-License-Identifier: GPL-2.0

// Package nsdeath waits until the kernel has finished tearing down the
// network namespaces a program made. Teardown is asynchronous: when the
// last reference to a namespace goes, the kernel queues it for cleanup_net
// on its "netns" workqueue, which runs the pernet exit methods (where a
// kernel bug in a list's exit path shows up as a WARNING or KASAN report)
// some time later. A program that checks the kernel log only when its last
// case returns would miss such a report.
//
// A Witness is a namespace of its own that gives every tracked namespace an
// id (RTM_NEWNSID) and listens on RTNLGRP_NSID: the kernel sends
// RTM_DELNSID there when cleanup_net takes the tracked namespace. Wait reads
// those until every tracked namespace is gone, then lets a probe namespace
// die: cleanup_net is one work item (it never runs twice at once), the
// tracked namespaces' run had begun when their RTM_DELNSID was sent, and
// the probe, dropped after that, is taken by a later run; so once the
// probe's RTM_DELNSID arrives, the run that took the tracked namespaces
// has returned, exit methods included.
//
// Each namespace is tracked for an owner (the case that made it): a case
// the program abandoned at its deadline may still hold its namespaces,
// and Forget stops waiting for them instead of blaming the kernel.
//
// An id given in the witness namespace is seen only there: it changes
// nothing for sockets in any other namespace.
package nsdeath

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/selftests/netns"
	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// rcvbuf holds thousands of RTM_NEWNSID/DELNSID notifications: a program
// tracks a few hundred namespaces at most between two Waits.
const rcvbuf = 4 << 20

// Witness tracks namespaces until they are torn down. It is safe for
// concurrent use.
type Witness struct {
	mu        sync.Mutex
	ns        *netns.NS
	ctl       *rtnl.Conn
	sub       *nlsock.Socket
	live      map[int32]tracked // id in the witness namespace -> namespace
	byInode   map[uint64]int32  // nsfs inode of a live tracked namespace -> id
	next      int32             // the id the next tracked namespace gets
	failures  []failure         // tracking that failed, so Wait cannot be sure
	forgotten map[string]bool   // owners not waited for any more
	// spare is the next barrier probe, made ahead of time: making a
	// namespace takes tens of milliseconds, dropping one almost none.
	spare chan spareProbe
}

type spareProbe struct {
	ns  *netns.NS
	err error
}

// tracked is a namespace being waited for.
type tracked struct {
	name, owner string
	inode       uint64
}

type failure struct {
	owner string
	err   error
}

// New creates the witness namespace.
func New() (*Witness, error) {
	ns, err := netns.New("nsdeath-witness")
	if err != nil {
		return nil, err
	}
	return In(ns)
}

// In makes ns, a fresh namespace of nothing else, the witness namespace;
// the Witness owns it from then on (Close closes it, also on error).
func In(ns *netns.NS) (*Witness, error) {
	w := &Witness{ns: ns, live: map[int32]tracked{}, byInode: map[uint64]int32{}, forgotten: map[string]bool{},
		spare: make(chan spareProbe, 1)}
	if err := w.open(); err != nil {
		// No spare probe is being made: Close must not wait for one
		// (it waited forever when the kernel refused RTNLGRP_NSID).
		w.spare = nil
		w.Close()
		return nil, fmt.Errorf("namespace teardown witness: %w", err)
	}
	go w.makeSpare()
	return w, nil
}

// makeSpare makes the next barrier probe, untold: it is the witness's own.
func (w *Witness) makeSpare() {
	ns, err := netns.NewUntold("nsdeath-probe")
	w.spare <- spareProbe{ns, err}
}

func (w *Witness) open() error {
	var err error
	if w.ctl, err = rtnl.Dial(w.ns); err != nil {
		return err
	}
	if w.sub, err = nlsock.Open(w.ns, unix.NETLINK_ROUTE, "nsid-watch"); err != nil {
		return err
	}
	if err := w.sub.ForceReceiveBuffer(rcvbuf); err != nil {
		// Without CAP_NET_ADMIN in the initial user namespace the
		// ordinary limit applies (rmem_max); still plenty for a suite.
		if err := w.sub.SetReceiveBuffer(rcvbuf); err != nil {
			return err
		}
	}
	if err := w.sub.Bind(0, 0); err != nil {
		return err
	}
	return w.sub.Join(unix.RTNLGRP_NSID)
}

// Close ends the witness; its namespace dies with its last handle.
func (w *Witness) Close() {
	if w.spare != nil {
		if p := <-w.spare; p.ns != nil {
			p.ns.Close()
		}
		w.spare = nil
	}
	if w.sub != nil {
		w.sub.Close()
	}
	if w.ctl != nil {
		w.ctl.Close()
	}
	w.ns.Close()
}

// Track gives ns, made by owner, an id in the witness namespace, so that
// its teardown is seen. Call it while ns is alive (before its handle is
// closed). A namespace tracked already is not tracked twice.
func (w *Witness) Track(ns *netns.NS, owner string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.forgotten[owner] {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(ns.FD(), &st); err != nil {
		return w.failed(owner, fmt.Errorf("track netns %s: fstat: %w", ns.Name, err))
	}
	if _, ok := w.byInode[st.Ino]; ok {
		return nil
	}
	// Every namespace gets an id of its own, never one a dead namespace
	// had: the kernel would hand a freed id out again (the lowest free
	// one), and an RTM_DELNSID still queued for the dead namespace would
	// then count as the new one's death.
	id := w.next
	if _, err := w.ctl.Do(rtnl.NewNSID(ns.FD(), id)); err != nil {
		return w.failed(owner, fmt.Errorf("track netns %s: %w", ns.Name, err))
	}
	w.next++
	w.live[id] = tracked{name: ns.Name, owner: owner, inode: st.Ino}
	w.byInode[st.Ino] = id
	return nil
}

func (w *Witness) failed(owner string, err error) error {
	w.failures = append(w.failures, failure{owner, err})
	return err
}

// Forget stops waiting for the namespaces of owner, now and from now on
// (its Track calls are ignored), and returns the names of those still
// alive: a case abandoned at its deadline may still hold them, and they
// go with the process rather than with the kernel.
func (w *Witness) Forget(owner string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.forgotten[owner] = true
	var names []string
	for id, t := range w.live {
		if t.owner == owner {
			names = append(names, t.name)
			w.drop(id)
		}
	}
	sort.Strings(names)
	return names
}

func (w *Witness) drop(id int32) {
	delete(w.byInode, w.live[id].inode)
	delete(w.live, id)
}

// err is the first tracking failure of an owner not forgotten, or nil.
func (w *Witness) err() error {
	for _, f := range w.failures {
		if !w.forgotten[f.owner] {
			return f.err
		}
	}
	return nil
}

// errTimeout is returned by Wait when tracked namespaces outlive the
// deadline; the message names them.
var errTimeout = errors.New("namespaces not torn down in time")

// Wait returns once every tracked namespace has been torn down and the
// kernel's cleanup run that took it has returned, or with an error when
// the deadline passes first (the error names the namespaces still alive)
// or when tracking was incomplete. A namespace that is still referenced
// (a handle or socket the program keeps open) is never torn down: close
// everything first.
func (w *Witness) Wait(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	if err := w.drain(deadline); err != nil {
		return err
	}
	// The barrier: one probe (see the package comment), made ahead.
	p := <-w.spare
	defer func() { go w.makeSpare() }()
	if p.err != nil {
		// The spare is made while the program runs: a case at its file
		// limit (EMFILE) starves it. Make it again, now that the
		// tracked namespaces' handles are closed.
		ns, err := netns.NewUntold("nsdeath-probe")
		if err != nil {
			return fmt.Errorf("namespace teardown barrier: %w (made ahead: %v)", err, p.err)
		}
		p = spareProbe{ns: ns}
	}
	err := w.Track(p.ns, "")
	p.ns.Close()
	if err != nil {
		return err
	}
	if err := w.drain(deadline); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err()
}

// drain reads the witness socket until no tracked namespace is alive.
func (w *Witness) drain(deadline time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.live) > 0 {
		d, err := w.sub.Recv()
		if errors.Is(err, nlsock.ErrEmpty) {
			left := time.Until(deadline)
			if left <= 0 {
				return fmt.Errorf("%w: %s still alive after the deadline", errTimeout, w.names())
			}
			w.mu.Unlock()
			_, werr := w.sub.Wait(left)
			w.mu.Lock()
			if werr != nil {
				return w.failed("", werr)
			}
			continue
		}
		if err != nil {
			// An overrun (ENOBUFS) loses notifications: say so
			// rather than wait for what will never come.
			return w.failed("", fmt.Errorf("namespace teardown witness: %w", err))
		}
		for _, m := range d.Msgs {
			if m.Header.Type != unix.RTM_DELNSID {
				continue
			}
			id, err := rtnl.NSIDOf(m)
			if err != nil {
				return w.failed("", err)
			}
			w.drop(id)
		}
	}
	return nil
}

func (w *Witness) names() string {
	var names []string
	for id, t := range w.live {
		names = append(names, fmt.Sprintf("%s (id %d%s)", t.name, id, holders(t.inode)))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// holders says what of this program still refers to the namespace of
// nsfs inode ino: its threads in it and its descriptors of it. A
// namespace that outlives its deadline with neither is held by the kernel.
func holders(ino uint64) string {
	link := fmt.Sprintf("net:[%d]", ino)
	threads, fds := netns.ThreadsIn(ino), []string(nil)
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		for _, e := range ents {
			if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && l == link {
				fds = append(fds, e.Name())
			}
		}
	}
	if len(threads) == 0 && len(fds) == 0 {
		return "; no thread of this program is in it and no descriptor of it is open"
	}
	return fmt.Sprintf("; this program's threads in it: %v, descriptors of it: %v", threads, fds)
}

// OnTeardown calls fn, from a goroutine of its own, once the kernel has
// begun tearing ns down (cleanup_net took it: its RTM_DELNSID), with nil,
// or with why it could not tell within timeout. The witness namespace it
// watches from lives until fn has returned, so a program that waits for
// every namespace it made also waits for fn. It is for self-tests that
// must make something happen while a namespace is torn down, after the
// code that released it has long returned.
func OnTeardown(ns *netns.NS, timeout time.Duration, fn func(error)) error {
	w, err := New()
	if err != nil {
		return err
	}
	if err := w.Track(ns, ""); err != nil {
		w.Close()
		return err
	}
	go func() {
		defer w.Close()
		fn(w.drain(time.Now().Add(timeout)))
	}()
	return nil
}
