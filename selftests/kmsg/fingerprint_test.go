// SPDX-License-Identifier: GPL-2.0

package kmsg

import (
	"strings"
	"testing"
)

// A KCSAN data race as 6.1's kernel/kcsan/report.c prints it: the other
// access and its stack, then this one's, the value change, the task line.
const kcsanSplat = `[   41.234567] ==================================================================
[   41.234890] BUG: KCSAN: data-race in netlink_getname / netlink_insert
[   41.235000] 
[   41.235100] write to 0xffff888005a3c2f8 of 4 bytes by task 212 on cpu 1:
[   41.235200]  netlink_insert+0x5e/0x2f0
[   41.235300]  netlink_autobind.isra.0+0xb5/0x140
[   41.235400]  netlink_sendmsg+0x3d1/0x6e0
[   41.235500]  ____sys_sendmsg+0x1f6/0x3c0
[   41.235600]  ___sys_sendmsg+0xc4/0x110
[   41.235700]  __sys_sendmsg+0x8e/0xf0
[   41.235800]  do_syscall_64+0x3b/0x90
[   41.235900]  entry_SYSCALL_64_after_hwframe+0x63/0xcd
[   41.236000] 
[   41.236100] read to 0xffff888005a3c2f8 of 4 bytes by task 213 on cpu 0:
[   41.236200]  netlink_getname+0x5a/0xe0
[   41.236300]  __sys_getsockname+0xa7/0x130
[   41.236400]  __x64_sys_getsockname+0x1b/0x30
[   41.236500]  do_syscall_64+0x3b/0x90
[   41.236600]  entry_SYSCALL_64_after_hwframe+0x63/0xcd
[   41.236700] 
[   41.236800] value changed: 0x00000000 -> 0x8a3c1f02
[   41.236900] 
[   41.237000] Reported by Kernel Concurrency Sanitizer on:
[   41.237100] CPU: 0 PID: 213 Comm: netlink_mcast_s Not tainted 6.1.192 #1
[   41.237200] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014
[   41.237300] ==================================================================`

const kcsanFingerprint = "KCSAN data-race: netlink_getname:__sys_getsockname:__x64_sys_getsockname:do_syscall_64:entry_SYSCALL_64_after_hwframe (read 4) / " +
	"netlink_insert:netlink_autobind:netlink_sendmsg:____sys_sendmsg:___sys_sendmsg (write 4)"

// The same race seen from the other CPU: the stacks in the other order,
// other addresses, tasks, offsets and clone suffixes, an interrupt's
// stack whose frames below the interrupt's entry are what it interrupted.
const kcsanSplatSwapped = `==================================================================
BUG: KCSAN: data-race in netlink_getname / netlink_insert

read to 0xffff888007b11e38 of 4 bytes by task 977 on cpu 1:
 netlink_getname+0x5a/0xe0
 __sys_getsockname+0xa7/0x130
 __x64_sys_getsockname+0x1b/0x30
 do_syscall_64+0x3b/0x90
 entry_SYSCALL_64_after_hwframe+0x63/0xcd

write to 0xffff888007b11e38 of 4 bytes by task 980 on cpu 0:
 netlink_insert+0x61/0x300
 netlink_autobind.constprop.0+0xb5/0x140
 netlink_sendmsg+0x3d9/0x6f0
 ____sys_sendmsg+0x1f6/0x3c0
 ___sys_sendmsg+0xc4/0x110
 __sys_sendmsg+0x8e/0xf0

Reported by Kernel Concurrency Sanitizer on:
CPU: 0 PID: 980 Comm: netlink_mcast_s Not tainted 6.1.192 #1
==================================================================`

const kcsanInterruptSplat = `==================================================================
BUG: KCSAN: data-race in rcu_core / rcu_gp_kthread

write to 0xffffffff82a4e1c0 of 8 bytes by interrupt on cpu 1:
 rcu_core+0x1a2/0x8d0
 rcu_core_si+0x9/0x10
 __do_softirq+0xd3/0x2c4
 __irq_exit_rcu+0x6f/0xb0
 sysvec_apic_timer_interrupt+0x73/0x80
 asm_sysvec_apic_timer_interrupt+0x16/0x20
 netlink_broadcast+0x2a/0x40
 rtnl_notify+0x4a/0x60

read to 0xffffffff82a4e1c0 of 8 bytes by task 10 on cpu 0:
 rcu_gp_kthread+0x44/0x200
 kthread+0x18d/0x1b0
 ret_from_fork+0x1f/0x30

Reported by Kernel Concurrency Sanitizer on:
CPU: 0 PID: 10 Comm: rcu_preempt Not tainted 6.1.192 #1
==================================================================`

// A KASAN report with its allocation and free stacks, through a module.
const kasanModuleSplat = `==================================================================
BUG: KASAN: use-after-free in do_one_broadcast+0x5a1/0x5f0
Read of size 8 at addr ffff88800a6c3b10 by task netlink_mcast_s/112

CPU: 1 PID: 112 Comm: netlink_mcast_s Not tainted 6.1.192 #1
Hardware name: QEMU Standard PC (i440FX + PIIX, 1996)
Call Trace:
 <TASK>
 dump_stack_lvl+0x5b/0x77
 print_report+0x16c/0x4a0
 ? do_one_broadcast+0x5a1/0x5f0
 kasan_report+0xb1/0xe0
 ? do_one_broadcast+0x5a1/0x5f0
 do_one_broadcast+0x5a1/0x5f0
 netlink_broadcast_filtered+0x1b5/0x3c0
 vxlan_fdb_notify+0x9b6/0xf10 [vxlan]
 rtnl_notify+0x8a/0xb0
 </TASK>

Allocated by task 110:
 kasan_save_stack+0x1e/0x40
 __kasan_kmalloc+0x7e/0x90
 netlink_create+0x32/0x80

Freed by task 111:
 kasan_save_stack+0x1e/0x40
 kfree+0x7e/0x90
 netlink_release+0x32/0x80
==================================================================`

// lockdep: the dependency chain's stacks come before the one where it
// was found, under "stack backtrace:".
const lockdepFullSplat = `======================================================
WARNING: possible circular locking dependency detected
6.1.192 #1 Not tainted
------------------------------------------------------
netlink_mcast_s/140 is trying to acquire lock:
ffffffff83a5c1e8 (nl_table_lock){++++}-{2:2}, at: netlink_broadcast_filtered+0x7d/0x5f0

but task is already holding lock:
ffff88800b2d0a38 (&net->nl_mc_lock){+.+.}-{3:3}, at: netlink_update_subscriptions+0x41/0x120

which lock already depends on the new lock.

the existing dependency chain (in reverse order) is:

-> #1 (&net->nl_mc_lock){+.+.}-{3:3}:
       lock_acquire+0x1a3/0x4a0
       __mutex_lock+0x11a/0xd30
       netlink_insert+0x61/0x300

-> #0 (nl_table_lock){++++}-{2:2}:
       check_prev_add+0xfe/0x1300
       __lock_acquire+0x21c8/0x3a90
       lock_acquire+0x1a3/0x4a0
       _raw_read_lock+0x5e/0x70
       netlink_broadcast_filtered+0x7d/0x5f0

other info that might help us debug this:

 *** DEADLOCK ***

1 lock held by netlink_mcast_s/140:
 #0: ffff88800b2d0a38 (&net->nl_mc_lock){+.+.}-{3:3}, at: netlink_update_subscriptions+0x41/0x120

stack backtrace:
CPU: 0 PID: 140 Comm: netlink_mcast_s Not tainted 6.1.192 #1
Hardware name: QEMU Standard PC (i440FX + PIIX, 1996)
Call Trace:
 <TASK>
 dump_stack_lvl+0x5b/0x77
 check_noncircular+0x1f2/0x230
 __lock_acquire+0x21c8/0x3a90
 lock_acquire+0x1a3/0x4a0
 _raw_read_lock+0x5e/0x70
 netlink_broadcast_filtered+0x7d/0x5f0
 netlink_update_subscriptions+0x61/0x120
 netlink_setsockopt+0x2ab/0x5c0
 __sys_setsockopt+0xf1/0x1d0
 </TASK>`

// A WARNING in an interrupt: the frames after </IRQ> are the task it
// interrupted.
const irqWarningSplat = `------------[ cut here ]------------
WARNING: CPU: 1 PID: 0 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x3c2/0x3e0
Modules linked in:
CPU: 1 PID: 0 Comm: swapper/1 Not tainted 6.1.192 #1
RIP: 0010:do_one_broadcast+0x3c2/0x3e0
Code: 48 89 df e8 5e 3b fc ff e9 4c fe ff ff <0f> 0b e9 96 fd ff ff
RSP: 0018:ffffc900001f7b88 EFLAGS: 00010246
Call Trace:
 <IRQ>
 ? __warn+0x7d/0x130
 ? report_bug+0x18d/0x1c0
 netlink_broadcast_filtered.cold+0x1b5/0x3c0
 nlmsg_notify+0x2c/0x40
 </IRQ>
 <TASK>
 default_idle+0x10/0x20
 </TASK>
---[ end trace 0000000000000000 ]---`

// kmemleak's backtrace, with [<address>] before each frame.
const kmemleakSplat = `unreferenced object 0xffff888003692380 (size 128):
  comm "netlink_mcast_s", pid 762, jiffies 4294831244
  hex dump (first 32 bytes):
    00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  ................
  backtrace (crc 2128895f):
    [<ffffffffb2131db6>] kmemleak_alloc+0x236/0x290
    [<ffffffffb3dee5e4>] __alloc_skb+0x44/0xf0
    [<ffffffffb3df0263>] netlink_alloc_large_skb.part.0+0x423/0x8e0
    [<ffffffffb3c2a534>] netlink_sendmsg+0xa64/0x2320`

// A leaked notification, as vmtest printed kmemleak's report of it on a
// 6.1 guest (do_one_broadcast+52: the copy a filter dropped never freed
// keeps the original's data): the slab allocator's frames and pointers not
// yet hashed.
const kmemleakPtrvalSplat = `unreferenced object 0xffff888006bff800 (size 512):
  comm "netlink_mcast_s", pid 614, jiffies 4294897720
  hex dump (first 32 bytes):
    4c 00 00 00 14 00 00 00 f5 02 00 00 26 00 00 00  L...........&...
    02 20 80 00 01 00 00 00 08 00 01 00 c6 33 64 01  . ...........3d.
  backtrace:
    [<(____ptrval____)>] __kmem_cache_alloc_node+0xdf/0xf2
    [<(____ptrval____)>] __kmalloc_node_track_caller+0x78/0xb4
    [<(____ptrval____)>] kmalloc_reserve+0xa1/0x10e
    [<(____ptrval____)>] __alloc_skb+0x10e/0x21a
    [<(____ptrval____)>] rtmsg_ifa+0x136/0x1c0
    [<(____ptrval____)>] __inet_insert_ifa+0x7a0/0x7e7`

func TestFingerprint(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"WARNING: RIP and call trace", warningSplat, "WARNING at net/netlink/af_netlink.c:1500: do_one_broadcast:netlink_broadcast:rtnetlink_send"},
		{"WARNING in an interrupt", irqWarningSplat, "WARNING at net/netlink/af_netlink.c:1500: do_one_broadcast:netlink_broadcast_filtered:nlmsg_notify"},
		{"KASAN: generic and unreliable frames, module", kasanModuleSplat,
			"KASAN use-after-free: do_one_broadcast:netlink_broadcast_filtered:vxlan_fdb_notify:rtnl_notify"},
		{"KASAN kept to MaxLines", kasanSplat, "KASAN slab-use-after-free: netlink_broadcast_filtered:rtnl_notify"},
		{"lockdep: the stack backtrace", lockdepFullSplat,
			"lockdep possible circular locking dependency detected [nl_table_lock, &net->nl_mc_lock]: _raw_read_lock:netlink_broadcast_filtered:netlink_update_subscriptions:netlink_setsockopt:__sys_setsockopt"},
		{"lockdep without stacks", lockdepSplat, "lockdep possible circular locking dependency detected [nl_table_lock, &net->nl_mc_lock]: (no stack)"},
		{"KCSAN: both stacks", kcsanSplat, kcsanFingerprint},
		{"KCSAN: the other order", kcsanSplatSwapped, kcsanFingerprint},
		{"KCSAN: an interrupt's stack ends at its entry", kcsanInterruptSplat,
			"KCSAN data-race: rcu_core:rcu_core_si:__do_softirq:__irq_exit_rcu:sysvec_apic_timer_interrupt (write 8) / rcu_gp_kthread:kthread:ret_from_fork (read 8)"},
		{"refcount", refcountSplat, "refcount underflow: (no stack)"},
		{"list corruption, BUG", listBugSplat, "list corruption list_del corruption: (no stack)"},
		{"kmemleak", kmemleakSplat, "kmemleak: __alloc_skb:netlink_alloc_large_skb:netlink_sendmsg"},
		{"kmemleak: slab frames, pointers not hashed", kmemleakPtrvalSplat, "kmemleak: __alloc_skb:rtmsg_ifa:__inet_insert_ifa"},
		{"alive socket", "[   12.000001] Freeing alive netlink socket 00000000c4d1a2b3\n[   12.000002] ok 3 next case",
			"alive socket Freeing alive netlink socket: (no stack)"},
		{"a bare title", "WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x0/0x10", "WARNING at net/netlink/af_netlink.c:1500: do_one_broadcast"},
	}
	for _, tc := range tests {
		got := Scan(lines(tc.text))
		if len(got) != 1 {
			t.Errorf("%s: Scan found %d reports, want 1: %q", tc.name, len(got), got)
			continue
		}
		if fp := got[0].Fingerprint(); fp != tc.want {
			t.Errorf("%s: fingerprint\n  %q\nwant\n  %q", tc.name, fp, tc.want)
		}
		// Reports built by hand (no Stacks) are read from their lines.
		byHand := Report{Kind: got[0].Kind, Lines: got[0].Lines}
		if len(got[0].Lines) < MaxLines && byHand.Fingerprint() != got[0].Fingerprint() {
			t.Errorf("%s: from Lines alone: %q, want %q", tc.name, byHand.Fingerprint(), got[0].Fingerprint())
		}
	}
	if got := TaintReports(0, 1<<9|1<<23)[0].Fingerprint(); got != "taint W" {
		t.Errorf("taint W fingerprint %q", got)
	}
	if got := TaintReports(0, 1<<40)[0].Fingerprint(); got != "taint bit 40" {
		t.Errorf("taint bit 40 fingerprint %q", got)
	}
}

// A KCSAN report keeps both stacks, and all of a WARNING's frames count
// although only its first MaxLines lines are kept.
func TestKCSANReport(t *testing.T) {
	got := Scan(lines(quiet + "\n" + kcsanSplat + "\n" + quiet))
	if len(got) != 1 {
		t.Fatalf("Scan found %d reports, want 1: %q", len(got), got)
	}
	r := got[0]
	if r.Kind != "KCSAN" || r.String() != "BUG: KCSAN: data-race in netlink_getname / netlink_insert" {
		t.Errorf("report %q, kind %q", r, r.Kind)
	}
	last := r.Lines[len(r.Lines)-1]
	if len(r.Lines) != 25 || !strings.HasPrefix(last, "=====") || !contains(r.Lines, " netlink_getname+0x5a/0xe0") {
		t.Errorf("kept %d lines, want all 25 up to the closing line:\n%s", len(r.Lines), strings.Join(r.Lines, "\n"))
	}
	long := warningSplat
	for i := 0; i < 40; i++ {
		long = strings.Replace(long, " rtnetlink_send+0x2c/0x40", " rtnetlink_send+0x2c/0x40\n[   12.348000]  filler+0x1/0x2", 1)
	}
	w := Scan(lines(long))
	if len(w) != 1 || len(w[0].Lines) != MaxLines || !strings.HasSuffix(w[0].Fingerprint(), ":netlink_broadcast:rtnetlink_send:filler:filler") {
		t.Errorf("long WARNING: %d reports, fingerprint %q", len(w), w[0].Fingerprint())
	}
}

func TestCleanName(t *testing.T) {
	for in, want := range map[string]string{
		"netlink_autobind.isra.0":     "netlink_autobind",
		"tcp_ao_info_cmd.constprop.0": "tcp_ao_info_cmd",
		"__list_del_entry_valid.cold": "__list_del_entry_valid",
		"foo.part.0.cold":             "foo",
		"do_one_broadcast":            "do_one_broadcast",
	} {
		if got := cleanName(in); got != want {
			t.Errorf("cleanName(%q) = %q, want %q", in, got, want)
		}
	}
}

// What makes a report specific is in its fingerprint: the same lockdep
// splat with another lock held, the same WARN path from another line, the
// same KCSAN stacks with another access size, each is another report.
func TestFingerprintIsSpecific(t *testing.T) {
	for _, tt := range []struct{ name, text, old, new string }{
		{"lock class", lockdepFullSplat, "(&net->nl_mc_lock){+.+.}", "(&nlk->cb_mutex){+.+.}"},
		{"WARN line", warningSplat, "af_netlink.c:1500", "af_netlink.c:1517"},
		{"access size", kcsanSplat, "of 4 bytes by task 213", "of 8 bytes by task 213"},
		{"suspicious RCU usage", rcuUsageSplat, "af_netlink.c:1521", "af_netlink.c:2001"},
	} {
		a := scanOne(t, tt.text).Fingerprint()
		b := scanOne(t, strings.ReplaceAll(tt.text, tt.old, tt.new)).Fingerprint()
		if a == b {
			t.Errorf("%s: %q changed, fingerprint still %q", tt.name, tt.old, a)
		}
	}
}
