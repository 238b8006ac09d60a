// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/jsimonetti/rtnetlink/v2"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests/rtnl"
)

// An event is one notification in terms every observer can state: what
// `ip monitor label` printed, what a harness socket received, and what
// the kernel sends for a change of the series. ip prints one per message:
// an optional "[nsid N]" (all-nsid: the source's id; "[nsid current]" for
// the monitor's own namespace), the label ("[ADDR]", "[ROUTE]", "[LINK]",
// "[NEXTHOP]"), "Deleted " for a deletion, then the object on that line
// and on continuation lines that start with white space (iproute2 6.1,
// Debian 12).
type event struct {
	NSID    string // "" (no prefix), "7", "current"
	Label   string // ADDR, ROUTE, LINK, NEXTHOP
	Deleted bool
	// Key is what identifies the object and, for a link, the state the
	// notification reports (for an address, " tentative" while DAD
	// runs; only ip's output is read for it): "198.51.100.1/32 dev 1", "local 198.51.100.1
	// table local", "id 5", "mon0 up state LOWERLAYERDOWN".
	Key string
	// From is the sender's portid as a harness socket saw it in msg_name:
	// 0 for the kernel. ip does not print it, so a monitor's events have 0.
	From uint32
}

func (e event) String() string {
	var b strings.Builder
	if e.NSID != "" {
		fmt.Fprintf(&b, "[nsid %s]", e.NSID)
	}
	fmt.Fprintf(&b, "[%s]", e.Label)
	if e.Deleted {
		b.WriteString("Deleted ")
	}
	b.WriteString(e.Key)
	if e.From != 0 {
		fmt.Fprintf(&b, " (sent by portid %d, not the kernel)", e.From)
	}
	return b.String()
}

// operstates are IFLA_OPERSTATE's values (RFC 2863) as ip prints them
// after "state".
var operstates = []string{"UNKNOWN", "NOTPRESENT", "DOWN", "LOWERLAYERDOWN", "TESTING", "DORMANT", "UP"}

func operstateName(s uint8) string {
	if int(s) < len(operstates) {
		return operstates[s]
	}
	return fmt.Sprintf("operstate %d", s)
}

// linkKey is a link event's key: the name, whether IFF_UP is set, and the
// operstate.
func linkKey(name string, up bool, operstate string) string {
	admin := "down"
	if up {
		admin = "up"
	}
	return fmt.Sprintf("%s %s state %s", name, admin, operstate)
}

// parseIPMonitor reads ip monitor's output lines into events. Lines it
// cannot read are returned as errors, never skipped.
func parseIPMonitor(lines []string) ([]event, []string) {
	var out []event
	var bad []string
	for _, l := range lines {
		if l == "" || l[0] == ' ' || l[0] == '\t' {
			continue // a continuation line of the event before
		}
		e, err := parseIPMonitorLine(l)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%q: %v", l, err))
			continue
		}
		out = append(out, e)
	}
	return out, bad
}

func parseIPMonitorLine(l string) (event, error) {
	var e event
	if rest, ok := strings.CutPrefix(l, "[nsid "); ok {
		id, after, ok := strings.Cut(rest, "]")
		if !ok {
			return e, fmt.Errorf("unterminated [nsid")
		}
		e.NSID, l = id, after
	}
	rest, ok := strings.CutPrefix(l, "[")
	if !ok {
		return e, fmt.Errorf("no [LABEL]")
	}
	e.Label, l, ok = strings.Cut(rest, "]")
	if !ok {
		return e, fmt.Errorf("unterminated [LABEL]")
	}
	l, e.Deleted = strings.CutPrefix(l, "Deleted ")
	f := strings.Fields(l)
	var err error
	switch e.Label {
	case "ADDR": // 1: lo    inet 198.51.100.1/32 scope global lo
		var addr string
		if addr, err = fieldAfter(f, "inet", "inet6"); err == nil {
			e.Key = fmt.Sprintf("%s dev %s", addr, strings.TrimSuffix(f[0], ":"))
		}
		// An IPv6 address is notified tentative when added and again
		// when DAD ends: two notifications, told apart by the flag.
		if slices.Contains(f, "tentative") {
			e.Key += " tentative"
		}
	case "ROUTE": // [TYPE] DST ... [table T] ...
		e.Key, err = ipRouteKey(f)
	case "NEXTHOP": // id 5 blackhole
		var id string
		id, err = fieldAfter(f, "id")
		e.Key = "id " + id
	case "LINK": // 3: va@vb: <FLAGS> mtu 1500 qdisc noop state DOWN ...
		if len(f) < 3 || !strings.HasPrefix(f[2], "<") {
			return e, fmt.Errorf("short link line")
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
		flags := strings.Split(strings.Trim(f[2], "<>"), ",")
		var state string
		state, err = fieldAfter(f, "state")
		e.Key = linkKey(name, slices.Contains(flags, "UP"), state)
	default:
		return e, fmt.Errorf("label %q not monitored", e.Label)
	}
	return e, err
}

func fieldAfter(f []string, words ...string) (string, error) {
	for i := 0; i+1 < len(f); i++ {
		for _, w := range words {
			if f[i] == w {
				return f[i+1], nil
			}
		}
	}
	return "", fmt.Errorf("no %s field", strings.Join(words, "/"))
}

var ipRouteTypes = map[string]bool{"local": true, "broadcast": true, "anycast": true, "multicast": true,
	"blackhole": true, "unreachable": true, "prohibit": true, "throw": true, "unicast": true, "nat": true}

// ipRouteKey is "TYPE DST table TABLE", as ip prints the route: a host
// route without its /32 or /128, table main left out.
func ipRouteKey(f []string) (string, error) {
	if len(f) == 0 {
		return "", fmt.Errorf("empty route")
	}
	typ := "unicast"
	if ipRouteTypes[f[0]] {
		typ, f = f[0], f[1:]
	}
	if len(f) == 0 {
		return "", fmt.Errorf("route without destination")
	}
	table, _ := fieldAfter(f, "table")
	if table == "" {
		table = "main"
	}
	return fmt.Sprintf("%s %s table %s", typ, f[0], table), nil
}

var labels = map[uint16]string{
	unix.RTM_NEWADDR: "ADDR", unix.RTM_DELADDR: "ADDR", unix.RTM_NEWROUTE: "ROUTE", unix.RTM_DELROUTE: "ROUTE",
	unix.RTM_NEWLINK: "LINK", unix.RTM_DELLINK: "LINK", unix.RTM_NEWNEXTHOP: "NEXTHOP", unix.RTM_DELNEXTHOP: "NEXTHOP",
}

var tableNames = map[string]string{"255": "local", "254": "main", "253": "default"}

// messageEvent states a message a harness socket received as ip would
// print it. from is the sender's portid (msg_name), nsid the
// LISTEN_ALL_NSID control message if any. allNSID says whether the
// matching monitor runs with all-nsid: then every event carries the
// source's id, "current" for the monitor's own namespace (a
// LISTEN_ALL_NSID socket gets no id, or NETNSA_NSID_NOT_ASSIGNED, for
// those).
func messageEvent(m netlink.Message, from uint32, nsid *int32, allNSID bool) (event, error) {
	typ := uint16(m.Header.Type)
	label, ok := labels[typ]
	if !ok {
		return event{}, fmt.Errorf("%s: not a monitored type", rtnl.TypeName(typ))
	}
	e := event{Label: label, Deleted: strings.HasPrefix(rtnl.TypeName(typ), "RTM_DEL"), From: from}
	if allNSID {
		e.NSID = "current"
		if nsid != nil && *nsid >= 0 {
			e.NSID = fmt.Sprint(*nsid)
		}
	}
	detail := rtnl.Describe(m)
	f := strings.Fields(detail)
	switch label {
	case "ADDR": // 198.51.100.1/32 dev 1
		if len(f) < 3 {
			return e, fmt.Errorf("address detail %q", detail)
		}
		e.Key = strings.Join(f[:3], " ")
	case "ROUTE": // local 198.51.100.1/32 table 255
		if len(f) < 4 {
			return e, fmt.Errorf("route detail %q", detail)
		}
		dst := f[1]
		if p, err := netip.ParsePrefix(dst); err == nil && p.IsSingleIP() {
			dst = p.Addr().String()
		}
		table := f[3]
		if n, ok := tableNames[table]; ok {
			table = n
		}
		e.Key = fmt.Sprintf("%s %s table %s", f[0], dst, table)
	case "NEXTHOP": // id 5
		e.Key = detail
	case "LINK":
		var lm rtnetlink.LinkMessage
		if err := lm.UnmarshalBinary(m.Data); err != nil {
			return e, fmt.Errorf("link: %v", err)
		}
		if lm.Attributes == nil || lm.Attributes.Name == "" {
			return e, fmt.Errorf("link without name")
		}
		e.Key = linkKey(lm.Attributes.Name, lm.Flags&unix.IFF_UP != 0, operstateName(uint8(lm.Attributes.OperationalState)))
	}
	return e, nil
}

// compareEvents renders want (the expectation) against got (an
// observer) side by side, '!' on each row that differs; "" when equal.
func compareEvents(want, got []event) string {
	n := max(len(want), len(got))
	same := len(want) == len(got)
	rows := make([][2]string, n)
	width := len("expected")
	for i := range n {
		rows[i] = [2]string{"-", "-"}
		if i < len(want) {
			rows[i][0] = want[i].String()
		}
		if i < len(got) {
			rows[i][1] = got[i].String()
		}
		if rows[i][0] != rows[i][1] {
			same = false
		}
		width = max(width, len(rows[i][0]))
	}
	if same {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  %-*s | %s\n", width, "expected", "received")
	for _, r := range rows {
		mark := " "
		if r[0] != r[1] {
			mark = "!"
		}
		fmt.Fprintf(&b, "%s %-*s | %s\n", mark, width, r[0], r[1])
	}
	return strings.TrimRight(b.String(), "\n")
}
