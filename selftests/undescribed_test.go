// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"os"
	"strings"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// A type without a description (RTM_NEWRULE has none) keeps its payload
// in the transcript, and two payloads that differ never match.
func TestUndescribedPayloadComparedByteForByte(t *testing.T) {
	if rtnl.Describes(unix.RTM_NEWRULE) {
		t.Fatal("RTM_NEWRULE is described now: pick a type without a description for this test")
	}
	rule := func(payload ...byte) []Line {
		return lines(nlsock.Datagram{Msgs: []netlink.Message{{
			Header: netlink.Header{Type: unix.RTM_NEWRULE}, Data: payload}}})
	}
	a, b := rule(2, 32, 0, 0), rule(2, 24, 0, 0)
	if d := DiffLines(a, b); d == "" {
		t.Errorf("two RTM_NEWRULE with different payloads match:\n%v\n%v", a, b)
	}
	if d := DiffLines(a, rule(2, 32, 0, 0)); d != "" {
		t.Errorf("equal payloads differ:\n%s", d)
	}
	if !strings.Contains(a[0].String(), "[payload 02200000]") {
		t.Errorf("row %q does not show the payload", a[0])
	}

	want := Msg{Type: unix.RTM_NEWRULE}.Payload([]byte{2, 32, 0, 0}).line(&nlsock.Socket{})
	if !a[0].matches(want) || b[0].matches(want) {
		t.Errorf("Payload(02200000) matches %v: %v, %v: %v; want only the first", a[0], a[0].matches(want), b[0], b[0].matches(want))
	}
	// Payload(nil) is an empty payload, and nothing else.
	none := Msg{Type: unix.RTM_NEWRULE}.Payload(nil).line(&nlsock.Socket{})
	if !rule()[0].matches(none) || a[0].matches(none) {
		t.Errorf("Payload(nil) must match an empty payload only")
	}
}

// An expected message of a type without a description and without a
// Payload matches nothing, and says which description is missing; so does
// a Payload for a type that has one.
func TestUndescribedExpectationIsRefused(t *testing.T) {
	got := lines(nlsock.Datagram{Msgs: []netlink.Message{{Header: netlink.Header{Type: unix.RTM_NEWRULE}, Data: []byte{2}}}})
	for _, tc := range []struct {
		m    Msg
		says string
	}{
		{Notification(unix.RTM_NEWRULE, unix.RTNLGRP_IPV4_RULE, ""), "RTM_NEWRULE has no description in selftests/rtnl/describe.go"},
		{Notification(unix.RTM_NEWRULE, unix.RTNLGRP_IPV4_RULE, "payload 02"), "RTM_NEWRULE has no description"},
		{Notification(unix.RTM_NEWRULE, unix.RTNLGRP_IPV4_RULE, "payload 02").Payload([]byte{2}), "its Detail is made from its Payload"},
		{Msg{Type: unix.RTM_NEWADDR}.Payload([]byte{2}), "RTM_NEWADDR is described by rtnl.Describe"},
	} {
		l := tc.m.line(&nlsock.Socket{})
		if !strings.Contains(l.invalid, tc.says) {
			t.Errorf("%+v: invalid = %q, want it to say %q", tc.m, l.invalid, tc.says)
		}
		if got[0].matches(l) || l.matches(l) {
			t.Errorf("%+v matches", tc.m)
		}
		if d := diff([]Line{l}, got); !strings.Contains(d, "cannot be judged") {
			t.Errorf("diff does not mark the row:\n%s", d)
		}
	}
}

func TestRawDetail(t *testing.T) {
	long := make([]byte, 1024)
	other := append([]byte{}, long...)
	other[1000] = 1
	for _, tc := range []struct {
		b    []byte
		want string
	}{
		{nil, ""},
		{[]byte{0xa, 0xb}, "payload 0a0b"},
		{long[:16], "payload 00000000000000000000000000000000"},
		{long, "payload 1024 bytes sha256 5f70bf18a0860070"},
	} {
		if got := rtnl.RawDetail(tc.b); got != tc.want {
			t.Errorf("RawDetail(%d bytes) = %q, want %q", len(tc.b), got, tc.want)
		}
	}
	if rtnl.RawDetail(long) == rtnl.RawDetail(other) {
		t.Error("two long payloads that differ look the same")
	}
}

// End to end: a user multicast of an RTM_NEWRULE (the kernel ignores it,
// it has no NLM_F_REQUEST) reaches a subscriber of group 1, and only the
// expectation with its exact payload passes.
func TestExpectUndescribedType(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates a network namespace")
	}
	payload := []byte{unix.AF_INET, 32, 0, 0, 0, 0, 0, 0}
	for _, tc := range []struct {
		name  string
		want  func(m Msg) Msg
		fails []string
	}{
		{"exact payload", func(m Msg) Msg { return m.Payload(payload) }, nil},
		{"no payload", func(m Msg) Msg { return m },
			[]string{"expected message 1 of 1: RTM_NEWRULE has no description in selftests/rtnl/describe.go",
				"! RTM_NEWRULE (cannot be judged: see above)", "[payload 0220000000000000]"}},
		{"other payload", func(m Msg) Msg { return m.Payload(payload[:4]) },
			[]string{"unexpected transcript", "[payload 02200000]", "[payload 0220000000000000]"}},
	} {
		s := Suite{Name: "prog", Cases: []Case{{Name: "rule", Run: func(t T) {
			n := NewNS(t, "S")
			rx := n.Socket("rx", BindGroups(nlsock.GroupMask(1)))
			tx := n.Socket("tx")
			seq := rtnl.NextSeq()
			m := netlink.Message{Header: netlink.Header{Type: unix.RTM_NEWRULE, Sequence: seq, PID: tx.Portid()}, Data: payload}
			if err := tx.SendTo(m, 0, nlsock.GroupMask(1)); err != nil {
				t.Fatalf("%v", err)
			}
			rx.Expect(tc.want(Msg{Type: unix.RTM_NEWRULE, Seq: seq, Pid: tx.Portid(), Group: 1, FromPid: tx.Portid()}))
		}}}}
		var out strings.Builder
		code := Run(s, nil, &out, &strings.Builder{})
		if (code == 0) != (tc.fails == nil) {
			t.Errorf("%s: exit %d:\n%s", tc.name, code, out.String())
		}
		expectOutput(t, out.String(), tc.fails...)
	}
}
