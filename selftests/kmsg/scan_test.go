// SPDX-License-Identifier: GPL-2.0

package kmsg

import (
	"reflect"
	"strings"
	"testing"
)

// Captured-style console text. The splats follow the kernel's formats
// (6.1 and 6.12); addresses and offsets are made up.

const warningSplat = `[   12.345678] ------------[ cut here ]------------
[   12.345901] WARNING: CPU: 0 PID: 97 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x3c2/0x3e0
[   12.346150] Modules linked in:
[   12.346302] CPU: 0 PID: 97 Comm: netlink_mcast_s Not tainted 6.1.0-nlmc #1
[   12.346480] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.3-debian-1.16.3-2 04/01/2014
[   12.346700] RIP: 0010:do_one_broadcast+0x3c2/0x3e0
[   12.346850] Code: 48 89 df e8 5e 3b fc ff e9 4c fe ff ff <0f> 0b e9 96 fd ff ff 0f 0b e9 8f fd ff ff
[   12.347000] RSP: 0018:ffffc900001f7b88 EFLAGS: 00010246
[   12.347100] RAX: 0000000000000000 RBX: ffff888004a1c000 RCX: 0000000000000000
[   12.347200] RDX: 0000000000000001 RSI: ffff888004a1c000 RDI: ffff888003e4d800
[   12.347800] Call Trace:
[   12.347850]  <TASK>
[   12.347900]  netlink_broadcast+0x1b5/0x3c0
[   12.348000]  rtnetlink_send+0x2c/0x40
[   12.348100]  </TASK>
[   12.348200] ---[ end trace 0000000000000000 ]---
[   12.400000] veth0: entered promiscuous mode`

const refcountSplat = `[   20.100000] ------------[ cut here ]------------
[   20.100001] refcount_t: underflow; use-after-free.
[   20.100002] WARNING: CPU: 1 PID: 230 at lib/refcount.c:28 refcount_warn_saturate+0xba/0x110
[   20.100003] Modules linked in:
[   20.100004] ---[ end trace 0000000000000000 ]---`

const kasanSplat = `[   45.100000] ==================================================================
[   45.100100] BUG: KASAN: slab-use-after-free in netlink_broadcast_filtered+0x5a1/0x5f0
[   45.100200] Read of size 8 at addr ffff88800a6c3b10 by task netlink_mcast_s/112
[   45.100300] 
[   45.100400] CPU: 1 PID: 112 Comm: netlink_mcast_s Not tainted 6.1.0-nlmc-debug #1
[   45.100500] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.3-debian-1.16.3-2 04/01/2014
[   45.100600] Call Trace:
[   45.100700]  <TASK>
[   45.100800]  dump_stack_lvl+0x5b/0x77
[   45.100900]  print_report+0x16c/0x4a0
[   45.101000]  kasan_report+0xb1/0xe0
[   45.101100]  netlink_broadcast_filtered+0x5a1/0x5f0
[   45.101200]  rtnl_notify+0x8a/0xb0
[   45.101300]  </TASK>
[   45.101400] 
[   45.101500] Allocated by task 110:
[   45.101600]  kasan_save_stack+0x1e/0x40
[   45.109900] ==================================================================`

// No timestamps (printk.time=0), as lockdep prints it.
const lockdepSplat = `
======================================================
WARNING: possible circular locking dependency detected
6.1.0-nlmc-debug #1 Not tainted
------------------------------------------------------
netlink_mcast_s/140 is trying to acquire lock:
ffffffff83a5c1e8 (nl_table_lock){++++}-{2:2}, at: netlink_broadcast_filtered+0x7d/0x5f0

but task is already holding lock:
ffff88800b2d0a38 (&net->nl_mc_lock){+.+.}-{3:3}, at: netlink_update_subscriptions+0x41/0x120

which lock already depends on the new lock.

the existing dependency chain (in reverse order) is:`

const rcuUsageSplat = `[   30.000001] =============================
[   30.000002] WARNING: suspicious RCU usage
[   30.000003] 6.12.0-nlmc #1 Not tainted
[   30.000004] -----------------------------
[   30.000005] net/netlink/af_netlink.c:1521 suspicious rcu_dereference_check() usage!
[   30.000006] 
[   30.000007] other info that might help us debug this:`

// CONFIG_BUG_ON_DATA_CORRUPTION: the message, then a BUG.
const listBugSplat = `[   61.000001] list_del corruption. prev->next should be ffff88800a1b2c40, but was ffff88800a1b2d00. (prev=ffff88800a1b3000)
[   61.000002] ------------[ cut here ]------------
[   61.000003] kernel BUG at lib/list_debug.c:62!
[   61.000004] invalid opcode: 0000 [#1] PREEMPT SMP KASAN
[   61.000005] CPU: 0 PID: 7 Comm: kworker/u4:0 Not tainted 6.1.0-nlmc-debug #1
[   61.000006] Workqueue: netns cleanup_net
[   61.000007] RIP: 0010:__list_del_entry_valid.cold+0x37/0x4a`

// Without it: a WARN() whose message is the corruption.
const listWarnSplat = `------------[ cut here ]------------
list_add corruption. next->prev should be prev (ffff88800c0e1a08), but was ffff88800c0e2b10. (next=ffff88800c0e3c00).
WARNING: CPU: 1 PID: 151 at lib/list_debug.c:27 __list_add_valid+0x81/0xa0
Modules linked in:
---[ end trace 0000000000000000 ]---`

// With CONFIG_PRINTK_CALLER.
const rcuStallSplat = `[   80.000001][    C0] rcu: INFO: rcu_preempt self-detected stall on CPU
[   80.000002][    C0] rcu: 	0-....: (21000 ticks this GP) idle=7e4/1/0x4000000000000000 softirq=1234/1234 fqs=5250
[   80.000003][    C0] 	(t=21001 jiffies g=2345 q=678 ncpus=2)
[   80.000004][    C0] NMI backtrace for cpu 0
[   80.000005][    C0] 
[   80.000006][   T12] veth1: left promiscuous mode`

// Lines a kernel, our programs or the init print that are not reports.
const quiet = `[    0.000000] Linux version 6.1.0-nlmc (root@build) #1 SMP PREEMPT_DYNAMIC
[    0.120000] Spectre V2 : WARNING: Unprivileged eBPF is enabled with eIBRS on, data leaks possible via Spectre v2 BHB attacks!
[    0.130000] Lock dependency validator: Copyright (c) 2006 Red Hat, Inc., Ingo Molnar
[    0.130001] ... MAX_LOCKDEP_SUBCLASSES:  8
[    0.200000] kasan: KernelAddressSanitizer initialized (generic)
[    0.300000] rcu: Hierarchical RCU implementation.
[    0.300001] rcu: 	RCU event tracing is enabled.
[    0.400000] printk: console [ttyS0] enabled
[    1.000000] DEBUG_LIST: checks enabled
[    1.100000] warning: process 'netlink_mcast_s' used the deprecated sysctl system call
[    1.200000] netlink_mcast: a warning, not a WARNING: report
[    1.300000] Run /init as init process
nlmc-vmtest: init started
# WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x0/0x10
# BUG: KASAN: slab-use-after-free in netlink_broadcast
ok 3 selftests: netlink_mcast: x # WARNING: not a kernel report
not ok 4 bind_bitmask_membership # BUG: expected group 36
  WARNING: indented, as in a diff or a transcript
DEBUGGING BUGS: none
UNBUGGED: nothing
xWARNING: CPU: 0 PID: 1 at x.c:1 f+0x0/0x1
rcu_preempt detected stalls on nothing (not at the start)
ticks: list corruption seen in a test name
[    2.000000] reboot: Power down`

func lines(s string) []string { return strings.Split(s, "\n") }

func TestScanFindsEachKind(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		kind  string
		first string // the report's String()
		has   []string
		lines int // exact number of lines kept, or 0 for "don't care"
	}{
		{"warning", warningSplat, "WARNING",
			"WARNING: CPU: 0 PID: 97 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x3c2/0x3e0",
			[]string{"Modules linked in:", "RIP: 0010:do_one_broadcast+0x3c2/0x3e0"}, MaxLines},
		{"refcount", refcountSplat, "refcount",
			"refcount_t: underflow; use-after-free.",
			[]string{"WARNING: CPU: 1 PID: 230 at lib/refcount.c:28 refcount_warn_saturate+0xba/0x110", "---[ end trace 0000000000000000 ]---"}, 4},
		{"kasan", kasanSplat, "KASAN",
			"BUG: KASAN: slab-use-after-free in netlink_broadcast_filtered+0x5a1/0x5f0",
			[]string{"Read of size 8 at addr ffff88800a6c3b10 by task netlink_mcast_s/112", "", " dump_stack_lvl+0x5b/0x77"}, MaxLines},
		{"lockdep", lockdepSplat, "lockdep",
			"lockdep: WARNING: possible circular locking dependency detected",
			[]string{"netlink_mcast_s/140 is trying to acquire lock:", "but task is already holding lock:"}, MaxLines},
		{"rcu usage", rcuUsageSplat, "lockdep",
			"lockdep: WARNING: suspicious RCU usage",
			[]string{"net/netlink/af_netlink.c:1521 suspicious rcu_dereference_check() usage!", "other info that might help us debug this:"}, 6},
		{"list bug", listBugSplat, "list corruption",
			"list corruption: list_del corruption. prev->next should be ffff88800a1b2c40, but was ffff88800a1b2d00. (prev=ffff88800a1b3000)",
			[]string{"kernel BUG at lib/list_debug.c:62!", "invalid opcode: 0000 [#1] PREEMPT SMP KASAN", "Workqueue: netns cleanup_net"}, 6},
		{"list warn", listWarnSplat, "list corruption",
			"list corruption: list_add corruption. next->prev should be prev (ffff88800c0e1a08), but was ffff88800c0e2b10. (next=ffff88800c0e3c00).",
			[]string{"WARNING: CPU: 1 PID: 151 at lib/list_debug.c:27 __list_add_valid+0x81/0xa0"}, 4},
		{"rcu stall", rcuStallSplat, "RCU stall",
			"RCU stall: rcu: INFO: rcu_preempt self-detected stall on CPU",
			[]string{"\t(t=21001 jiffies g=2345 q=678 ncpus=2)", "NMI backtrace for cpu 0"}, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The report is found alone and in the middle of ordinary output.
			// A report whose end the kernel does not mark may take on the
			// lines that follow, up to MaxLines; its own lines come first.
			alone := Scan(lines(tc.text))
			for i, text := range []string{tc.text, quiet + "\n" + tc.text + "\n" + quiet} {
				got := alone
				if i > 0 {
					got = Scan(lines(text))
				}
				if len(got) != 1 {
					t.Fatalf("Scan found %d reports, want 1: %q", len(got), got)
				}
				r := got[0]
				if r.Kind != tc.kind || r.String() != tc.first {
					t.Errorf("report %q (kind %q), want %q (kind %q)", r.String(), r.Kind, tc.first, tc.kind)
				}
				if i == 0 && tc.lines != 0 && len(r.Lines) != tc.lines {
					t.Errorf("kept %d lines, want %d:\n%s", len(r.Lines), tc.lines, strings.Join(r.Lines, "\n"))
				}
				if i > 0 && (len(r.Lines) < len(alone[0].Lines) || !reflect.DeepEqual(r.Lines[:len(alone[0].Lines)], alone[0].Lines)) {
					t.Errorf("among other output, the report's lines are\n%s\nwant them to begin with\n%s",
						strings.Join(r.Lines, "\n"), strings.Join(alone[0].Lines, "\n"))
				}
				for _, want := range tc.has {
					if !contains(r.Lines, want) {
						t.Errorf("report lacks line %q:\n%s", want, strings.Join(r.Lines, "\n"))
					}
				}
				for _, l := range r.Lines {
					if strings.HasPrefix(l, "[") || strings.Contains(l, cutHere) {
						t.Errorf("line kept with its prefix or the cut-here marker: %q", l)
					}
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

func TestScanIgnoresLookAlikes(t *testing.T) {
	if got := Scan(lines(quiet)); len(got) != 0 {
		t.Fatalf("Scan found reports in ordinary output: %q", got)
	}
}

func TestScanFindsEveryTitle(t *testing.T) {
	titles := map[string]string{
		"WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x0/0x10":                            "WARNING",
		"WARNING: net/core/dev.c:12 at f+0x1/0x2, CPU#0: swapper/0/1":                                                  "WARNING",
		"BUG: KASAN: use-after-free in f+0x1/0x2":                                                                      "KASAN",
		"BUG: sleeping function called from invalid context at kernel/locking/mutex.c:580":                             "BUG",
		"BUG: unable to handle page fault for address: ffffffffffffff80":                                               "BUG",
		"BUG: kernel NULL pointer dereference, address: 0000000000000000":                                              "BUG",
		"kernel BUG at net/core/skbuff.c:120!":                                                                         "BUG",
		"Oops: 0000 [#1] PREEMPT SMP NOPTI":                                                                            "Oops",
		"Oops: general protection fault, probably for non-canonical address 0xdffffc0000000001: 0000 [#1]":             "Oops",
		"general protection fault, probably for non-canonical address 0xdffffc0000000001: 0000 [#1] PREEMPT SMP KASAN": "Oops",
		"UBSAN: shift-out-of-bounds in net/netlink/af_netlink.c:700:20":                                                "UBSAN",
		"WARNING: possible circular locking dependency detected":                                                       "lockdep",
		"WARNING: inconsistent lock state":                                                                             "lockdep",
		"WARNING: suspicious RCU usage":                                                                                "lockdep",
		"WARNING: possible recursive locking detected":                                                                 "lockdep",
		"WARNING: possible irq lock inversion dependency detected":                                                     "lockdep",
		"rcu: INFO: rcu_sched self-detected stall on CPU":                                                              "RCU stall",
		"rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:":                                                        "RCU stall",
		"INFO: rcu_sched detected stalls on CPUs/tasks:":                                                               "RCU stall",
		"rcu: INFO: rcu_preempt detected expedited stalls on CPUs/tasks: { 1-... } 21002 jiffies s: 345 root: 0x2/.":   "RCU stall",
		"list_add corruption. prev->next should be next (ffff888003c4b4a8), but was 0000000000000000.":                 "list corruption",
		"list_del corruption, ffff88800a1b2c40->next is LIST_POISON1 (dead000000000100)":                               "list corruption",
		"list_add double add: new=ffff888003c4b4a8, prev=ffff888003c4b4a8, next=ffff888003c4b000.":                     "list corruption",
		"list corruption detected":                                                                                     "list corruption",
		"Kernel panic - not syncing: Fatal exception":                                                                  "panic",
		"refcount_t: addition on 0; use-after-free.":                                                                   "refcount",
		"unreferenced object 0xffff888003692380 (size 128):":                                                           "kmemleak",
		"kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)":                                      "kmemleak",
		"INFO: task kworker/u4:1:23 blocked for more than 120 seconds.":                                                "hung task",
		"watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [netlink_mcast_s:99]":                                       "lockup",
		"Freeing alive netlink socket 00000000c4d1a2b3":                                                                "alive socket",
		"Attempt to release alive packet socket: 00000000c4d1a2b3":                                                     "alive socket",
	}
	for title, kind := range titles {
		for _, line := range []string{title, "[  123.456789] " + title, "[  123.456789][  T321] " + title + "\r"} {
			got := Scan([]string{line})
			if len(got) != 1 || got[0].Kind != kind || got[0].Lines[0] != title {
				t.Errorf("Scan(%q) = %q, want one %q report", line, got, kind)
			}
		}
	}
}

func TestScanSeparatesReports(t *testing.T) {
	text := warningSplat + "\n" + kasanSplat + "\n" + lockdepSplat + "\n" + listWarnSplat
	var kinds []string
	for _, r := range Scan(lines(text)) {
		kinds = append(kinds, r.Kind)
	}
	if want := []string{"WARNING", "KASAN", "lockdep", "list corruption"}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("kinds %q, want %q", kinds, want)
	}
}

// A WARNING line written by a test to the log has no body: it is one report
// of one line, and the quiet lines after it end it.
func TestScanLoneLine(t *testing.T) {
	text := "[    3.000000] WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x0/0x10\n" +
		"[    3.000001] \n[    3.000002] reboot: Power down"
	got := Scan(lines(text))
	if len(got) != 1 || len(got[0].Lines) != 1 {
		t.Fatalf("got %q, want one report of one line", got)
	}
}

func TestStripPrefix(t *testing.T) {
	for in, want := range map[string]string{
		"[    1.234567] msg":            "msg",
		"[    1.234567]  <TASK>":        " <TASK>",
		"[    1.234567][    T1] msg":    "msg",
		"[ 1081.419909][    C3]  <IRQ>": " <IRQ>",
		"[    1.234567] ":               "",
		"msg\r":                         "msg",
		"[not a time] msg":              "[not a time] msg",
		"[1] msg":                       "[1] msg",
	} {
		if got := StripPrefix(in); got != want {
			t.Errorf("StripPrefix(%q) = %q, want %q", in, got, want)
		}
	}
}

// kmemleak with kmemleak.verbose=1 prints each new suspect as it finds it,
// every line behind its "kmemleak: " prefix, and then its summary (the
// format of print_unreferenced() and kmemleak_scan() in mm/kmemleak.c;
// the first suspect's frames as a 6.1 guest printed them, unhashed
// pointers and all, for do_one_broadcast+52's leaked copy).
const kmemleakVerboseScan = `[   61.101000] kmemleak: unreferenced object 0xffff888004a1c000 (size 232):
[   61.101001] kmemleak:   comm "netlink_mcast_s", pid 95, jiffies 4294703338 (age 5.120s)
[   61.101002] kmemleak:   hex dump (first 32 bytes):
[   61.101003] kmemleak:     00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  ................
[   61.101004] kmemleak:   backtrace:
[   61.101005] kmemleak:     [<(____ptrval____)>] kmem_cache_alloc+0xf0/0x11c
[   61.101006] kmemleak:     [<(____ptrval____)>] skb_clone+0x147/0x193
[   61.101007] kmemleak:     [<(____ptrval____)>] netlink_broadcast+0x447/0x88b
[   61.101008] kmemleak:     [<(____ptrval____)>] nlmsg_notify+0x7a/0xb7
[   61.101009] kmemleak: unreferenced object 0xffff888004a1d000 (size 64):
[   61.101010] kmemleak:   comm "netlink_mcast_s", pid 97, jiffies 4294703340 (age 5.112s)
[   61.101011] kmemleak:   hex dump (first 32 bytes):
[   61.101012] kmemleak:     6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b  kkkkkkkkkkkkkkkk
[   61.101013] kmemleak:   backtrace:
[   61.101014] kmemleak:     [<000000008c1d2e3f>] __kmalloc+0x4a/0x130
[   61.101015] kmemleak:     [<00000000d4e5f6a7>] genl_start+0x6b/0x1d0
[   61.101016] kmemleak:     [<00000000e5f6a7b8>] __netlink_dump_start+0x1b4/0x2a0
[   61.101017] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)
[   61.101018] ok 3 next case`

// Each suspect kmemleak prints is a report of its own, named by its
// allocation stack; the summary closes the last, and stands alone only
// where the suspects were not printed.
func TestScanKmemleakVerbose(t *testing.T) {
	got := Scan(lines(kmemleakVerboseScan))
	want := []string{
		"kmemleak: skb_clone:netlink_broadcast:nlmsg_notify",
		"kmemleak: genl_start:__netlink_dump_start",
	}
	if len(got) != len(want) {
		t.Fatalf("Scan found %d reports, want %d: %q", len(got), len(want), got)
	}
	for i, r := range got {
		if r.Kind != "kmemleak" || r.Fingerprint() != want[i] {
			t.Errorf("report %d: %s %q, want kmemleak %q", i, r.Kind, r.Fingerprint(), want[i])
		}
	}
	if s := got[0].String(); s != "kmemleak: unreferenced object 0xffff888004a1c000 (size 232):" {
		t.Errorf("first report's title %q", s)
	}

	alone := Scan(lines("[   61.101017] kmemleak: 1 new suspected memory leaks (see /sys/kernel/debug/kmemleak)"))
	if len(alone) != 1 || alone[0].Kind != "kmemleak" || alone[0].Fingerprint() != "kmemleak: (no stack)" {
		t.Errorf("summary alone: %q, want one kmemleak report without a stack", alone)
	}
}
