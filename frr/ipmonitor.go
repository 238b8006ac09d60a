// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jsimonetti/rtnetlink/v2"
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// The ip monitor cases: iproute2's `ip monitor` as a client. In a source
// namespace S the case makes a known series of changes while two real
// monitors run: `ip monitor label link address route nexthop` in S, and
// the same with all-nsid in an observer namespace O that gives S the id
// 7. Two harness sockets subscribed to the same groups receive the same
// series: one in S, one in O with NETLINK_LISTEN_ALL_NSID. The expected
// events are derived from the series alone: each change states the
// notifications the kernel sends for it. Each of the four observers must
// have exactly those, as many, in that order, from O every one with
// "[nsid 7]"; none is the reference for another, so a notification
// delivered twice to every socket fails all four.

const monitorNSID = 7

// monitorGroups are the groups `ip monitor link address route nexthop`
// joins that the series touches.
var monitorGroups = []uint32{unix.RTNLGRP_LINK, unix.RTNLGRP_IPV4_IFADDR, unix.RTNLGRP_IPV6_IFADDR,
	unix.RTNLGRP_IPV4_ROUTE, unix.RTNLGRP_IPV6_ROUTE, unix.RTNLGRP_NEXTHOP}

// monitorWithin bounds how long ip may take to print what the kernel
// queued for it (it reads and prints asynchronously to the case), and how
// long the kernel's link watch may take to run.
const monitorWithin = 20 * time.Second

// ipMonitorAbout is what an ipmonitor case checks, for -l -v.
const ipMonitorAbout = "ip monitor and ip monitor all-nsid print, event by event, what a harness socket beside each receives, with the switch at"

// injectDuplicate is -inject-duplicate, the self-test of the comparison.
var injectDuplicate bool

func ipMonitorFlags(fs *flag.FlagSet) {
	fs.BoolVar(&injectDuplicate, "inject-duplicate", false, "SELF-TEST of the ip monitor cases: multicast from S a copy of the kernel's notification of nexthop 5, which every observer (both monitors, both harness sockets) receives; the ipmonitor cases must fail")
}

func ipMonitorCases() []selftests.Case {
	return []selftests.Case{
		{Name: "ipmonitor.mode0", Run: func(t selftests.T) { runIPMonitor(t, "0") }, About: ipMonitorAbout + " 0"},
		{Name: "ipmonitor.mode1", Run: func(t selftests.T) { runIPMonitor(t, "1") }, About: ipMonitorAbout + " 1"},
	}
}

// findIP finds iproute2's ip on PATH, or in /sbin, /usr/sbin, /bin,
// /usr/bin (PATH often lacks the sbin directories).
func findIP() string {
	if p, err := exec.LookPath("ip"); err == nil {
		return p
	}
	for _, d := range []string{"/sbin", "/usr/sbin", "/bin", "/usr/bin"} {
		p := filepath.Join(d, "ip")
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

func runIPMonitor(t selftests.T, value string) {
	ip := findIP()
	if ip == "" {
		t.Skipf("no ip (Debian package iproute2)")
	}
	switch {
	case prog.sw != nil:
		if err := prog.sw.Set(value); err != nil {
			t.Fatalf("%v", err)
		}
	case value != "0":
		t.Skipf("%s", skipReason())
	}
	src, obs := selftests.NewNS(t, "S"), selftests.NewNS(t, "O")
	obs.Map(src, monitorNSID)
	local := startMonitor(t, src, ip, false)
	foreign := startMonitor(t, obs, ip, true)
	probeUntilListening(t, src, local, foreign)

	mask := nlsock.GroupMask(monitorGroups...)
	sLocal := src.Socket("local", selftests.BindGroups(mask))
	sForeign := obs.Socket("foreign", selftests.With(unix.NETLINK_LISTEN_ALL_NSID), selftests.BindGroups(mask))
	r := &seriesRun{t: t, n: src, links: src.Socket("link watch", selftests.BindGroups(nlsock.GroupMask(unix.RTNLGRP_LINK)))}
	if injectDuplicate {
		r.dup = src.Socket("duplicator", selftests.BindGroups(nlsock.GroupMask(unix.RTNLGRP_NEXTHOP)))
	}
	const sentinelID = 999
	series := changeSeries(sentinelID)
	for _, c := range series {
		c.do(r)
	}
	obsLocal := monObserver{name: sLocal.String(), got: harnessEvents(t, sLocal, false)}
	obsForeign := monObserver{name: sForeign.String() + " (LISTEN_ALL_NSID)", nsid: fmt.Sprint(monitorNSID), got: harnessEvents(t, sForeign, true)}
	if slices.Contains(obsLocal.got, linkEvent("mon0", true, "UNKNOWN")) {
		t.Logf("mon0's link watch ran after its set-up: its RTM_NEWLINK (LOWERLAYERDOWN) followed the set-up's (UNKNOWN)")
	}
	sentinel := event{Label: "NEXTHOP", Key: fmt.Sprintf("id %d", sentinelID)}
	for _, m := range []*monitor{local, foreign} {
		m.await(t, func(e event) bool { e.NSID = ""; return e == sentinel }, "the sentinel nexthop "+sentinel.Key)
	}
	local.stop()
	foreign.stop()

	observers := []monObserver{obsLocal, obsForeign}
	for _, c := range []struct {
		m    *monitor
		nsid string
	}{{local, ""}, {foreign, fmt.Sprint(monitorNSID)}} {
		got, bad := parseIPMonitor(c.m.after())
		for _, b := range bad {
			t.Errorf("%s: unreadable line %s", c.m, b)
		}
		observers = append(observers, monObserver{name: c.m.String(), nsid: c.nsid, got: got})
	}
	for _, f := range judge(series, observers) {
		t.Errorf("%s", f)
	}
	for _, o := range observers {
		t.Logf("%s: %d events", o.name, len(o.got))
	}
}

// A change is one request of the series and the notifications the kernel
// sends for it, in order, as the monitor in S prints them. Where the
// kernel's own timing decides between two sequences, notifies holds both;
// each observer must have one of them.
type change struct {
	what     string
	do       func(r *seriesRun)
	notifies [][]event
}

// seriesRun is what a change acts with: the case, S, a socket on
// RTNLGRP_LINK that wakes the wait for the link watch, and (with
// -inject-duplicate) a socket that copies a notification.
type seriesRun struct {
	t     selftests.T
	n     *selftests.NS
	links *selftests.Sock
	dup   *selftests.Sock
}

func one(es ...event) [][]event { return [][]event{es} }

func linkEvent(name string, up bool, operstate string) event {
	return event{Label: "LINK", Key: linkKey(name, up, operstate)}
}

// changeSeries is the series in S: an address (with its local route), a
// route, a nexthop, a veth pair and one end up, the address deleted, and
// last the sentinel nexthop.
func changeSeries(sentinelID uint32) []change {
	addr := netip.MustParsePrefix("198.51.100.1/32")
	req := func(rq rtnl.Request) func(*seriesRun) { return func(r *seriesRun) { r.n.Do(rq) } }
	return []change{
		{
			// inet_insert_ifa(): RTM_NEWADDR, then fib_add_ifaddr() adds the
			// local route (a /32 gets no prefix or broadcast route).
			what: "add " + addr.String() + " to lo", do: req(rtnl.NewAddr(rtnl.LoopbackIndex, addr)),
			notifies: one(event{Label: "ADDR", Key: "198.51.100.1/32 dev 1"},
				event{Label: "ROUTE", Key: "local 198.51.100.1 table local"}),
		},
		{
			what: "add route 203.0.113.0/24 dev lo", do: req(rtnl.NewRoute(rtnl.Route{Dst: netip.MustParsePrefix("203.0.113.0/24"), OIF: rtnl.LoopbackIndex})),
			notifies: one(event{Label: "ROUTE", Key: "unicast 203.0.113.0/24 table main"}),
		},
		{
			what: "add nexthop 5", do: func(r *seriesRun) {
				r.n.Do(rtnl.NewNexthop(rtnl.Nexthop{ID: 5, Blackhole: true}))
				if r.dup != nil {
					r.duplicate()
				}
			},
			notifies: one(event{Label: "NEXTHOP", Key: "id 5"}),
		},
		{
			// veth_newlink() registers the peer first; each gets its
			// RTM_NEWLINK from rtnl_configure_link(), down, so reported with
			// operstate DOWN.
			what: "add veth mon0 peer mon1", do: req(rtnl.NewVeth("mon0", "mon1", -1)),
			notifies: one(linkEvent("mon1", false, "DOWN"), linkEvent("mon0", false, "DOWN")),
		},
		{
			// veth_newlink() turns each end's carrier off after
			// register_netdevice(), so netif_carrier_off() queues a link
			// watch event for mon0 (linkwatch_fire_event(); not urgent while
			// mon0 is down, so linkwatch_schedule_work() may delay it up to a
			// second after the last run). mon1 stays down and without
			// carrier: veth_open() turns carriers on only when the peer is
			// up. linkwatch_do_dev() sets mon0's operstate (rfc2863_policy():
			// no carrier below an iflink, LOWERLAYERDOWN) and, only if mon0
			// is up by then, sends RTM_NEWLINK (netdev_state_change()), all
			// under RTNL. So the set-up's own RTM_NEWLINK
			// (__dev_notify_flags()) reports LOWERLAYERDOWN if the link watch
			// ran before it, and nothing follows; or UNKNOWN, the operstate
			// before any run, and the link watch's RTM_NEWLINK with
			// LOWERLAYERDOWN follows whenever the work runs. (From 6.8,
			// rtnl_getlink() runs a pending event itself,
			// linkwatch_sync_dev(), so the RTM_GETLINK for mon0's index makes
			// it the first; on 6.1 both happen.) The case then waits until
			// mon0 reports LOWERLAYERDOWN: its next change takes RTNL after
			// the link watch's, so the event, if any, has its fixed place
			// here in every observer, and nothing of the link watch can come
			// later. That is stricter than allowing the event anywhere up to
			// the end.
			what: "set mon0 up", do: func(r *seriesRun) {
				r.n.Do(rtnl.SetUp(r.n.LinkIndex("mon0"), true))
				r.awaitOperstate("mon0", rtnetlink.OperStateLowerLayerDown)
			},
			notifies: [][]event{
				{linkEvent("mon0", true, "LOWERLAYERDOWN")},
				{linkEvent("mon0", true, "UNKNOWN"), linkEvent("mon0", true, "LOWERLAYERDOWN")},
			},
		},
		{
			// inet_del_ifa(): RTM_DELADDR, then fib_del_ifaddr() removes the
			// local route.
			what: "delete " + addr.String() + " from lo", do: req(rtnl.DelAddr(rtnl.LoopbackIndex, addr)),
			notifies: one(event{Label: "ADDR", Deleted: true, Key: "198.51.100.1/32 dev 1"},
				event{Label: "ROUTE", Deleted: true, Key: "local 198.51.100.1 table local"}),
		},
		{
			what: fmt.Sprintf("add the sentinel nexthop %d", sentinelID), do: req(rtnl.NewNexthop(rtnl.Nexthop{ID: sentinelID, Blackhole: true})),
			notifies: one(event{Label: "NEXTHOP", Key: fmt.Sprintf("id %d", sentinelID)}),
		},
	}
}

// awaitOperstate waits, with a deadline, until the link called name in S
// reports operstate want: the link watch sets it asynchronously. Each
// look is an RTM_GETLINK; between looks the case waits for the next
// RTM_NEWLINK in S, which the link watch sends when the link is up.
func (r *seriesRun) awaitOperstate(name string, want rtnetlink.OperationalState) {
	t := r.t
	t.Helper()
	deadline := time.Now().Add(monitorWithin)
	for {
		rep := r.n.Do(rtnl.GetLink(name))
		var lm rtnetlink.LinkMessage
		if len(rep.Msgs) != 1 {
			t.Fatalf("netns S: RTM_GETLINK %s: %d replies, want 1", name, len(rep.Msgs))
		}
		if err := lm.UnmarshalBinary(rep.Msgs[0].Data); err != nil || lm.Attributes == nil {
			t.Fatalf("netns S: RTM_GETLINK %s: %v", name, err)
		}
		got := lm.Attributes.OperationalState
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("netns S: %s still has operstate %s, not %s, %v after it was set up (the link watch did not run)",
				name, operstateName(uint8(got)), operstateName(uint8(want)), monitorWithin)
		}
		if _, err := r.links.Wait(time.Until(deadline)); err != nil {
			t.Fatalf("%v", err)
		}
		for {
			if _, err := r.links.Recv(); errors.Is(err, nlsock.ErrEmpty) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", r.links, err)
			}
		}
	}
}

// duplicate multicasts, from S, a copy of the kernel's RTM_NEWNEXTHOP that
// the duplicator socket received: a notification delivered twice to every
// subscriber, the monitors and the harness sockets alike (the copy reaches
// O's LISTEN_ALL_NSID subscribers too, with S's id).
func (r *seriesRun) duplicate() {
	t := r.t
	t.Helper()
	d, err := r.dup.Recv()
	if err != nil || len(d.Msgs) != 1 || d.Msgs[0].Header.Type != unix.RTM_NEWNEXTHOP {
		t.Fatalf("-inject-duplicate: %s: want one RTM_NEWNEXTHOP queued, got %v, %v", r.dup, d.Msgs, err)
	}
	if err := r.dup.SendTo(d.Msgs[0], 0, nlsock.GroupMask(unix.RTNLGRP_NEXTHOP)); err != nil {
		t.Fatalf("-inject-duplicate: %v", err)
	}
	t.Logf("-inject-duplicate: multicast a copy of the RTM_NEWNEXTHOP of nexthop 5 from S")
}

// A monObserver is one of the four that receive the series, and what it got.
type monObserver struct {
	name string
	nsid string // the id its events carry for S: "" in S, "7" in O
	got  []event
}

// expected is the series' notifications as an observer whose events carry
// nsid sees them, with alts[k] the alternative taken for the k-th change
// that has alternatives.
func expected(series []change, nsid string, alts []int) []event {
	var want []event
	k := 0
	for _, c := range series {
		alt := c.notifies[0]
		if len(c.notifies) > 1 {
			alt = c.notifies[alts[k]]
			k++
		}
		for _, e := range alt {
			want = append(want, withNSID(e, nsid))
		}
	}
	return want
}

// noAlt is an observer's choice when none of a change's alternatives is
// what it received next.
const noAlt = -1

// choices says, for each change of series that has alternatives, which
// one an observer whose events carry nsid received: the first whose
// events all come next in got (each earlier change taken as the
// expectation states it), or noAlt.
func choices(series []change, nsid string, got []event) []int {
	var out []int
	pos := 0
	for _, c := range series {
		take := 0
		if len(c.notifies) > 1 {
			take = noAlt
			for i, a := range c.notifies {
				if pos+len(a) <= len(got) && slices.EqualFunc(a, got[pos:pos+len(a)], func(w, g event) bool { return withNSID(w, nsid) == g }) {
					take = i
					break
				}
			}
			out = append(out, take)
		}
		if take != noAlt {
			pos += len(c.notifies[take])
		} else {
			pos += len(c.notifies[0])
		}
	}
	return out
}

// agreedAlternatives is, for each change with alternatives, the one the
// kernel sent: the kernel decides once for the notification, so every
// observer must have received the same. It is the one most observers
// received (on a tie, the first observer's), and disagreements names
// each observer that received another. (One that received none of them
// fails its own comparison.)
func agreedAlternatives(series []change, observers []monObserver) (agreed []int, disagreements []string) {
	per := make([][]int, len(observers))
	for i, o := range observers {
		per[i] = choices(series, o.nsid, o.got)
	}
	var withAlts []change
	for _, c := range series {
		if len(c.notifies) > 1 {
			withAlts = append(withAlts, c)
		}
	}
	for k, c := range withAlts {
		votes := map[int]int{}
		best := noAlt
		for i := range observers {
			a := per[i][k]
			if a == noAlt {
				continue
			}
			votes[a]++
			if best == noAlt || votes[a] > votes[best] {
				best = a
			}
		}
		if best == noAlt {
			best = 0 // none matched: each is shown against the first
		}
		agreed = append(agreed, best)
		var who []string
		for i, o := range observers {
			if per[i][k] != best && per[i][k] != noAlt {
				who = append(who, fmt.Sprintf("%s received %s", o.name, describeAlt(c, per[i][k])))
			}
		}
		if len(who) > 0 {
			disagreements = append(disagreements, fmt.Sprintf("%q: the kernel sends one of its alternatives to every observer, but they differ: %d of %d received %s; %s",
				c.what, votes[best], len(observers), describeAlt(c, best), strings.Join(who, "; ")))
		}
	}
	return agreed, disagreements
}

// describeAlt names alternative a of change c by its events.
func describeAlt(c change, a int) string {
	if a == noAlt {
		return "none of its alternatives"
	}
	var es []string
	for _, e := range c.notifies[a] {
		es = append(es, e.String())
	}
	return fmt.Sprintf("alternative %d (%s)", a+1, strings.Join(es, ", "))
}

func seriesText(series []change) string {
	var w []string
	for _, c := range series {
		w = append(w, c.what)
	}
	return strings.Join(w, ", ")
}

func withNSID(e event, nsid string) event { e.NSID = nsid; return e }

// judge compares every observer with the expectation derived from the
// series, every change with alternatives taken as the observers agree it
// came, and returns one failure for each observer that differs and one
// for each change whose alternative the observers disagree on.
func judge(series []change, observers []monObserver) []string {
	alts, fails := agreedAlternatives(series, observers)
	for _, o := range observers {
		want := expected(series, o.nsid, alts)
		if d := compareEvents(want, o.got); d != "" {
			fails = append(fails, fmt.Sprintf("%s: %d events, want %d (from the series of changes: %s):\n%s", o.name, len(o.got), len(want), seriesText(series), d))
		}
	}
	return fails
}

// harnessEvents reads what a harness socket has queued: the series'
// notifications are all queued when the sentinel's request returns (the
// kernel multicasts them before its ACK, and the case waited for the link
// watch). Transcript's own sentinel then proves nothing else was on its
// way.
func harnessEvents(t selftests.T, s *selftests.Sock, allNSID bool) []event {
	t.Helper()
	var out []event
	for {
		d, err := s.Recv()
		if errors.Is(err, nlsock.ErrEmpty) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v after %d events", s, err, len(out))
		}
		for _, m := range d.Msgs {
			e, err := messageEvent(m, d.FromPid, d.NSID, allNSID)
			if err != nil {
				t.Fatalf("%s, message %d: %v", s, len(out)+1, err)
			}
			out = append(out, e)
		}
	}
	rest, err := s.Transcript()
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	for _, l := range rest {
		t.Errorf("%s: after its queue was read empty: %s", s, l)
	}
	return out
}

// probeUntilListening makes a probe (a fresh blackhole nexthop in src)
// until both monitors print it. ip joins its groups, sets
// LISTEN_ALL_NSID and dumps the links before it starts reading, and a
// notification that arrives during that dump is dropped by its dump
// reader, so only a printed probe proves a monitor listens. The harness
// sockets are opened after the last probe; each monitor's events are
// read from the line after it.
func probeUntilListening(t selftests.T, src *selftests.NS, ms ...*monitor) {
	t.Helper()
	deadline := time.Now().Add(monitorWithin)
	for id := uint32(1000); ; id++ {
		src.Do(rtnl.NewNexthop(rtnl.Nexthop{ID: id, Blackhole: true}))
		key := fmt.Sprintf("id %d", id)
		wait := time.Now().Add(200 * time.Millisecond)
		for {
			var pending *monitor
			for _, m := range ms {
				if !m.markAfter(func(e event) bool { return e.Label == "NEXTHOP" && e.Key == key }) {
					pending = m
					break
				}
			}
			if pending == nil {
				return
			}
			if pending.p.Exited() {
				t.Fatalf("%s exited (%v) before printing a probe; stderr: %s", pending, pending.p.err, oneLine(pending.stderr.String()))
			}
			if !pending.waitOutput(wait) {
				break
			}
		}
		if time.Now().After(deadline) {
			for _, m := range ms {
				t.Logf("%s printed:\n  %s", m, strings.Join(m.snapshot(), "\n  "))
			}
			t.Fatalf("ip monitor printed none of the probes up to nexthop %s within %v", key, monitorWithin)
		}
	}
}

// monitor is a running `ip monitor`, its output collected line by line.
type monitor struct {
	name   string
	p      *started
	mu     sync.Mutex
	out    []string
	cut    int           // the first line after the last probe
	grew   chan struct{} // a token after each line read (capacity 1)
	eof    chan struct{} // closed when ip's stdout is read to the end
	stderr lockedBuffer
}

func (m *monitor) String() string { return m.name }

func startMonitor(t selftests.T, n *selftests.NS, ip string, allNSID bool) *monitor {
	t.Helper()
	args := []string{"monitor"}
	name := "ip monitor in " + n.Name
	if allNSID {
		args = append(args, "all-nsid")
		name = "ip monitor all-nsid in " + n.Name
	}
	args = append(args, "label", "link", "address", "route", "nexthop")
	cmd := exec.Command(ip, args...)
	m := &monitor{name: name}
	cmd.Stderr = &m.stderr
	pipe, err := outputPipe(cmd)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	m.p, err = startIn(n.NS, cmd, 0)
	if err != nil {
		pipe.Close()
		t.Fatalf("%s: %v", name, err)
	}
	m.eof, m.grew = make(chan struct{}), make(chan struct{}, 1)
	t.Cleanup(m.stop)
	go func() {
		defer close(m.eof)
		defer pipe.Close()
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			m.mu.Lock()
			m.out = append(m.out, sc.Text())
			m.mu.Unlock()
			select {
			case m.grew <- struct{}{}:
			default: // a token is already waiting
			}
		}
	}()
	return m
}

// waitOutput waits until ip prints another line (or one printed since the
// last wait), reporting true, or until its output ends and it exits, or
// until passes.
func (m *monitor) waitOutput(until time.Time) bool {
	timer := time.NewTimer(time.Until(until))
	defer timer.Stop()
	select {
	case <-m.grew:
		return true
	case <-m.eof:
		// No more lines: wait for ip itself, so that the caller sees it
		// has exited.
		select {
		case <-m.p.done:
		case <-timer.C:
		}
		return false
	case <-timer.C:
		return false
	}
}

func (m *monitor) snapshot() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.out...)
}

// markAfter sets the cut after the last line that is an event matching
// match, and reports whether there is one.
func (m *monitor) markAfter(match func(event) bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.out) - 1; i >= 0; i-- {
		if e, err := parseIPMonitorLine(m.out[i]); err == nil && match(e) {
			m.cut = i + 1
			return true
		}
	}
	return false
}

// after returns the lines after the cut.
func (m *monitor) after() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.out[m.cut:]...)
}

// await waits for ip to print, after the cut, an event matching match.
func (m *monitor) await(t selftests.T, match func(event) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(monitorWithin)
	for {
		evs, _ := parseIPMonitor(m.after())
		for _, e := range evs {
			if match(e) {
				return
			}
		}
		if m.p.Exited() {
			t.Fatalf("%s exited (%v) before printing %s; stderr: %s", m, m.p.err, what, oneLine(m.stderr.String()))
		}
		if !m.waitOutput(deadline) && time.Now().After(deadline) {
			t.Fatalf("%s did not print %s within %v; it printed after the probe:\n  %s", m, what, monitorWithin, strings.Join(m.after(), "\n  "))
		}
	}
}

// stop ends ip and waits for it and for the end of its output.
func (m *monitor) stop() {
	m.p.Stop()
	<-m.eof
}
