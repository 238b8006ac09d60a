// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"bytes"
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/nlsock"
)

// readBackFlags are the SOL_NETLINK flag options every supported kernel
// reads back with getsockopt (NETLINK_LISTEN_ALL_NSID only since 6.9: its
// own cases read it).
var readBackFlags = []int{
	unix.NETLINK_PKTINFO, unix.NETLINK_BROADCAST_ERROR, unix.NETLINK_NO_ENOBUFS,
	unix.NETLINK_CAP_ACK, unix.NETLINK_EXT_ACK, unix.NETLINK_GET_STRICT_CHK,
}

// optionsReadBack: getsockopt(SOL_NETLINK) reads back each flag option as
// last set, whatever the others are: all 0 on a new socket, then each set
// in turn, then each cleared, every flag read after every change. A flag
// read into more room than an int takes 4 bytes and says so (optlen 4),
// into less it is EINVAL, an option netlink does not have
// ENOPROTOOPT. NETLINK_LIST_MEMBERSHIPS with optlen 0 writes nothing and
// reports the bytes the groups take, what a full read reports; into a
// buffer the process cannot write it fails with EFAULT, and so does any
// read whose optlen the process can read but not write, or cannot read,
// and any setsockopt whose value it cannot read (the option unchanged);
// a negative optlen is EINVAL.
//
// Kernel: netlink_getsockopt(): if (get_user(len, optlen)) return
// -EFAULT; if (len < 0) return -EINVAL; flag = NETLINK_F_...; if (len <
// sizeof(int)) return -EINVAL; len = sizeof(int); val = test_bit(flag,
// &nlk->flags); put_user(len, optlen); copy_to_user(optval, &val, len);
// default: return -ENOPROTOOPT; NETLINK_LIST_MEMBERSHIPS: if (len < 0)
// return -EINVAL; for each u32 that fits: if (put_user(...)) { err =
// -EFAULT; break; }; put_user(ALIGN(BITS_TO_BYTES(nlk->ngroups),
// sizeof(u32)), optlen) else err = -EFAULT; return err; netlink_setsockopt():
// if (optlen >= sizeof(int) && copy_from_sockptr(&val, optval,
// sizeof(val))) return -EFAULT; nr =
// NETLINK_F_...; assign_bit(nr, &nlk->flags, val).
func optionsReadBack(t selftests.T) {
	s := selftests.NewNS(t, "S")
	k := s.Socket("k", selftests.Join(unix.RTNLGRP_IPV4_IFADDR))
	want := map[int]int{}
	expectAll := func() {
		t.Helper()
		for _, f := range readBackFlags {
			expectOption(t, k, f, want[f])
		}
	}
	expectAll()
	for _, on := range []bool{true, false} {
		for _, f := range readBackFlags {
			k.SetFlag(f, on)
			want[f] = flagValue(on)
			expectAll()
		}
	}

	// Into more room than an int, a flag still takes 4 bytes, optlen
	// says so, and the rest is not written.
	wide := bytes.Repeat([]byte{0xa5}, 8)
	if n, err := k.OptionInto(unix.NETLINK_PKTINFO, wide); err != nil || n != 4 || !bytes.Equal(wide[4:], []byte{0xa5, 0xa5, 0xa5, 0xa5}) {
		t.Errorf("%s: getsockopt(NETLINK_PKTINFO) into 8 bytes: optlen %d, % x, %v; want optlen 4 and the last 4 bytes untouched", k, n, wide, err)
	}
	short := make([]byte, 2)
	if n, err := k.OptionInto(unix.NETLINK_PKTINFO, short); !errors.Is(err, unix.EINVAL) {
		t.Errorf("%s: getsockopt(NETLINK_PKTINFO) into 2 bytes: %d, %v; want EINVAL", k, n, err)
	}
	if n, err := k.OptionInto(unix.NETLINK_ADD_MEMBERSHIP, make([]byte, 4)); !errors.Is(err, unix.ENOPROTOOPT) {
		t.Errorf("%s: getsockopt(NETLINK_ADD_MEMBERSHIP), which is set-only: %d, %v; want ENOPROTOOPT", k, n, err)
	}

	size, err := k.MembershipsSize()
	if err != nil {
		t.Fatalf("%v", err)
	}
	// A full read, into room for 256 groups, reports the same length.
	if full, err := k.OptionInto(unix.NETLINK_LIST_MEMBERSHIPS, make([]byte, 32)); err != nil || size != full || size < 4 {
		t.Errorf("%s: NETLINK_LIST_MEMBERSHIPS with optlen 0 reports %d bytes, a full read %d (%v); want the same, at least one u32", k, size, full, err)
	}
	page, err := unix.Mmap(-1, 0, unix.Getpagesize(), unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatalf("mmap(PROT_NONE): %v", err)
	}
	defer unix.Munmap(page)
	if n, err := k.ListMembershipsAt(uintptr(unsafe.Pointer(&page[0])), size); !errors.Is(err, unix.EFAULT) {
		t.Errorf("%s: NETLINK_LIST_MEMBERSHIPS into %d bytes the process cannot write: %d, %v; want EFAULT", k, size, n, err)
	}
	expectOptlenFault(t, k, size)
	expectMemberships(t, k, unix.RTNLGRP_IPV4_IFADDR)
	expectUnreadableFault(t, k, size)
}

// expectUnreadableFault: a getsockopt whose optlen, or a setsockopt whose
// 4-byte optval, the kernel cannot read fails with EFAULT and changes
// nothing: no value is written, a set flag stays set, the memberships
// stay as they were. (Going on would use a length or value the kernel
// never read: get_user() and copy_from_user() leave zeroes behind a
// fault, which would clear a flag or ask for group 0.)
func expectUnreadableFault(t selftests.T, k *selftests.Sock, size int) {
	t.Helper()
	page, err := unix.Mmap(-1, 0, unix.Getpagesize(), unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatalf("mmap(PROT_NONE): %v", err)
	}
	defer unix.Munmap(page)
	unreadable := uintptr(unsafe.Pointer(&page[0]))
	val := bytes.Repeat([]byte{0xa5}, 4)
	if err := k.OptionAt(unix.NETLINK_PKTINFO, uintptr(unsafe.Pointer(&val[0])), unreadable); !errors.Is(err, unix.EFAULT) || !bytes.Equal(val, []byte{0xa5, 0xa5, 0xa5, 0xa5}) {
		t.Errorf("%s: getsockopt(NETLINK_PKTINFO) with an optlen the process cannot read: %v, value % x; want EFAULT and the value not written", k, err, val)
	}
	groups := bytes.Repeat([]byte{0xa5}, size)
	if err := k.OptionAt(unix.NETLINK_LIST_MEMBERSHIPS, uintptr(unsafe.Pointer(&groups[0])), unreadable); !errors.Is(err, unix.EFAULT) || !bytes.Equal(groups, bytes.Repeat([]byte{0xa5}, size)) {
		t.Errorf("%s: NETLINK_LIST_MEMBERSHIPS with an optlen the process cannot read: %v, groups % x; want EFAULT and nothing written", k, err, groups)
	}
	// A negative optlen is EINVAL before any option is looked at.
	negative := int32(-1)
	for _, opt := range []int{unix.NETLINK_PKTINFO, unix.NETLINK_LIST_MEMBERSHIPS} {
		got := bytes.Repeat([]byte{0xa5}, 4)
		if err := k.OptionAt(opt, uintptr(unsafe.Pointer(&got[0])), uintptr(unsafe.Pointer(&negative))); !errors.Is(err, unix.EINVAL) || negative != -1 || !bytes.Equal(got, []byte{0xa5, 0xa5, 0xa5, 0xa5}) {
			t.Errorf("%s: getsockopt(%s) with optlen -1: %v, optlen %d, value % x; want EINVAL, nothing written", k, nlsock.OptionName(opt), err, negative, got)
		}
	}
	k.SetFlag(unix.NETLINK_PKTINFO, true)
	if err := k.SetOptionAt(unix.NETLINK_PKTINFO, unreadable, 4); !errors.Is(err, unix.EFAULT) {
		t.Errorf("%s: setsockopt(NETLINK_PKTINFO) from 4 bytes the process cannot read: %v; want EFAULT", k, err)
	}
	expectOption(t, k, unix.NETLINK_PKTINFO, 1)
	k.SetFlag(unix.NETLINK_PKTINFO, false)
	if err := k.SetOptionAt(unix.NETLINK_ADD_MEMBERSHIP, unreadable, 4); !errors.Is(err, unix.EFAULT) {
		t.Errorf("%s: setsockopt(NETLINK_ADD_MEMBERSHIP) from 4 bytes the process cannot read: %v; want EFAULT", k, err)
	}
	expectMemberships(t, k, unix.RTNLGRP_IPV4_IFADDR)
}

// expectOptlenFault: an optlen the kernel can read but not write back
// fails the read with EFAULT. For NETLINK_LIST_MEMBERSHIPS the group words
// are written first, then the length fails; for a flag the length is
// written first, so the value is not written at all.
func expectOptlenFault(t selftests.T, k *selftests.Sock, size int) {
	t.Helper()
	page, err := unix.Mmap(-1, 0, unix.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	defer unix.Munmap(page)
	optlen := (*int32)(unsafe.Pointer(&page[0]))
	*optlen = int32(size)
	if err := unix.Mprotect(page, unix.PROT_READ); err != nil {
		t.Fatalf("mprotect(PROT_READ): %v", err)
	}
	want := make([]byte, size)
	if n, err := k.OptionInto(unix.NETLINK_LIST_MEMBERSHIPS, want); err != nil || n != size {
		t.Fatalf("%s: NETLINK_LIST_MEMBERSHIPS into %d bytes: %d, %v", k, size, n, err)
	}
	got := bytes.Repeat([]byte{0xa5}, size)
	if err := k.OptionAt(unix.NETLINK_LIST_MEMBERSHIPS, uintptr(unsafe.Pointer(&got[0])), uintptr(unsafe.Pointer(optlen))); !errors.Is(err, unix.EFAULT) {
		t.Errorf("%s: NETLINK_LIST_MEMBERSHIPS with an optlen the process cannot write: %v; want EFAULT", k, err)
	} else if !bytes.Equal(got, want) {
		t.Errorf("%s: NETLINK_LIST_MEMBERSHIPS with an optlen the process cannot write: groups % x, want % x (written before the length fails)", k, got, want)
	}
	val := bytes.Repeat([]byte{0xa5}, 4)
	if err := k.OptionAt(unix.NETLINK_PKTINFO, uintptr(unsafe.Pointer(&val[0])), uintptr(unsafe.Pointer(optlen))); !errors.Is(err, unix.EFAULT) || !bytes.Equal(val, []byte{0xa5, 0xa5, 0xa5, 0xa5}) {
		t.Errorf("%s: getsockopt(NETLINK_PKTINFO) with an optlen the process cannot write: %v, value % x; want EFAULT and the value not written", k, err, val)
	}
}
