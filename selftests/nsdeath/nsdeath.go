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
// those until every tracked namespace is gone, then lets two probe
// namespaces die one after the other: the netns workqueue is ordered, so
// once the second probe's RTM_DELNSID arrives, the cleanup_net run that
// took the tracked namespaces (and the first probe) has returned, exit
// methods included.
//
// An id given in the witness namespace is seen only there: it changes
// nothing for sockets in any other namespace.
package nsdeath

import (
	"errors"
	"fmt"
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
	mu   sync.Mutex
	ns   *netns.NS
	ctl  *rtnl.Conn
	sub  *nlsock.Socket
	live map[int32]string // id in the witness namespace -> name
	next int32            // the id the next tracked namespace gets
	err  error            // the first error that made tracking incomplete
}

// New creates the witness namespace.
func New() (*Witness, error) {
	ns, err := netns.New("nsdeath-witness")
	if err != nil {
		return nil, err
	}
	w := &Witness{ns: ns, live: map[int32]string{}}
	if err := w.open(); err != nil {
		w.Close()
		return nil, fmt.Errorf("namespace teardown witness: %w", err)
	}
	return w, nil
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
	if w.sub != nil {
		w.sub.Close()
	}
	if w.ctl != nil {
		w.ctl.Close()
	}
	w.ns.Close()
}

// Track gives ns an id in the witness namespace, so that its teardown is
// seen. Call it while ns is alive (before its handle is closed).
func (w *Witness) Track(ns *netns.NS) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	// Every namespace gets an id of its own, never one a dead namespace
	// had: the kernel would hand a freed id out again (the lowest free
	// one), and an RTM_DELNSID still queued for the dead namespace would
	// then count as the new one's death.
	id := w.next
	if _, err := w.ctl.Do(rtnl.NewNSID(ns.FD(), id)); err != nil {
		return w.failed(fmt.Errorf("track netns %s: %w", ns.Name, err))
	}
	w.next++
	w.live[id] = ns.Name
	return nil
}

func (w *Witness) failed(err error) error {
	if w.err == nil {
		w.err = err
	}
	return err
}

// ErrTimeout is returned by Wait when tracked namespaces outlive the
// deadline; the message names them.
var ErrTimeout = errors.New("namespaces not torn down in time")

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
	// The barrier: two probes, one after the other (see the package
	// comment).
	for i := 1; i <= 2; i++ {
		probe, err := netns.New(fmt.Sprintf("nsdeath-probe%d", i))
		if err != nil {
			return fmt.Errorf("namespace teardown barrier: %w", err)
		}
		err = w.Track(probe)
		probe.Close()
		if err != nil {
			return err
		}
		if err := w.drain(deadline); err != nil {
			return err
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
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
				return fmt.Errorf("%w: %s still alive after the deadline", ErrTimeout, w.names())
			}
			w.mu.Unlock()
			_, werr := w.sub.Wait(left)
			w.mu.Lock()
			if werr != nil {
				return w.failed(werr)
			}
			continue
		}
		if err != nil {
			// An overrun (ENOBUFS) loses notifications: say so
			// rather than wait for what will never come.
			return w.failed(fmt.Errorf("namespace teardown witness: %w", err))
		}
		for _, m := range d.Msgs {
			if m.Header.Type != unix.RTM_DELNSID {
				continue
			}
			id, err := rtnl.NSIDOf(m)
			if err != nil {
				return w.failed(err)
			}
			delete(w.live, id)
		}
	}
	return nil
}

func (w *Witness) names() string {
	var names []string
	for id, n := range w.live {
		names = append(names, fmt.Sprintf("%s (id %d)", n, id))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
