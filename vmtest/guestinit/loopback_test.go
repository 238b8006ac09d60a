// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"nlmcast/selftests/netns"
)

// loopbackHasIPv6 reads ns's /proc/net/if_inet6, which lists ::1 on lo only
// once lo is up.
func loopbackHasIPv6(t *testing.T, ns *netns.NS) bool {
	t.Helper()
	var data []byte
	if err := ns.Do(func() (err error) {
		data, err = os.ReadFile("/proc/thread-self/net/if_inet6")
		return err
	}); err != nil {
		t.Skipf("no IPv6 to tell lo's state by: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 6 && f[0] == "00000000000000000000000000000001" && f[5] == "lo" {
			return true
		}
	}
	return false
}

func TestBringLoopbackUp(t *testing.T) {
	ns, err := netns.New("lo-test")
	if errors.Is(err, unix.EPERM) {
		t.Skip("needs CAP_SYS_ADMIN for a network namespace")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	if loopbackHasIPv6(t, ns) {
		t.Fatal("lo of a fresh namespace already has ::1: the check below proves nothing")
	}
	if err := bringLoopbackUp(ns); err != nil {
		t.Fatal(err)
	}
	if !loopbackHasIPv6(t, ns) {
		t.Error("lo has no ::1 after bringLoopbackUp: it is not up")
	}
}
