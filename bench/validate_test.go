// SPDX-License-Identifier: GPL-2.0

package main

import (
	"encoding/binary"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"nlmcast/selftests/rtnl"
)

// notification builds the RTM_NEWROUTE a recipient gets for route i.
func notification(typ uint16, seq, pid uint32, dst [4]byte, nh uint32) []byte {
	rt := []byte{unix.AF_INET, 24, 0, 0, unix.RT_TABLE_MAIN, unix.RTPROT_STATIC, 0, unix.RTN_UNICAST, 0, 0, 0, 0}
	attr := func(t uint16, v []byte) []byte {
		a := make([]byte, 4, 8)
		binary.NativeEndian.PutUint16(a, uint16(4+len(v)))
		binary.NativeEndian.PutUint16(a[2:], t)
		return append(a, v...)
	}
	nhb := binary.NativeEndian.AppendUint32(nil, nh)
	body := append(append(rt, attr(unix.RTA_DST, dst[:])...), attr(rtnl.RTA_NH_ID, nhb)...)
	h := make([]byte, unix.NLMSG_HDRLEN)
	binary.NativeEndian.PutUint32(h, uint32(len(h)+len(body)))
	binary.NativeEndian.PutUint16(h[4:], typ)
	binary.NativeEndian.PutUint32(h[8:], seq)
	binary.NativeEndian.PutUint32(h[12:], pid)
	return append(h, body...)
}

func newValidator(routes int) *validator {
	v := &validator{routes: routes, base: 100, parity: 1, seen: make([]bool, routes), portid: 42, nsid: -1}
	for i := 0; i < routes; i++ {
		v.dsts = append(v.dsts, routePrefix(i).Addr().As4())
	}
	return v
}

// Every fault the drain must catch, injected into an otherwise correct
// stream of four notifications.
func TestValidatorCatchesEachFault(t *testing.T) {
	good := func(i int) []byte {
		return notification(unix.RTM_NEWROUTE, 100+uint32(i), 42, routePrefix(i).Addr().As4(), nexthopFor(i, 1))
	}
	v := newValidator(4)
	for i := 0; i < 4; i++ {
		if err := v.datagram(good(i)); err != nil {
			t.Fatalf("correct notification %d refused: %v", i, err)
		}
	}
	if v.count != 4 {
		t.Fatalf("count %d, want 4", v.count)
	}
	faults := map[string]struct {
		msg  []byte
		want string
	}{
		"duplicate":     {good(0), "duplicate"},
		"wrong type":    {notification(unix.RTM_DELROUTE, 100, 42, routePrefix(0).Addr().As4(), nexthopFor(0, 1)), "type"},
		"foreign seq":   {notification(unix.RTM_NEWROUTE, 7, 42, routePrefix(0).Addr().As4(), nexthopFor(0, 1)), "outside the batch"},
		"wrong sender":  {notification(unix.RTM_NEWROUTE, 100, 43, routePrefix(0).Addr().As4(), nexthopFor(0, 1)), "nlmsg_pid"},
		"wrong prefix":  {notification(unix.RTM_NEWROUTE, 101, 42, routePrefix(2).Addr().As4(), nexthopFor(1, 1)), "RTA_DST"},
		"wrong nexthop": {notification(unix.RTM_NEWROUTE, 101, 42, routePrefix(1).Addr().As4(), nexthopFor(1, 0)), "RTA_NH_ID"},
		"truncated":     {good(1)[:20], "out of range"},
	}
	for name, f := range faults {
		v := newValidator(4)
		if name == "duplicate" {
			v.datagram(good(0))
		}
		err := v.datagram(f.msg)
		if err == nil || !strings.Contains(err.Error(), f.want) {
			t.Errorf("%s: got %v, want an error about %q", name, err, f.want)
		}
	}
}

func TestValidatorChecksNSID(t *testing.T) {
	v := newValidator(1)
	v.nsid = 7
	cmsg := func(id int32) []byte {
		b := make([]byte, unix.CmsgSpace(4))
		h := (*unix.Cmsghdr)(unsafePointer(b))
		h.Level, h.Type = unix.SOL_NETLINK, unix.NETLINK_LISTEN_ALL_NSID
		h.SetLen(unix.CmsgLen(4))
		binary.NativeEndian.PutUint32(b[unix.CmsgLen(0):], uint32(id))
		return b
	}
	if err := v.checkNSID(cmsg(7)); err != nil {
		t.Errorf("nsid 7 refused: %v", err)
	}
	if err := v.checkNSID(cmsg(3)); err == nil {
		t.Error("nsid 3 accepted, want 7")
	}
	if err := v.checkNSID(nil); err == nil {
		t.Error("no nsid accepted")
	}
	pktinfo := cmsg(5)
	(*unix.Cmsghdr)(unsafePointer(pktinfo)).Type = unix.NETLINK_PKTINFO
	if err := v.checkNSID(append(pktinfo, cmsg(7)...)); err != nil {
		t.Errorf("nsid 7 after a PKTINFO refused: %v", err)
	}
	bad := cmsg(7)
	(*unix.Cmsghdr)(unsafePointer(bad)).SetLen(len(bad) + 1)
	if err := v.checkNSID(bad); err == nil {
		t.Error("control message longer than the buffer accepted")
	}
}

// The drain validates every notification: it must not allocate.
func TestValidatorDoesNotAllocate(t *testing.T) {
	v := newValidator(1)
	v.nsid = 7
	oob := make([]byte, unix.CmsgSpace(4))
	h := (*unix.Cmsghdr)(unsafePointer(oob))
	h.Level, h.Type = unix.SOL_NETLINK, unix.NETLINK_LISTEN_ALL_NSID
	h.SetLen(unix.CmsgLen(4))
	binary.NativeEndian.PutUint32(oob[unix.CmsgLen(0):], 7)
	n := notification(unix.RTM_NEWROUTE, 100, 42, v.dsts[0], nexthopFor(0, 1))
	allocs := testing.AllocsPerRun(100, func() {
		v.count, v.seen[0] = 0, false
		if err := v.checkNSID(oob); err != nil {
			t.Fatal(err)
		}
		if err := v.datagram(n); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("validating one notification allocates %.0f times, want 0", allocs)
	}
}

func TestNexthopsAlternate(t *testing.T) {
	for i := 0; i < 4; i++ {
		if nexthopFor(i, 0) == nexthopFor(i, 1) {
			t.Errorf("route %d keeps nexthop %d from one batch to the next: no notification", i, nexthopFor(i, 0))
		}
	}
}
