// SPDX-License-Identifier: GPL-2.0

// Command vmtest runs the netlink multicast kselftests inside a QEMU guest,
// so that a kernel can be tested from its image alone: no root on the host
// and no virtme-ng.
//
// Usage:
//
//	go run ./vmtest [flags] -kernel IMAGE BIN...
//
// IMAGE is an x86 bzImage or an arm64 Image (or Image.gz); its boot header
// says which (package kimage), and that chooses QEMU, the machine and the
// devices below. BIN... are static test programs for that architecture
// (in practice netlink_mcast_semantics and netlink_mcast_switch; GOARCH=arm64
// for an arm64 Image): a program of another architecture is refused before
// the boot, with both named. vmtest builds an uncompressed newc initramfs holding
// them under /bin, plus /init built from ./vmtest/guestinit for the image's
// architecture, boots it, and
// prints the guest's kselftest-runner TAP on stdout. The exit status is the
// suites': 0 all passed, 1 something failed, 4 everything skipped. A boot
// that goes wrong (kernel panic, timeout, /init never reached) exits 1 with
// the reason and the end of the kernel console on stderr. Command-line
// mistakes exit 2, and SIGINT or SIGTERM kills QEMU, removes the temporary
// files and exits 128+signal. Note that "go run" turns every non-zero status
// into 1: build the command (go build -o vmtest ./vmtest) to tell a skip
// from a failure.
//
// # Kernel health
//
// A run also fails (exit 1) when the kernel reported a problem, even if
// every program passed: vmtest scans the whole kernel console for BUG,
// WARNING, KASAN, UBSAN, lockdep, RCU stall, list corruption, refcount_t,
// Oops, panic, soft lockup, hung task, kmemleak and socket-freed-alive
// reports (package selftests/kmsg), and the init reports the taint mask
// (/proc/sys/kernel/tainted) when it starts and after the last program: a
// bit set in between fails the run too. Each report is printed on stderr
// with its first lines, then one summary line:
//
//	vmtest: kernel report 1 of 1: WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x0/0x10
//	  | WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x0/0x10
//	vmtest: FAIL: the guest kernel logged 1 kernel report (WARNING), although every program passed
//
// Where the kernel has kmemleak (CONFIG_DEBUG_KMEMLEAK), the init checks
// for leaks around each program as netdev's CI does around each test: it
// clears the suspects before the program, and after it scans, waits until
// 5 s (kmemleak's minimum age) have passed since the program ended, scans
// again and counts the suspects, with kmemleak.verbose set so that each is
// printed on the console with its allocation stack, a kernel report like
// any other. stderr says "nlmc-vmtest: kmemleak: 0 suspected leaks after
// PROGRAM (scanned in 9.3s)"; a count the console did not show fails the
// run too. debugfs is mounted only for these steps.
//
// After each program the init waits until the kernel has torn down every
// network namespace root made: with /proc/sys/user/max_net_namespaces at
// 1 (put back after), unshare(CLONE_NEWNET) is ENOSPC until cleanup_net()
// has run every exit method of the last one and lowered the count. The
// next program starts with no other program's namespace alive; one still
// there after 120 s fails the run ("nlmc-vmtest: netns: namespaces still
// there 120s after PROGRAM").
//
// The kernel runs with loglevel=7 so that reports logged below KERN_ERR
// (WARN, lockdep) reach the console. The programs' output never goes to the
// console, so a program printing "WARNING: ..." cannot pass for a report.
//
// # Console and TAP channel
//
// Two devices keep the output apart: the kernel console goes to the first
// serial port (QEMU's stdout; copied to stderr only with -v), while the
// guest init writes the TAP to a second channel, which QEMU connects to a
// unix socket of vmtest's. Kernel messages therefore never land in the
// middle of a TAP line, even when a debug kernel prints a splat during a
// test. On x86-64 (QEMU's pc machine, qemu-system-x86_64) the two are the
// 8250 UARTs ttyS0 and ttyS1. On arm64 (the virt machine,
// qemu-system-aarch64) the console is the PL011 UART ttyAMA0, and since
// virt has no second UART the TAP channel is a virtio console port on
// virtio-mmio, the guest's hvc0 (CONFIG_VIRTIO_MMIO, CONFIG_VIRTIO_CONSOLE).
// The kernel command line tells the init which device it is
// (nlmc.tap=/dev/hvc0). Power-off is ACPI on x86 and PSCI on arm64. Marker lines starting
// "nlmc-vmtest: " (see package protocol) tell vmtest that /init started, the
// taint mask and what status it ended with; they are taken out of the TAP.
//
// # Settings
//
// The accelerator defaults to TCG, with -cpu max. "-accel auto" does not try
// KVM: /dev/kvm opening is no proof that a KVM guest runs, only booting one
// is, and on the machines this suite was written on KVM guests hang rather
// than fail, which would cost a full -timeout. Pass -accel kvm to use it.
//
// -icount passes "-icount shift=0,sleep=off" to QEMU: the guest clock then
// advances 1 ns per guest instruction (and jumps over idle time), so guest
// timings count instructions and host load drops out. Guest time then runs
// slower than wall-clock time while the guest is busy. -icount boots one CPU
// unless -smp says otherwise: with QEMU 7.2 a 2-CPU x86 guest hangs under it
// while bringing up its second CPU. An arm64 guest boots with two CPUs
// under icount too (-icount -smp 2), but one CPU stays the default on both,
// so that their figures compare.
//
// -netns starts every program in a network namespace of its own with lo up,
// as run_kselftest.sh -n does, so no program runs in the initial namespace.
//
// -args gives every test program the same arguments; -prog-args NAME=ARGS
// (repeatable) adds arguments for the program named NAME only, after those,
// e.g. -prog-args 'netlink_mcast_stress=-duration 60s -mode switch'.
//
// Time limits: -prog-timeout is each program's limit in the guest (default
// 300s, as the kselftest runner; the same as -append nlmc.timeout=SECONDS).
// A program past it is killed and reported as "not ok ... # TIMEOUT", and
// the next one runs. -timeout is the wall-clock limit of the whole VM run;
// by default it is 120s plus the per-program timeout for each program
// (times 4 with -icount), so a hung program is reported by the guest, by
// name, before the host kills QEMU. A long run such as the stress program's
// three 60 s modes fits the defaults; give -prog-timeout when a program is
// to run longer than 300 s.
//
// -kselftest DIR runs the kernel's own kselftest runner instead of BIN...:
// DIR is an installed copy (make -C tools/testing/selftests TARGETS=...
// install, cross-built for the image's architecture), packed as
// /kselftest_install, and the guest's one program runs its run_kselftest.sh
// with the -args (e.g. -args '-t netlink_mcast:netlink_mcast_semantics').
// The runner's own TAP is then the program's output, one "# " deeper. The
// runner is a shell script, so -busybox names a static busybox for the
// image's architecture (Debian's busybox-static): /bin/sh and the runner's
// tools. The init also gives every program the /dev/fd, /dev/stdin,
// /dev/stdout and /dev/stderr links of a booted system (the runner writes
// to /dev/stdout). busybox's timeout lacks the --foreground the 6.1 runner
// gives /usr/bin/timeout, so none is installed there: the runner then runs
// each test without a limit of its own, and the init's per-program limit
// (-prog-timeout) bounds the whole runner.
//
// -append adds to the kernel command line (for example
// sysctl.net.core.netlink_route_mc_index=1). Temporary files live in a
// directory under /tmp that is removed on exit.
package main
