// SPDX-License-Identifier: GPL-2.0

package netns

import (
	"os"
	"testing"
)

// A goroutine that switched namespace must never retire the main thread
// (the runtime would wedge it in that namespace, which then never dies):
// /proc/self/ns/net, the main thread's, stays where the process started.
// Without the main goroutine locked to the main thread this failed on the
// first namespace: the test's own goroutine waits, and the scheduler ran
// New's goroutine on the idle main thread.
func TestMainThreadKeepsItsNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (unshare(CLONE_NEWNET))")
	}
	start, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		ns, err := New("probe")
		if err != nil {
			t.Fatal(err)
		}
		if err := ns.Do(func() error { return nil }); err != nil {
			t.Fatal(err)
		}
		ns.Close()
		if now, _ := os.Readlink("/proc/self/ns/net"); now != start {
			t.Fatalf("after %d namespaces the main thread is in %s, not %s", i+1, now, start)
		}
	}
}
