// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
)

// refusedChild marks the test binary run as the program under a seccomp
// filter that refuses every NETLINK_ADD_MEMBERSHIP.
const refusedChild = "NLMC_SEMANTICS_REFUSED_MEMBERSHIP"

// A kernel that refuses every group membership (a 6.1 image answered
// NETLINK_ADD_MEMBERSHIP with ENOENT) must not hang the program before its
// plan: here a seccomp filter makes the running kernel answer so, and the
// program prints its plan, says the namespace teardown witness could not
// join RTNLGRP_NSID, runs the case (which fails, the membership refused)
// and ends. Before, it hung after the kernel log's marker until killed.
func TestRefusedMembershipDoesNotHang(t *testing.T) {
	if os.Getenv(refusedChild) == "1" {
		if err := refuseMemberships(); err != nil {
			os.Stderr.WriteString("seccomp: " + err.Error() + "\n")
			os.Exit(3)
		}
		os.Exit(selftests.Run(suite, []string{"-t", "local_subscriber_delivery"}, os.Stdout, os.Stderr))
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: the program makes network namespaces")
	}
	if runtime.GOARCH != "amd64" {
		t.Skip("the seccomp filter is written for x86-64's system call numbers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestRefusedMembershipDoesNotHang$")
	cmd.Env = append(os.Environ(), refusedChild+"=1")
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("the program still ran after 60 s (killed); output:\n%s\nstderr:\n%s", out.String(), errs.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("%v, want exit status 1 (the case fails); output:\n%s\nstderr:\n%s", err, out.String(), errs.String())
	}
	got := out.String()
	for _, want := range []string{
		"1..1\n",
		"# namespace teardown not waited for: ",
		"no such file or directory",
		"not ok 1 netlink_mcast_semantics.local_subscriber_delivery",
		"# Totals: pass:0 fail:1 ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	t.Logf("output:\n%s", got)
}

// refuseMemberships installs, on every thread of the process, a seccomp
// filter that fails setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP) with
// ENOENT and allows everything else.
func refuseMemberships() error {
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
		// struct seccomp_data: nr, arch, instruction_pointer, args[6]
		// (the low 32 bits of each first on little-endian).
		nr, arch, arg1, arg2 = 0, 4, 16 + 8, 16 + 16
	)
	filter := []unix.SockFilter{
		{Code: ld, K: arch},
		{Code: jeq, Jt: 0, Jf: 6, K: unix.AUDIT_ARCH_X86_64},
		{Code: ld, K: nr},
		{Code: jeq, Jt: 0, Jf: 4, K: unix.SYS_SETSOCKOPT},
		{Code: ld, K: arg1},
		{Code: jeq, Jt: 0, Jf: 2, K: unix.SOL_NETLINK},
		{Code: ld, K: arg2},
		{Code: jeq, Jt: 1, Jf: 0, K: unix.NETLINK_ADD_MEMBERSHIP},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOENT)},
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog))); e != 0 {
		return e
	}
	return nil
}
