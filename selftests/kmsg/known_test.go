// SPDX-License-Identifier: GPL-2.0

package kmsg

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// offNetlink moves a report out of net/netlink, for a list that may name
// it: the same shape, in af_packet.
var offNetlink = strings.NewReplacer("netlink_", "packet_", "do_one_broadcast", "packet_rcv", "net/netlink/", "net/packet/", "af_netlink", "af_packet")

var (
	offKCSANFingerprint   = offNetlink.Replace(kcsanFingerprint)
	offWarningFingerprint = "WARNING at net/packet/af_packet.c:1500: packet_rcv:packet_broadcast:rtpacket_send"
)

var testList = `# A comment on the file.

# seen on U-kcsan, netlink_mcast_stress fixed0
# and on P-kcsan
` + offKCSANFingerprint + `

` + offWarningFingerprint + `
`

// An entry with a group of alternatives names each fingerprint.
func TestParseKnownAlternatives(t *testing.T) {
	list, refused := parseKnown("# seen twice\nKCSAN data-race: f:g ({read 4|write (marked) 4}) / h:i (write 4)\n")
	want := map[string]string{
		"KCSAN data-race: f:g (read 4) / h:i (write 4)":           "seen twice",
		"KCSAN data-race: f:g (write (marked) 4) / h:i (write 4)": "seen twice",
	}
	if !reflect.DeepEqual(list, want) || len(refused) != 0 {
		t.Errorf("parseKnown = %q, refused %q; want %q", list, refused, want)
	}
}

func TestParseKnown(t *testing.T) {
	got, refused := parseKnown(testList)
	want := map[string]string{
		offKCSANFingerprint:   "seen on U-kcsan, netlink_mcast_stress fixed0 and on P-kcsan",
		offWarningFingerprint: "",
	}
	if !reflect.DeepEqual(got, want) || len(refused) != 0 {
		t.Errorf("parseKnown = %q, refused %q; want %q", got, refused, want)
	}
}

// An entry that would match reports raised in netlink's, rtnetlink's or
// the network namespace's code (a function netlink_functions.txt has,
// whatever its name) is refused, so that a listed report cannot hide a
// new one in the code the series changes or runs on; an entry whose
// refused frames are only below the top two of a KCSAN race's stacks (a
// delivery that ends in pollwake) is not. The refusal names the frame
// and its file.
func TestParseKnownRefusesNetlink(t *testing.T) {
	for fp, why := range map[string]string{
		kcsanFingerprint: "its stack has netlink_getname (net/netlink/af_netlink.c) at frame 1",
		"WARNING at net/netlink/af_netlink.c:1500: do_one_broadcast:netlink_broadcast:rtnetlink_send":                                        "it names net/netlink/af_netlink.c:1500",
		"WARNING at net/netlink/genetlink.c:10: (no stack)":                                                                                  "it names net/netlink/genetlink.c:10",
		"WARNING at include/net/netlink.h:1000: (no stack)":                                                                                  "it names include/net/netlink.h:1000",
		"WARNING at net/core/rtnetlink.c:10: (no stack)":                                                                                     "it names net/core/rtnetlink.c:10",
		"WARNING at lib/refcount.c:28: sock_hold:netlink_broadcast:rtnl_notify":                                                              "its stack has netlink_broadcast (net/netlink/af_netlink.c) at frame 2",
		"KASAN slab-use-after-free: do_one_broadcast:netlink_broadcast_filtered:rtnl_notify":                                                 "its stack has do_one_broadcast (net/netlink/af_netlink.c) at frame 1",
		"lockdep possible circular locking dependency detected [nl_table_lock, &net->nl_mc_lock]: _raw_read_lock:netlink_broadcast_filtered": "it names netlink's lock nl_table_lock",
		"KCSAN data-race: pollwake:__wake_up_common (write 4) / __netlink_sendskb:netlink_broadcast (read 4)":                                "its stack has __netlink_sendskb (net/netlink/af_netlink.c) at frame 1",
		"lockdep possible circular locking dependency detected [&nlk->cb_mutex, rtnl_mutex]: mutex_lock:rtnl_lock":                           "it names netlink's lock &nlk->cb_mutex",
		"lockdep suspicious RCU usage [net/netlink/af_netlink.c:1521]: (no stack)":                                                           "it names net/netlink/af_netlink.c:1521",
		// Issue 32's three, which names alone let through: af_netlink.c's
		// nlmsg_notify and __nlmsg_put, rtnetlink.c's rtnl_notify.
		"KASAN slab-use-after-free: nlmsg_notify:rtnl_notify:inet6_rt_notify:fib6_add_rt2node:fib6_add":                 "its stack has nlmsg_notify (net/netlink/af_netlink.c) at frame 1",
		"KASAN slab-out-of-bounds: __nlmsg_put:rtnl_fill_ifinfo:rtmsg_ifinfo_build_skb:rtmsg_ifinfo_event:rtmsg_ifinfo": "its stack has __nlmsg_put (net/netlink/af_netlink.c) at frame 1",
		"refcount underflow: rtnl_notify:rtmsg_ifinfo_send:rtmsg_ifinfo_event:rtmsg_ifinfo:__dev_notify_flags":          "its stack has rtnl_notify (net/core/rtnetlink.c) at frame 1",
		// rtnl_lock is rtnetlink.c's: a lockdep report taking rtnl_mutex there.
		"lockdep possible circular locking dependency detected [rtnl_mutex, &dev->mutex]: mutex_lock:rtnl_lock": "its stack has rtnl_lock (net/core/rtnetlink.c) at frame 2",
		// An inline of include/net/netlink.h, the namespace's put_net.
		"KASAN slab-out-of-bounds: nla_put_u32:inet6_fill_ifaddr": "its stack has nla_put_u32 (include/net/netlink.h) at frame 1",
		"refcount underflow: put_net:sk_destruct:__sk_free":       "its stack has put_net (include/net/net_namespace.h) at frame 1",
		// Outside KCSAN every frame of the fingerprint counts: skb_put's
		// check fires on the length __nlmsg_put gave it.
		"BUG at net/core/skbuff.c:113: skb_panic:skb_put:__nlmsg_put:rtnl_fill_ifinfo:rtmsg_ifinfo_build_skb": "its stack has __nlmsg_put (net/netlink/af_netlink.c) at frame 3",
		"WARNING at lib/refcount.c:28: refcount_dec:sk_free:sk_destruct:__sk_free:cleanup_net":                "its stack has cleanup_net (net/core/net_namespace.c) at frame 5",
		// A function the series adds.
		"WARNING at lib/list_debug.c:10: __list_del_entry:hlist_del_init:netlink_route_mc_update": "its stack has netlink_route_mc_update (net/netlink/af_netlink.c) at frame 3",
	} {
		list, refused := parseKnown("# seen somewhere\n" + fp + "\n")
		want := "known_reports.txt: " + strconv.Quote(fp) + " refused: " + why + ", so it would hide a report in netlink's, rtnetlink's or the network namespace's code"
		if len(list) != 0 || !reflect.DeepEqual(refused, []string{want}) {
			t.Errorf("%q: list %q, refused %q; want it refused:\n%s", fp, list, refused, want)
		}
	}
	for _, fp := range []string{
		"KCSAN data-race: do_nanosleep:hrtimer_nanosleep (read 8) / hrtimer_wakeup:__hrtimer_run_queues (write 8)",
		"KCSAN data-race: poll_schedule_timeout:do_sys_poll (write 4) / pollwake:__wake_up_common:__wake_up_common_lock:sock_def_readable:__netlink_sendskb (write 4)",
		"KCSAN data-race: poll_schedule_timeout:do_sys_poll (write 4) / pollwake:__wake_up_common:nlmsg_notify (write 4)",
		"WARNING at net/core/dev.c:10: dev_close:unregister_netdevice",
		"lockdep possible circular locking dependency detected [&dev->mutex, &mm->mmap_lock]: mutex_lock:device_del",
		// Names that the old name patterns took, none of these files'.
		// (netfilter's and xfrm's netlink families, net/netfilter/nfnetlink.c
		// and net/xfrm/xfrm_user.c).
		"KASAN slab-use-after-free: nfnetlink_rcv_msg:nfnetlink_rcv_batch",
		"WARNING at net/xfrm/xfrm_user.c:10: xfrm_netlink_rcv:xfrm_user_rcv_msg",
	} {
		if list, refused := parseKnown("# seen somewhere\n" + fp + "\n"); len(list) != 1 || len(refused) != 0 {
			t.Errorf("%q: refused %q, want it listed", fp, refused)
		}
	}
	// The program says a refused entry once, at its first sift.
	s := &sifter{}
	s.list, s.refused = parseKnown(testList + "\n" + kcsanFingerprint + "\n")
	var said []string
	diag := func(format string, args ...any) { said = append(said, fmt.Sprintf(format, args...)) }
	s.sift(nil, diag)
	s.sift(nil, diag)
	if len(said) != 1 || !strings.Contains(said[0], kcsanFingerprint) {
		t.Errorf("said %q, want the refused entry once", said)
	}
}

// sift runs a sifter with list over batches of reports and returns what
// it let through and what it printed, per batch.
func sift(list string, batches ...[]Report) (fresh [][]Report, notes [][]string) {
	l, _ := parseKnown(list)
	s := &sifter{list: l}
	for _, b := range batches {
		var n []string
		fresh = append(fresh, s.sift(b, func(format string, args ...any) { n = append(n, fmt.Sprintf(format, args...)) }))
		notes = append(notes, n)
	}
	return fresh, notes
}

func scanOne(t *testing.T, text string) Report {
	t.Helper()
	r := Scan(lines(text))
	if len(r) != 1 {
		t.Fatalf("Scan found %d reports, want 1", len(r))
	}
	return r[0]
}

func TestSift(t *testing.T) {
	race := scanOne(t, offNetlink.Replace(kcsanSplat))
	swapped := scanOne(t, offNetlink.Replace(kcsanSplatSwapped))
	warning := scanOne(t, offNetlink.Replace(warningSplat))
	// A look-alike: the same title and first stack, another caller in
	// the second.
	lookAlike := scanOne(t, offNetlink.Replace(strings.Replace(kcsanSplat, "__sys_getsockname+0xa7/0x130", "__sys_getpeername+0xa7/0x130", 1)))
	// The same WARN at another line of the same file is another bug.
	otherLine := scanOne(t, offNetlink.Replace(strings.Replace(warningSplat, "af_netlink.c:1500", "af_netlink.c:1507", 1)))
	kasan := scanOne(t, offNetlink.Replace(kasanModuleSplat))
	taintW := TaintReports(0, 1<<9)
	taintB := TaintReports(1<<9, 1<<9|1<<5)

	fresh, notes := sift(testList,
		[]Report{race, swapped, lookAlike},
		[]Report{warning},
		taintW, // the WARNING's taint bit, logged after it: known
		append([]Report{kasan}, taintB...),
		[]Report{otherLine},
	)
	want := [][]Report{{lookAlike}, nil, nil, {kasan, taintB[0]}, {otherLine}}
	if !reflect.DeepEqual(fresh, want) {
		t.Errorf("let through\n%q\nwant\n%q", fresh, want)
	}
	title := offNetlink.Replace("BUG: KCSAN: data-race in netlink_getname / netlink_insert")
	wantNotes := [][]string{
		{
			`known kernel report (not the series'): ` + title + `; fingerprint "` + offKCSANFingerprint + `"; seen on U-kcsan, netlink_mcast_stress fixed0 and on P-kcsan`,
			`known kernel report (not the series'): ` + title + `; fingerprint "` + offKCSANFingerprint + `"; seen on U-kcsan, netlink_mcast_stress fixed0 and on P-kcsan`,
			`new kernel report (not in the known list): ` + title + `; fingerprint "` + strings.Replace(offKCSANFingerprint, "__sys_getsockname", "__sys_getpeername", 1) + `"`,
		},
		{`known kernel report (not the series'): WARNING: CPU: 0 PID: 97 at net/packet/af_packet.c:1500 packet_rcv+0x3c2/0x3e0; fingerprint "` + offWarningFingerprint + `"`},
		{`known kernel report (not the series'): taint: W (warning), set by a known report`},
		{`new kernel report (not in the known list): BUG: KASAN: use-after-free in packet_rcv+0x5a1/0x5f0; fingerprint "KASAN use-after-free: packet_rcv:packet_broadcast_filtered:vxlan_fdb_notify:rtnl_notify"`},
		{`new kernel report (not in the known list): WARNING: CPU: 0 PID: 97 at net/packet/af_packet.c:1507 packet_rcv+0x3c2/0x3e0; fingerprint "` + strings.Replace(offWarningFingerprint, "1500", "1507", 1) + `"`},
	}
	if !reflect.DeepEqual(notes, wantNotes) {
		t.Errorf("printed\n%s\nwant\n%s", join(notes), join(wantNotes))
	}

	// Without a known report, a taint bit is new.
	fresh, _ = sift(testList, taintW)
	if !reflect.DeepEqual(fresh, [][]Report{taintW}) {
		t.Errorf("a taint bit alone was let through as %q", fresh)
	}
	// With an empty list, every report is new.
	fresh, _ = sift("", []Report{race, warning})
	if len(fresh[0]) != 2 {
		t.Errorf("with no known reports, %d of 2 new", len(fresh[0]))
	}
}

func join(n [][]string) string {
	var b strings.Builder
	for _, batch := range n {
		b.WriteString("  --\n")
		for _, l := range batch {
			b.WriteString("  " + l + "\n")
		}
	}
	return b.String()
}

// The list built into the programs: every entry is a fingerprint as
// Fingerprint makes them, and says where it was seen.
func TestKnownReportsFile(t *testing.T) {
	shape := regexp.MustCompile(`^(taint \S+|(KCSAN|KASAN|UBSAN|lockdep|BUG|WARNING|refcount|list corruption|RCU stall|Oops|panic|lockup|hung task|kmemleak)( [^:]+)?( at \S+:\d+)?( \[[^]]+\])?: \S.*)$`)
	if len(refused) != 0 {
		t.Errorf("known_reports.txt has entries that would hide reports in netlink's, rtnetlink's or the network namespace's code:\n%s", strings.Join(refused, "\n"))
	}
	// Every entry is the fingerprint of a report in testdata (the raw
	// report it was taken from), so that the list follows a change to
	// Fingerprint instead of drifting from it.
	fromTestdata := map[string]string{}
	files, _ := filepath.Glob("testdata/*.txt")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range Scan(lines(string(data))) {
			fromTestdata[r.Fingerprint()] = f
		}
	}
	seen := map[string]bool{}
	for _, l := range strings.Split(knownReports, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if seen[l] {
			t.Errorf("known_reports.txt: %q twice", l)
		}
		seen[l] = true
		// An entry with alternatives is backed by a raw report for one
		// of them at least; its comment says where the others were seen.
		backed := false
		for _, fp := range expandKnown(l) {
			if !shape.MatchString(fp) {
				t.Errorf("known_reports.txt: %q is not a fingerprint", fp)
			}
			if known[fp] == "" {
				t.Errorf("known_reports.txt: %q has no comment saying where it was seen", fp)
			}
			if f, ok := fromTestdata[fp]; ok {
				backed = true
				if !strings.Contains(known[fp], f) {
					t.Errorf("known_reports.txt: %q: its comment does not name %s, the report it is", fp, f)
				}
			}
		}
		if !backed {
			t.Errorf("known_reports.txt: %q is the fingerprint of no report in testdata/", l)
		}
	}
}

// The reports the unpatched builds gave, as their consoles showed them
// (testdata/u-*), are known, and so is the same bug on the patched build
// (testdata/p-*: other addresses, tasks, CPUs); they stay known when they
// come through the kernel log; one frame changed makes a report new.
func TestBaselineIsKnown(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no captured reports in testdata: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.TrimRight(string(data), "\n")
		r := scanOne(t, text)
		if why, ok := Known(r); !ok || why == "" {
			t.Errorf("%s: %s not known (fingerprint %q)", f, r, r.Fingerprint())
		}
		var plain []string
		for _, l := range lines(text) {
			plain = append(plain, StripPrefix(l))
		}
		if got := scanOne(t, strings.Join(plain, "\n")).Fingerprint(); got != r.Fingerprint() {
			t.Errorf("%s: without the console's prefixes, fingerprint %q, want %q", f, got, r.Fingerprint())
		}
		if len(r.Stacks) == 0 || len(r.Stacks[0]) < 2 {
			t.Fatalf("%s: stacks %q", f, r.Stacks)
		}
		caller := r.Stacks[0][1]
		lookAlike := scanOne(t, strings.Replace(text, " "+caller, " other_"+caller, 1))
		if _, ok := Known(lookAlike); ok {
			t.Errorf("%s: with %s renamed, still known: %q", f, caller, lookAlike.Fingerprint())
		}
	}
}

// The read of pwq->triggered that P-kcsan reported in CI on 2026-12-04, as
// vmtest printed its fingerprint there, is known with the clear.
func TestKnownPollRaceRead(t *testing.T) {
	const ci = "KCSAN data-race: poll_schedule_timeout:do_sys_poll:__x64_sys_ppoll:x64_sys_call:do_syscall_64 (read 4) / pollwake:__wake_up_common:__wake_up_common_lock:sock_def_readable:__netlink_sendskb (write 4)"
	if why := known[ci]; !strings.Contains(why, "in CI on 2026-12-04") {
		t.Errorf("%q: known as %q, want the entry that names CI's report", ci, why)
	}
}

// nlmsgNotifySplat is a KASAN report raised in af_netlink.c's
// nlmsg_notify, a name none of the old name patterns took.
const nlmsgNotifySplat = `==================================================================
BUG: KASAN: slab-use-after-free in nlmsg_notify+0x1c2/0x1d0
Read of size 4 at addr ffff88800a6c3b10 by task netlink_mcast_s/112

CPU: 1 PID: 112 Comm: netlink_mcast_s Not tainted 6.12.118 #1
Hardware name: QEMU Standard PC (i440FX + PIIX, 1996)
Call Trace:
 <TASK>
 dump_stack_lvl+0x5b/0x77
 print_report+0x16c/0x4a0
 ? nlmsg_notify+0x1c2/0x1d0
 kasan_report+0xb1/0xe0
 nlmsg_notify+0x1c2/0x1d0
 rtnl_notify+0x8a/0xb0
 rtmsg_ifinfo_send+0x31/0x50
 rtmsg_ifinfo_event.part.0+0x6b/0x90
 rtmsg_ifinfo+0x5e/0x70
 __dev_notify_flags+0x8d/0x240
 </TASK>
==================================================================`

// Issue 32's check: a KASAN report in nlmsg_notify, its fingerprint
// planted in the known list, is refused there and fails the case as a
// new report.
func TestPlantedNlmsgNotifyEntryRefused(t *testing.T) {
	r := scanOne(t, nlmsgNotifySplat)
	const fp = "KASAN slab-use-after-free: nlmsg_notify:rtnl_notify:rtmsg_ifinfo_send:rtmsg_ifinfo_event:rtmsg_ifinfo"
	if got := r.Fingerprint(); got != fp {
		t.Fatalf("fingerprint %q, want %q", got, fp)
	}
	list, refused := parseKnown("# planted\n" + fp + "\n")
	if len(list) != 0 || len(refused) != 1 || !strings.Contains(refused[0], "its stack has nlmsg_notify (net/netlink/af_netlink.c) at frame 1") {
		t.Errorf("planted entry: list %q, refused %q; want it refused, naming nlmsg_notify and af_netlink.c", list, refused)
	}
	fresh, notes := sift("# planted\n"+fp+"\n", []Report{r})
	if len(fresh[0]) != 1 || len(notes[0]) != 1 || !strings.HasPrefix(notes[0][0], "new kernel report (not in the known list): ") {
		t.Errorf("sift let through %q, said %q; want the report new", fresh, notes)
	}
}
