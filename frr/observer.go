// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bufio"
	"fmt"
	"net/netip"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"nlmcast/selftests/netns"
	"nlmcast/selftests/rtnl"
)

// The observer: a foreign NETLINK_LISTEN_ALL_NSID subscriber on the FRR
// path for a whole sequence. In its namespace obs, which gives router i
// the id i+1 and h1 the id markerNSID, iproute2's
// `ip monitor all-nsid label link address route nexthop` runs from before
// the daemons start until the lab is removed. With
// net.core.netlink_route_mc_index at 1 its deliveries are the index's
// second list (the LISTEN_ALL_NSID sockets), which no FRR daemon uses.
//
// After each step the harness makes a marker, a blackhole nexthop in h1,
// and waits for ip to print it: everything the kernel sent the observer
// before the marker is then printed (one socket, one queue, read in
// order), and the lines since the step began are judged against what the
// step changed (its own requests and the BGP routes the routers install or
// withdraw because of them), never against another socket's transcript.

// routerNSID is the id the observer's namespace gives router i.
func routerNSID(i int) string { return fmt.Sprint(i + 1) }

// markerNSID is the id the observer's namespace gives h1.
const markerNSID = 9

// observerWithin bounds how long ip may take to print a marker.
const observerWithin = 20 * time.Second

// observer is the running `ip monitor all-nsid` and its output.
type observer struct {
	ns     *netns.NS
	ctl    *rtnl.Conn
	marker func(id uint32) error // makes marker id in h1
	p      *started
	stderr lockedBuffer

	mu     sync.Mutex
	lines  []string
	grew   chan struct{} // a token after each line read (capacity 1)
	eof    chan struct{} // closed when ip's stdout is read to the end
	nextID uint32
}

// makeObserver makes obs, gives every router and h1 their ids there and
// starts ip monitor, returning once it has printed a marker (it joins its
// groups and dumps the links before it reads, and drops what arrives
// meanwhile: only a printed marker shows it listens).
func (l *lab) makeObserver(ip string) error {
	ns, ctl, err := newNamespace("obs", nil)
	if err != nil {
		return err
	}
	o := &observer{ns: ns, ctl: ctl, nextID: 1000, grew: make(chan struct{}, 1), eof: make(chan struct{})}
	l.obs = o
	for i, r := range l.Routers {
		if _, err := ctl.Do(rtnl.NewNSID(r.NS.FD(), int32(i+1))); err != nil {
			return fmt.Errorf("netns obs: id %d for %s: %w", i+1, r.Name, err)
		}
	}
	if _, err := ctl.Do(rtnl.NewNSID(l.stub.FD(), markerNSID)); err != nil {
		return fmt.Errorf("netns obs: id %d for h1: %w", markerNSID, err)
	}
	o.marker = func(id uint32) error {
		_, err := l.stubCtl.Do(rtnl.NewNexthop(rtnl.Nexthop{ID: id, Blackhole: true}))
		return err
	}
	cmd := exec.Command(ip, "monitor", "all-nsid", "label", "link", "address", "route", "nexthop")
	cmd.Stderr = &o.stderr
	pipe, err := outputPipe(cmd)
	if err != nil {
		return err
	}
	if o.p, err = startIn(ns, cmd, 0); err != nil {
		pipe.Close()
		return fmt.Errorf("ip monitor all-nsid in obs: %w", err)
	}
	go func() {
		defer close(o.eof)
		defer pipe.Close()
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			o.mu.Lock()
			o.lines = append(o.lines, sc.Text())
			o.mu.Unlock()
			select {
			case o.grew <- struct{}{}:
			default: // a token is already waiting
			}
		}
	}()
	// Markers until one is printed: ip may drop the first while it dumps.
	deadline := time.Now().Add(observerWithin)
	for {
		_, _, err := o.mark(200 * time.Millisecond)
		if err == nil {
			return nil
		}
		if o.p.Exited() || time.Now().After(deadline) {
			return fmt.Errorf("ip monitor all-nsid in obs printed none of its start markers within %v: %w", observerWithin, err)
		}
	}
}

func (o *observer) String() string { return "ip monitor all-nsid in netns obs" }

// count is how many lines ip has printed.
func (o *observer) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.lines)
}

// since returns the lines from line from on.
func (o *observer) since(from int) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.lines[min(from, len(o.lines)):]...)
}

// markerEvent is marker id as the observer prints it.
func markerEvent(id uint32) event {
	return event{NSID: fmt.Sprint(markerNSID), Label: "NEXTHOP", Key: fmt.Sprintf("id %d", id)}
}

// mark makes a marker and waits for ip to print it; it returns the index
// of the line after it, and the marker's id.
func (o *observer) mark(within time.Duration) (int, uint32, error) {
	o.nextID++
	id := o.nextID
	if err := o.marker(id); err != nil {
		return 0, id, fmt.Errorf("marker nexthop %d in h1: %w", id, err)
	}
	want := markerEvent(id)
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		o.mu.Lock()
		for i := len(o.lines) - 1; i >= 0; i-- {
			if e, err := parseIPMonitorLine(o.lines[i]); err == nil && e == want {
				o.mu.Unlock()
				return i + 1, id, nil
			}
		}
		o.mu.Unlock()
		select {
		case <-o.grew:
		case <-o.eof:
			<-o.p.done
			return 0, id, fmt.Errorf("%s exited (%v) before printing %s; stderr: %s", o, o.p.err, want, oneLine(o.stderr.String()))
		case <-deadline.C:
			return 0, id, fmt.Errorf("%s did not print %s within %v", o, want, within)
		}
	}
}

// stop ends ip and waits for it and the end of its output.
func (o *observer) stop() {
	if o.p == nil {
		return
	}
	o.p.Stop()
	<-o.eof
}

func (o *observer) close() {
	o.stop()
	o.ctl.Close()
	o.ns.Close()
}

// stepEvents is what a step's changes make the observer print, each event
// with the id of the namespace it happens in. Every printed event must be
// one of them, or match one of Rules; none may be a doubled delivery
// (judgeObserved).
type stepEvents struct {
	// Ordered are the notifications of the harness's own requests, made
	// one after the other, each acknowledged before the next: each once,
	// in this order (a link's by name and admin state, linkWanted).
	Ordered []event
	// Required are each once, in any order: what the kernel does
	// itself because of a request (the routes of an address, DAD's
	// end, a link's routes).
	Required []event
	// Zebra are the BGP routes the zebras install or delete because of
	// the step: each must be the last event printed for its route in
	// the window. Before it, a zebra may have added, deleted and added
	// that route again (the sessions come back one by one and the best
	// path or its nexthop changes); those events are zebra's own and
	// Rules explain them (zebraRoutes).
	Zebra []event
	// Early may come now, as the last event for its route, or else
	// must come in a later step (learn's BGP routes, which install
	// waits for).
	Early []event
	// Rules explain what else the kernel or FRR may print, by kind.
	Rules []allowance
	// Marker is the step's last event, the marker nexthop in h1.
	Marker event
}

// allowance explains events the lab cannot predict one by one.
type allowance struct {
	Why   string
	Match func(printed) bool
}

// printed is one event as ip printed it: Text is its line and its
// continuation lines, exactly (nexthop, nhid, metric, flags and all).
type printed struct {
	event
	Text string
}

// readWindow reads ip monitor's lines into events with their text, as
// parseIPMonitor does; lines it cannot read are returned as errors.
func readWindow(lines []string) ([]printed, []string) {
	var out []printed
	var bad []string
	lastBad := false
	for _, l := range lines {
		if l == "" || l[0] == ' ' || l[0] == '\t' {
			if len(out) > 0 && !lastBad {
				out[len(out)-1].Text += "\n" + l
			}
			continue
		}
		e, err := parseIPMonitorLine(l)
		if lastBad = err != nil; lastBad {
			bad = append(bad, fmt.Sprintf("%q: %v", l, err))
			continue
		}
		out = append(out, printed{e, l})
	}
	return out, bad
}

// object is what an event is about, whatever it says of it: the
// namespace, the label and the key, for an address without its
// tentative flag and for a link its name alone.
func (e event) object() event {
	o := event{NSID: e.NSID, Label: e.Label, Key: strings.TrimSuffix(e.Key, " tentative")}
	if e.Label == "LINK" {
		o.Key, _, _ = strings.Cut(e.Key, " ")
	}
	return o
}

// isRouter says whether nsid is a router's id in obs.
func isRouter(nsid string) bool {
	for i := range routerCount {
		if nsid == routerNSID(i) {
			return true
		}
	}
	return false
}

// replaceRepeats says whether the kernel may print b again, identical,
// with no other event for its object since: only for an object a zebra
// replaces, with a replace the kernel notifies even when nothing ip
// prints changed.
//   - A nexthop object in a router: insert_nexthop() notifies every
//     NLM_F_REPLACE (net/ipv4/nexthop.c).
//   - A route that is not a deletion, in a router, after a nexthop
//     object there was printed (between is the events in between):
//     insert_nexthop() then notifies, in compat mode, every route using
//     it or a group holding it (nexthop_replace_notify()).
//   - An IPv6 BGP route (zebra's) that is not a deletion:
//     fib6_add_rt2node() (net/ipv6/ip6_fib.c) notifies every replace,
//     identical or not.
//
// Nothing else: an IPv4 replace by an identical route is a no-op without
// a notification (fib_table_insert(), fa_match, net/ipv4/fib_trie.c); a
// deletion, the harness's own requests (NLM_F_EXCL), the kernel's own
// routes and addresses, the links and the markers are notified once per
// change, and a second identical notification with no other change
// between is a doubled delivery. A kernel that doubles every delivery
// doubles those too in every step, and in every window the copy of the
// previous step's marker comes first, unexplained: it fails every step
// even where it also doubled a zebra's replace.
func replaceRepeats(b printed, between []printed) bool {
	if !isRouter(b.NSID) {
		return false
	}
	switch {
	case b.Label == "NEXTHOP":
		return true
	case b.Label != "ROUTE" || b.Deleted:
		return false
	case slices.ContainsFunc(between, func(p printed) bool { return p.Label == "NEXTHOP" && p.NSID == b.NSID }):
		return true
	}
	return isBGP(b) && strings.Contains(b.Key, ":")
}

// isBGP says whether a route event is of a route BGP installed.
func isBGP(p printed) bool {
	return p.Label == "ROUTE" && strings.Contains(p.Text+" ", " proto bgp ")
}

// judgeObserved says what is wrong with lines, what the observer printed
// during a step, given what the step's changes make (want): a line ip
// could not read; a doubled delivery (an event printed again, the same
// text to the byte, with no other event for its object between the two
// copies, unless replaceRepeats); an ordered event missing or out of
// order; a required one missing; a zebra route that is not the last word
// on its route; the marker not last; and every other event that no rule
// explains (a namespace the observer has no id for, or its own: nothing
// changes there). A route added, deleted and added again is three
// events, not a doubled one. It returns the problems and the Early
// events that came.
func judgeObserved(lines []string, want stepEvents) (problems []string, early []event) {
	got, bad := readWindow(lines)
	for _, b := range bad {
		problems = append(problems, "unreadable line "+b)
	}
	used := make([]bool, len(got))
	lastOf := map[event]int{}
	for i, g := range got {
		o := g.object()
		if j, ok := lastOf[o]; ok && got[j].Text == g.Text && !replaceRepeats(g, got[j+1:i]) {
			problems = append(problems, fmt.Sprintf("printed twice in a row: %s (%q, and nothing else for that object between the two copies: a doubled delivery)", g.event, g.Text))
			used[i] = true // judged; the first copy is the event
			continue
		}
		lastOf[o] = i
	}
	take := func(match func(event) bool) int {
		for i, g := range got {
			if !used[i] && match(g.event) {
				used[i] = true
				return i
			}
		}
		return -1
	}
	if n := len(got); n == 0 || got[n-1].event != want.Marker {
		problems = append(problems, fmt.Sprintf("the step's marker %s is not the last event", want.Marker))
	} else {
		used[n-1] = true
	}
	last, lastWant := -1, event{}
	for _, w := range want.Ordered {
		i := take(func(g event) bool { return linkWanted(w, g) })
		switch {
		case i < 0:
			problems = append(problems, fmt.Sprintf("missing: %s", w))
		case i < last:
			problems = append(problems, fmt.Sprintf("out of order: %s printed before %s, which the harness made first", w, lastWant))
		default:
			last, lastWant = i, w
		}
	}
	for _, w := range want.Required {
		if take(func(g event) bool { return g == w }) < 0 {
			problems = append(problems, fmt.Sprintf("missing: %s", w))
		}
	}
	// lastWord takes the last event for w's object if it is w.
	lastWord := func(w event) (bool, string) {
		i, ok := lastOf[w.object()]
		if !ok {
			return false, ""
		}
		if got[i].event != w || used[i] {
			return false, fmt.Sprintf(" (the last event for it is %s)", got[i].event)
		}
		used[i] = true
		return true, ""
	}
	for _, w := range want.Zebra {
		if ok, why := lastWord(w); !ok {
			problems = append(problems, fmt.Sprintf("missing: %s%s", w, why))
		}
	}
	for _, w := range want.Early {
		if ok, _ := lastWord(w); ok {
			early = append(early, w)
		}
	}
	known := []string{fmt.Sprint(markerNSID)}
	for i := range routerCount {
		known = append(known, routerNSID(i))
	}
	for i, g := range got {
		if used[i] {
			continue
		}
		if !slices.Contains(known, g.NSID) {
			problems = append(problems, fmt.Sprintf("%s: from a namespace that is neither a router's (ids 1-%d) nor h1 (%d)", g.event, routerCount, markerNSID))
			continue
		}
		if !slices.ContainsFunc(want.Rules, func(a allowance) bool { return a.Match(g) }) {
			problems = append(problems, fmt.Sprintf("unexplained: %s (neither the step's changes nor %s)", g.event, describeRules(want.Rules)))
		}
	}
	return problems, early
}

func describeRules(rules []allowance) string {
	if len(rules) == 0 {
		return "any rule"
	}
	var w []string
	for _, r := range rules {
		w = append(w, r.Why)
	}
	return strings.Join(w, "; ")
}

// describeObserved is lines for a diagnostic: the first and last few.
func describeObserved(lines []string) string {
	const keep = 15
	if len(lines) > 2*keep {
		lines = append(append(slices.Clone(lines[:keep]), fmt.Sprintf("... %d lines ...", len(lines)-2*keep)), lines[len(lines)-keep:]...)
	}
	return "  " + strings.Join(lines, "\n  ")
}

// addrKey is an address event's key as ip monitor's and the harness's
// events state it: the address and its link's ifindex.
func addrKey(p netip.Prefix, ifindex uint32) string { return fmt.Sprintf("%s dev %d", p, ifindex) }

// linkKeyPrefix is the part of a link event's key (linkKey) that a change
// of the admin state decides: the name and IFF_UP.
func linkKeyPrefix(name string, up bool) string {
	return strings.TrimSuffix(linkKey(name, up, ""), " ")
}

// linkWanted says whether g is the event w wants: equal, or for a link,
// the same link and admin state in any operstate.
func linkWanted(w, g event) bool {
	if w.Label != "LINK" || g.Label != "LINK" {
		return w == g
	}
	k := w
	k.Key = g.Key
	return k == g && strings.HasPrefix(g.Key, w.Key+" ")
}
