// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"nlmcast/selftests/netns"
)

// capNames names the capabilities the suites need, for SKIP reasons.
var capNames = map[int]string{
	unix.CAP_NET_ADMIN:     "CAP_NET_ADMIN",
	unix.CAP_NET_BROADCAST: "CAP_NET_BROADCAST",
	unix.CAP_SYS_ADMIN:     "CAP_SYS_ADMIN",
}

// CapName names capability for diagnostics.
func CapName(capability int) string {
	if n, ok := capNames[capability]; ok {
		return n
	}
	return fmt.Sprintf("capability %d", capability)
}

// capabilities returns the calling thread's capability sets.
func capabilities() (*unix.CapUserHeader, *[2]unix.CapUserData, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return nil, nil, fmt.Errorf("capget: %w", err)
	}
	return &hdr, &data, nil
}

// HasCapability reports whether the calling thread has capability in its
// effective set (of its own user namespace).
func HasCapability(capability int) (bool, error) {
	_, data, err := capabilities()
	if err != nil {
		return false, err
	}
	return data[capability/32].Effective&(1<<(capability%32)) != 0, nil
}

// InInitialUserNS reports whether the program runs in the initial user
// namespace, whose uid_map is the identity over every id ("0 0
// 4294967295"). Root of any other (unshare -U) has its capabilities only
// over what that namespace owns, so capable() checks fail for it.
func InInitialUserNS() bool {
	b, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return true // no user namespaces in this kernel
	}
	return strings.Join(strings.Fields(string(b)), " ") == "0 0 4294967295"
}

// skipWithout ends the case as SKIP when err is the EPERM of what, an
// operation that needs capability, and the program lacks it: not in its
// effective set, or held only in a child user namespace (a fake root) while
// the kernel checks it over the initial one. Any other err, an EPERM
// included that no missing capability explains, is left to the caller.
func skipWithout(t T, err error, capability int, what string) {
	t.Helper()
	if why := lacks(err, capability); why != "" {
		t.Skipf("%s", PrivilegeSkip(err, capability, what))
	}
}

// PrivilegeSkip is the SKIP reason for err when it is an EPERM, or the
// EACCES of a file only a privileged process may open, that comes from
// the program lacking capability; "" when err is something else. For code
// that finds err where it cannot end the case itself (another thread).
func PrivilegeSkip(err error, capability int, what string) string {
	if !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.EACCES) {
		return ""
	}
	if why := lacksCapability(capability); why != "" {
		return fmt.Sprintf("%s needs %s, %s (%v)", what, CapName(capability), why, err)
	}
	return ""
}

// lacks says why err, an EPERM, comes from the program lacking
// capability, or returns "" when err is something else.
func lacks(err error, capability int) string {
	if !errors.Is(err, unix.EPERM) {
		return ""
	}
	return lacksCapability(capability)
}

// lacksCapability says why the program lacks capability (not in its
// effective set, or held in a child user namespace only), or returns "".
func lacksCapability(capability int) string {
	has, capErr := HasCapability(capability)
	switch {
	case capErr != nil:
		return ""
	case !has:
		return "which this process lacks"
	case !InInitialUserNS():
		return "in the initial user namespace; this process is root of a child user namespace only"
	}
	return ""
}

// WithoutCapability runs fn on a thread of its own whose effective set
// lacks capability (unix.CAP_NET_BROADCAST, unix.CAP_NET_ADMIN, ...).
// Capabilities belong to a thread and the thread is retired afterwards, so
// nothing else in the program loses it. A socket fn opens keeps the
// thread's credentials as its file credentials for good.
func WithoutCapability(capability int, fn func() error) error {
	return netns.OnThread(func() error {
		if err := dropCapability(capability); err != nil {
			return err
		}
		return fn()
	})
}

// dropCapability removes capability from the calling thread's effective
// set. Call it only on a thread that is retired afterwards (inside
// netns.NS.Do or netns.OnThread).
func dropCapability(capability int) error {
	hdr, data, err := capabilities()
	if err != nil {
		return err
	}
	data[capability/32].Effective &^= 1 << (capability % 32)
	if err := unix.Capset(hdr, &data[0]); err != nil {
		return fmt.Errorf("capset without %s: %w", CapName(capability), err)
	}
	return nil
}
