// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// dumpPartCap is the most a dump part can hold however large the reader's
// buffer: netlink_recvmsg() records at most SKB_WITH_OVERHEAD(32768), a
// little less than this.
const dumpPartCap = 32768

// dumpPartsFollowReaderBuffer: a dump's parts grow to the reader's
// buffer, up to 32 KiB. A socket that never read makes its first part at
// the request, one page at most (NLMSG_GOODSIZE); a read with a 32 KiB
// buffer makes the next part larger than a page, where the kernel can
// give the order-3 block for it without sleeping (the allocation may
// not reclaim, and falls back to a page: so that is asserted only where
// /proc/zoneinfo and /proc/buddyinfo show such blocks to spare before and
// after); a read with a 1 MiB buffer makes no part larger than 32 KiB.
// Every reader gets every address, once, in order.
//
// Kernel: netlink_recvmsg(): max_recvmsg_len = max(READ_ONCE(nlk->
// max_recvmsg_len), len); max_recvmsg_len = min_t(size_t,
// max_recvmsg_len, SKB_WITH_OVERHEAD(32768)); WRITE_ONCE(nlk->
// max_recvmsg_len, max_recvmsg_len); netlink_dump(): if (alloc_min_size <
// max_recvmsg_len) skb = alloc_skb(max_recvmsg_len, (GFP_KERNEL &
// ~__GFP_DIRECT_RECLAIM) | __GFP_NOWARN | __GFP_NORETRY); if (!skb) ...
// alloc_skb(alloc_min_size, GFP_KERNEL); skb_reserve(skb,
// skb_tailroom(skb) - alloc_size).
func dumpPartsFollowReaderBuffer(t selftests.T) {
	s := selftests.NewNS(t, "S")
	// About 80 bytes an address: enough for more than 32 KiB after the
	// first part.
	const n = 560
	for i := range n {
		s.Do(rtnl.NewAddr(rtnl.LoopbackIndex, netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 78, byte(i >> 8), byte(i)}), 32)))
	}
	want := len(mustDumpAddrs(t, dumpConn(t, s, false), nil))
	if want < n {
		t.Fatalf("netns S: the reference dump lists %d addresses, want the %d added and lo's own", want, n)
	}
	page := min(os.Getpagesize(), 8192)

	r := s.Socket("r32k")
	req := startDump(t, r)
	before, spare := orderThreeToSpare()
	parts := readDumpParts(t, r, req.Header.Sequence, 32768, want)
	after, spareAfter := orderThreeToSpare()
	if len(parts) < 3 {
		t.Fatalf("%s: %d addresses in %d parts (%v bytes), want 3 or more: the first, one of up to 32 KiB, the rest", r, want, len(parts), parts)
	}
	if parts[0] > page {
		t.Errorf("%s: the first part, made at the request before any read, is %d bytes: more than NLMSG_GOODSIZE (under %d)", r, parts[0], page)
	}
	switch {
	case parts[1] > dumpPartCap:
		t.Errorf("%s: the part made by a read with a 32 KiB buffer is %d bytes, more than 32 KiB", r, parts[1])
	case parts[1] > page:
	case spare && spareAfter:
		t.Errorf("%s: the part made by a read with a 32 KiB buffer is %d bytes, no more than NLMSG_GOODSIZE (under %d), with order-3 blocks to spare before and after (%s; %s): the dump did not follow the reader's buffer",
			r, parts[1], page, before, after)
	default:
		t.Logf("%s: the part after a 32 KiB read is %d bytes, not above a page; no order-3 block to spare (%s; %s), so the kernel may have fallen back to a page", r, parts[1], before, after)
	}

	big := s.Socket("r1m")
	req = startDump(t, big)
	parts = readDumpParts(t, big, req.Header.Sequence, 1<<20, want)
	for i, p := range parts {
		if p > dumpPartCap {
			t.Errorf("%s: part %d of %d is %d bytes after reads with a 1 MiB buffer, more than 32 KiB", big, i+1, len(parts), p)
		}
	}
	if selftests.Verbose() {
		t.Logf("%d addresses: parts of %v bytes to 1 MiB reads; order-3 blocks before the 32 KiB reads: %s", want, parts, before)
	}
}

// readDumpParts reads an RTM_GETADDR dump on k with seq, each datagram
// with a buffer of bufSize bytes, and returns each part's length. The
// dump must list want addresses, then NLMSG_DONE, nothing truncated.
func readDumpParts(t selftests.T, k *selftests.Sock, seq uint32, bufSize, want int) []int {
	t.Helper()
	buf := make([]byte, bufSize)
	var parts []int
	addrs := 0
	for {
		n, flags, err := k.RecvInto(buf, 0)
		if errors.Is(err, unix.EAGAIN) {
			t.Fatalf("%s: the dump stopped after %d parts and %d addresses, without NLMSG_DONE", k, len(parts), addrs)
		}
		if err != nil {
			t.Fatalf("%s: reading part %d of the dump: %v", k, len(parts)+1, err)
		}
		if flags&unix.MSG_TRUNC != 0 {
			t.Fatalf("%s: part %d of the dump is larger than the %d-byte buffer", k, len(parts)+1, bufSize)
		}
		parts = append(parts, n)
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			t.Fatalf("%s: part %d: %v", k, len(parts), err)
		}
		for _, m := range msgs {
			switch {
			case m.Header.Seq != seq:
				t.Fatalf("%s: part %d: a message with seq %d, want %d", k, len(parts), m.Header.Seq, seq)
			case m.Header.Type == unix.NLMSG_DONE:
				if addrs != want {
					t.Errorf("%s: the dump listed %d addresses, want %d", k, addrs, want)
				}
				return parts
			case m.Header.Type == unix.RTM_NEWADDR:
				addrs++
			default:
				t.Fatalf("%s: part %d: message type %d in an address dump", k, len(parts), m.Header.Type)
			}
		}
	}
}

// orderThreeToSpare says whether some zone has free blocks of order 3 or
// more to spare for an allocation that may not reclaim: 16 such blocks,
// and 1024 free pages above its low watermark and its largest lowmem
// reserve, so that none of the usual allocations between two reads of
// /proc can take them all. It returns what it saw.
func orderThreeToSpare() (string, bool) {
	zi, err1 := os.ReadFile("/proc/zoneinfo")
	bi, err2 := os.ReadFile("/proc/buddyinfo")
	if err := errors.Join(err1, err2); err != nil {
		return err.Error(), false
	}
	zones := parseZoneinfo(string(zi))
	var seen []string
	ok := false
	for _, b := range parseBuddyinfo(string(bi)) {
		z, found := zones[b.node+"/"+b.zone]
		if !found {
			continue
		}
		blocks := 0
		for order := 3; order < len(b.free); order++ {
			blocks += b.free[order]
		}
		headroom := z.free - z.low - z.reserve
		seen = append(seen, fmt.Sprintf("node %s %s: %d blocks of order 3+, %d pages above low and reserve", b.node, b.zone, blocks, headroom))
		if blocks >= 16 && headroom >= 1024 {
			ok = true
		}
	}
	return strings.Join(seen, ", "), ok
}

// zone is what /proc/zoneinfo says of a zone, in pages.
type zone struct{ free, low, reserve int }

// parseZoneinfo reads /proc/zoneinfo's zones ("Node 0, zone DMA32", then
// "pages free N", "low N", "protection: (0, 1, ...)"), keyed "0/DMA32".
func parseZoneinfo(text string) map[string]zone {
	out := map[string]zone{}
	key := ""
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(strings.ReplaceAll(l, ",", " "))
		switch {
		case len(f) == 4 && f[0] == "Node" && f[2] == "zone":
			key = f[1] + "/" + f[3]
			out[key] = zone{}
		case key == "":
		case len(f) == 3 && f[0] == "pages" && f[1] == "free":
			z := out[key]
			z.free, _ = strconv.Atoi(f[2])
			out[key] = z
		case len(f) == 2 && f[0] == "low":
			z := out[key]
			z.low, _ = strconv.Atoi(f[1])
			out[key] = z
		case len(f) > 1 && f[0] == "protection:":
			z := out[key]
			for _, v := range f[1:] {
				n, _ := strconv.Atoi(strings.Trim(v, "()"))
				z.reserve = max(z.reserve, n)
			}
			out[key] = z
		}
	}
	return out
}

// buddyZone is one line of /proc/buddyinfo: free blocks by order.
type buddyZone struct {
	node, zone string
	free       []int
}

// parseBuddyinfo reads "Node 0, zone   Normal   12   8 ..." lines.
func parseBuddyinfo(text string) []buddyZone {
	var out []buddyZone
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(strings.ReplaceAll(l, ",", " "))
		if len(f) < 5 || f[0] != "Node" || f[2] != "zone" {
			continue
		}
		b := buddyZone{node: f[1], zone: f[3]}
		for _, v := range f[4:] {
			n, err := strconv.Atoi(v)
			if err != nil {
				break
			}
			b.free = append(b.free, n)
		}
		out = append(out, b)
	}
	return out
}
