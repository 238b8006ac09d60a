// SPDX-License-Identifier: GPL-2.0

package kmsg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tlbRace is a KCSAN report shaped as netdev CI's P-kcsan run logged one
// during netlink_mcast_switch (its title and fingerprint,
// "_find_next_and_bit:find_next_and_bit:smp_call_function_many_cond:
// on_each_cpu_cond_mask:flush_tlb_mm_range (read 8)"): a TLB flush reads
// the mm's CPU mask while a context switch on another CPU changes it.
// The frames below flush_tlb_mm_range are those of a Go thread's madvise.
const tlbRace = `[  211.402117] ==================================================================
[  211.402117] BUG: KCSAN: data-race in _find_next_and_bit+0x43/0xca
[  211.402117] 
[  211.402117] race at unknown origin, with read to 0xffff888004b1a5c0 of 8 bytes by task 402 on cpu 2:
[  211.402117]  _find_next_and_bit+0x43/0xca
[  211.402117]  find_next_and_bit+0x1d/0x27
[  211.402117]  smp_call_function_many_cond+0x2b4/0x5d2
[  211.402117]  on_each_cpu_cond_mask+0x3c/0x70
[  211.402117]  flush_tlb_mm_range+0x19c/0x25a
[  211.402117]  tlb_finish_mmu+0x1d6/0x2b4
[  211.402117]  zap_page_range+0x1a4/0x21c
[  211.402117]  do_madvise+0x9b5/0x1224
[  211.402117]  __x64_sys_madvise+0x2e/0x3a
[  211.402117]  x64_sys_call+0x8ad/0xd8c
[  211.402117]  do_syscall_64+0x35/0x43
[  211.402117]  entry_SYSCALL_64_after_hwframe+0x4b/0xb5
[  211.402117] 
[  211.402117] value changed: 0x0000000000000006 -> 0x0000000000000004
[  211.402117] 
[  211.402117] Reported by Kernel Concurrency Sanitizer on:
[  211.402117] CPU: 2 PID: 402 Comm: netlink_mcast_s Not tainted 6.1.192 #1
[  211.402117] ==================================================================`

const tlbRaceFingerprint = "KCSAN data-race: _find_next_and_bit:find_next_and_bit:smp_call_function_many_cond:on_each_cpu_cond_mask:flush_tlb_mm_range (read 8)"

func TestNetworkingFunc(t *testing.T) {
	for name, want := range map[string]bool{
		"netlink_broadcast":       true,
		"do_one_broadcast":        true,
		"__sys_sendmsg":           true,
		"__x64_sys_setsockopt":    true,
		"sock_def_readable":       true,
		"rtnl_notify":             true,
		"rtnetlink_rcv_msg":       true,
		"inet_rtm_newaddr":        true,
		"fib_table_insert":        true,
		"nexthop_notify":          true,
		"cleanup_net":             true,
		"net_ctl_permissions":     true,
		"__dev_change_flags":      true,
		"tc_ctl_tfilter":          true,
		"raw_sendmsg":             true,
		"kfree_skb_reason":        true,
		"_find_next_and_bit":      false,
		"flush_tlb_mm_range":      false,
		"raw_spin_rq_lock_nested": false,
		"_raw_spin_lock":          false,
		"task_work_run":           false,
		"clocksource_watchdog":    false,
		"netfs_read_folio":        false, // 9p's reads under virtme-ng
		"hrtimer_wakeup":          false,
		"do_nanosleep":            false,
	} {
		if got := networkingFunc(name); got != want {
			t.Errorf("networkingFunc(%q) = %v, want %v", name, got, want)
		}
	}
}

// A KCSAN race without a networking frame is set aside and said; the
// same race with a networking frame anywhere in its stack, a race in
// netlink, a KCSAN report whose stacks could not be read and any other
// kind of report outside networking still fail.
func TestSiftSetsAsideRacesOutsideNetworking(t *testing.T) {
	tlb := scanOne(t, tlbRace)
	if fp := tlb.Fingerprint(); fp != tlbRaceFingerprint {
		t.Fatalf("fingerprint %q, want %q", fp, tlbRaceFingerprint)
	}
	if !OutsideNetworking(tlb) {
		t.Fatalf("OutsideNetworking(%s) = false, want true", tlb)
	}
	// The same flush, under a socket's system call: deep in the stack,
	// below every frame the fingerprint names.
	underSocket := scanOne(t, strings.NewReplacer("do_madvise", "netlink_recvmsg", "__x64_sys_madvise", "__sys_recvmsg").Replace(tlbRace))
	if underSocket.Fingerprint() != tlbRaceFingerprint {
		t.Fatalf("the socket's variant has another fingerprint: %q", underSocket.Fingerprint())
	}
	inNetlink := scanOne(t, kcsanSplat)
	noStacks := Report{Kind: "KCSAN", Lines: []string{"BUG: KCSAN: data-race in _find_next_and_bit+0x43/0xca"}}
	warning := scanOne(t, strings.NewReplacer("BUG: KCSAN: data-race in _find_next_and_bit+0x43/0xca", "WARNING: CPU: 2 PID: 402 at mm/memory.c:1500 zap_page_range+0x1a4/0x21c",
		"race at unknown origin, with read to 0xffff888004b1a5c0 of 8 bytes by task 402 on cpu 2:", "Call Trace:").Replace(tlbRace))
	if warning.Kind != "WARNING" {
		t.Fatalf("the WARNING variant scanned as %q", warning.Kind)
	}

	fresh, notes := sift("", []Report{tlb}, []Report{underSocket}, []Report{inNetlink}, []Report{noStacks}, []Report{warning})
	if len(fresh[0]) != 0 || len(notes[0]) != 1 || !strings.HasPrefix(notes[0][0], "KCSAN report outside networking code") ||
		!strings.Contains(notes[0][0], tlbRaceFingerprint) {
		t.Errorf("the TLB race: let through %v, said %q; want it set aside, said with its fingerprint", fresh[0], notes[0])
	}
	for i, name := range []string{"", "under a socket call", "in netlink", "without stacks", "a WARNING"} {
		if i == 0 {
			continue
		}
		if len(fresh[i]) != 1 || len(notes[i]) != 1 || !strings.HasPrefix(notes[i][0], "new kernel report") {
			t.Errorf("%s: let through %d, said %q; want it failed as a new report", name, len(fresh[i]), notes[i])
		}
	}
}

// The races kept as raw reports: those through a notification's delivery
// (pollwake under __netlink_sendskb) or a sysctl's permission check in
// net_ctl_permissions are networking's; the timer, sleep and power-off
// races are not.
func TestRecordedRacesScope(t *testing.T) {
	want := map[string]bool{
		"u-kcsan-strict-poll_schedule_timeout-pollwake.txt":      false,
		"u-kcsan-strict-ns_capable_common-rcu_core.txt":          false,
		"u-kcsan-strict-__hrtimer_run_queues-hrtimer_active.txt": true,
		"u-kcsan-strict-do_nanosleep-hrtimer_wakeup.txt":         true,
		"p-kcsan-strict-do_nanosleep-hrtimer_wakeup.txt":         true,
		"u-kcsan-strict-_find_first_bit.txt":                     true,
	}
	files, err := filepath.Glob("testdata/*kcsan*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no KCSAN reports in testdata: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		outside, listed := want[filepath.Base(f)]
		if !listed {
			t.Errorf("%s: a raw KCSAN report this test does not place: add it", f)
			continue
		}
		if got := OutsideNetworking(scanOne(t, string(b))); got != outside {
			t.Errorf("%s: OutsideNetworking = %v, want %v", f, got, outside)
		}
	}
}
