// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bufio"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

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
// series: one in S, one in O with NETLINK_LISTEN_ALL_NSID. What each
// monitor printed must be, event by event, what its socket received:
// the same events, as many, in the same order, and from O every one
// prefixed "[nsid 7]".

const monitorNSID = 7

// monitorGroups are the groups `ip monitor link address route nexthop`
// joins that the series touches.
var monitorGroups = []uint32{unix.RTNLGRP_LINK, unix.RTNLGRP_IPV4_IFADDR, unix.RTNLGRP_IPV6_IFADDR,
	unix.RTNLGRP_IPV4_ROUTE, unix.RTNLGRP_IPV6_ROUTE, unix.RTNLGRP_NEXTHOP}

// monitorWithin bounds how long ip may take to print what the kernel
// queued for it: it reads and prints asynchronously to the case.
const monitorWithin = 20 * time.Second

// ipMonitorAbout is what an ipmonitor case checks, for -l -v.
const ipMonitorAbout = "ip monitor and ip monitor all-nsid print, event by event, what a harness socket beside each receives, with the switch at"

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
	const sentinelID = 999
	changeSeries(t, src, sentinelID)
	gotLocal, err := sLocal.Transcript()
	if err != nil {
		t.Fatalf("socket local in S: %v", err)
	}
	gotForeign, err := sForeign.Transcript()
	if err != nil {
		t.Fatalf("socket foreign in O: %v", err)
	}
	sentinel := fmt.Sprintf("id %d", sentinelID)
	for _, m := range []*monitor{local, foreign} {
		m.await(t, func(e event) bool { return e.Label == "NEXTHOP" && e.Key == sentinel }, "the sentinel nexthop "+sentinel)
	}
	local.stop()
	foreign.stop()

	wantLocal := socketEvents(t, "local in S", gotLocal, false)
	wantForeign := socketEvents(t, "foreign in O", gotForeign, true)
	requireSeries(t, wantLocal, sentinel)
	for i, e := range wantForeign {
		if e.NSID != fmt.Sprint(monitorNSID) {
			t.Errorf("socket foreign in O, message %d (%s): nsid %q, want %d (O's id for S)", i+1, e, e.NSID, monitorNSID)
		}
	}
	if d := compareEvents(wantLocal, stripNSID(wantForeign)); d != "" {
		t.Errorf("the LISTEN_ALL_NSID socket in O did not receive what the socket in S did:\n%s", d)
	}
	for _, c := range []struct {
		m    *monitor
		want []event
	}{{local, wantLocal}, {foreign, wantForeign}} {
		got, bad := parseIPMonitor(c.m.after())
		for _, b := range bad {
			t.Errorf("%s: unreadable line %s", c.m, b)
		}
		if d := compareEvents(c.want, got); d != "" {
			t.Errorf("%s printed other events than the harness socket received (%d vs %d):\n%s", c.m, len(got), len(c.want), d)
		} else {
			t.Logf("%s: the same %d events as the harness socket", c.m, len(got))
		}
	}
}

// changeSeries makes the known series in n: an address (with its local
// route), a route, a nexthop, a veth pair and one end up, the address
// deleted, and last the sentinel nexthop.
func changeSeries(t selftests.T, n *selftests.NS, sentinelID uint32) {
	t.Helper()
	a := n.AddAddr()
	n.Do(rtnl.NewRoute(rtnl.Route{Dst: netip.MustParsePrefix("203.0.113.0/24"), OIF: rtnl.LoopbackIndex}))
	n.Do(rtnl.NewNexthop(rtnl.Nexthop{ID: 5, Blackhole: true}))
	n.Do(rtnl.NewVeth("mon0", "mon1", -1))
	n.Do(rtnl.SetUp(n.LinkIndex("mon0"), true))
	n.Do(rtnl.DelAddr(rtnl.LoopbackIndex, a.Prefix))
	n.Do(rtnl.NewNexthop(rtnl.Nexthop{ID: sentinelID, Blackhole: true}))
}

// requireSeries: the socket's events hold the series' known ones in
// order, so that an empty or truncated transcript cannot pass as a match.
func requireSeries(t selftests.T, got []event, sentinel string) {
	t.Helper()
	known := []event{
		{Label: "ADDR", Key: "198.51.100.1/32"},
		{Label: "ROUTE", Key: "local 198.51.100.1 table local"},
		{Label: "ROUTE", Key: "unicast 203.0.113.0/24 table main"},
		{Label: "NEXTHOP", Key: "id 5"},
		{Label: "LINK", Key: "mon0"},
		{Label: "ADDR", Deleted: true, Key: "198.51.100.1/32"},
		{Label: "NEXTHOP", Key: sentinel},
	}
	i := 0
	for _, e := range got {
		if i < len(known) && e.Label == known[i].Label && e.Key == known[i].Key && e.Deleted == known[i].Deleted {
			i++
		}
	}
	if i < len(known) {
		t.Fatalf("socket local in S: the series' event %s is missing from its %d events", known[i], len(got))
	}
}

func socketEvents(t selftests.T, name string, lines []selftests.Line, allNSID bool) []event {
	t.Helper()
	var out []event
	for i, l := range lines {
		e, err := lineEvent(l, allNSID)
		if err != nil {
			t.Fatalf("socket %s, message %d (%s): %v", name, i+1, l, err)
		}
		out = append(out, e)
	}
	return out
}

func stripNSID(es []event) []event {
	out := make([]event, len(es))
	for i, e := range es {
		e.NSID = ""
		out[i] = e
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
	m.p.Kill(syscall.SIGTERM)
	select {
	case <-m.p.done:
	case <-time.After(5 * time.Second):
		m.p.Kill(syscall.SIGKILL)
		<-m.p.done
	}
	<-m.eof
}
