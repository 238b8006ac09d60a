// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"testing"

	"nlmcast/bench/internal/kmem"
	"nlmcast/selftests/netns"
	"nlmcast/selftests/nsdeath"
)

// On the running kernel, a measurement of sockets finds one more
// netlink_sock per socket (a kmalloc object of at least 1 KiB), and one of
// namespaces at least 16 KiB per namespace. The host's counts are
// shrink-mode ones, and other processes allocate meanwhile, so no more
// than that is asked; the exact figures come from VMs (bench/results).
func TestMemoryScenesOnThisKernel(t *testing.T) {
	needRoot(t)
	if testing.Short() {
		t.Skip("waits for the host's slab counters to settle")
	}
	if reason := kmem.Available(); reason != "" {
		t.Skip(reason)
	}
	ns, err := netns.New("M")
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	witness, err := nsdeath.New()
	if err != nil {
		t.Fatal(err)
	}
	defer witness.Close()
	for _, sc := range []Scene{memoryScenes[0].override(300, -1), memoryScenes[1].override(20, -1)} {
		if err := roomForFDs(sc.N); err != nil {
			t.Fatal(err)
		}
		rec, err := measureMemory(t, sc, ns, witness)
		if errors.Is(err, errUnsettled) {
			t.Skipf("%s: %v (a busy machine: other processes allocate and free all the time)", sc.Name, err)
		}
		if err != nil {
			t.Fatalf("%s: %v", sc.Name, err)
		}
		rec.N, rec.Scene, rec.State, rec.Machine = sc.N, sc.Name, "U", "host"
		t.Logf("%s: %d bytes of objects per object (%s; settling took %d ms)", sc.Name, rec.ObjectBytes/int64(sc.N), rec.Method, rec.SettleMS)
		switch sc.Kind {
		case memSockets:
			if name, size := kmem.SocketCache([]kmem.Record{rec}); name == "" || size < 1024 {
				t.Errorf("no kmalloc cache of at least 1 KiB grew by one object per socket: %+v", rec.Caches)
			}
		case memNetns:
			if rec.ObjectBytes < 16<<10*int64(sc.N) {
				t.Errorf("%d bytes of objects per namespace: less than a loopback device and a struct net", rec.ObjectBytes/int64(sc.N))
			}
		}
	}
}
