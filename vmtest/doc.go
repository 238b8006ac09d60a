// SPDX-License-Identifier: GPL-2.0

// Command vmtest runs the netlink multicast kselftests inside a QEMU guest,
// so that a kernel can be tested from its bzImage alone: no root on the host
// and no virtme-ng.
//
// Usage:
//
//	go run ./vmtest [flags] -kernel BZIMAGE BIN...
//
// BIN... are static x86-64 test programs (in practice netlink_mcast_semantics
// and netlink_mcast_switch). vmtest builds a gzip'd newc initramfs holding
// them under /bin, plus /init built from ./vmtest/guestinit, boots it, and
// prints the guest's kselftest-runner TAP on stdout. The exit status is the
// suites': 0 all passed, 1 something failed, 4 everything skipped. A boot
// that goes wrong (kernel panic, timeout, /init never reached) exits 1 with
// the reason and the end of the kernel console on stderr. Command-line
// mistakes exit 2, and SIGINT or SIGTERM kills QEMU, removes the temporary
// files and exits 128+signal. Note that "go run" turns every non-zero status
// into 1: build the command (go build -o vmtest ./vmtest) to tell a skip
// from a failure.
//
// Two serial ports keep the output apart: the kernel console goes to ttyS0
// (QEMU's stdout; copied to stderr only with -v), while the guest init
// writes the TAP to ttyS1, which QEMU connects to a unix socket of vmtest's.
// Kernel messages therefore never land in the middle of a TAP line, even
// when a debug kernel prints a splat during a test. Marker lines starting
// "nlmc-vmtest: " (see package protocol) tell vmtest that /init started and
// what status it ended with; they are taken out of the TAP.
//
// The accelerator defaults to TCG, with -cpu max. "-accel auto" does not try
// KVM: /dev/kvm opening is no proof that a KVM guest runs, only booting one
// is, and on the machines this suite was written on KVM guests hang rather
// than fail, which would cost a full -timeout. Pass -accel kvm to use it.
//
// Settings for the guest: -append adds to the kernel command line (for
// example sysctl.net.core.netlink_route_mc_index=1, or nlmc.timeout=SECONDS
// for the per-program timeout, 300 by default), and -args gives every test
// program the same arguments. Temporary files live in a directory under
// /tmp that is removed on exit.
package main
