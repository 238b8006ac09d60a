// SPDX-License-Identifier: GPL-2.0

package nsdeath

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"nlmcast/selftests/netns"
)

func newWitness(t *testing.T) *Witness {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces")
	}
	w, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

func track(t *testing.T, w *Witness, name string) *netns.NS {
	t.Helper()
	ns, err := netns.New(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Track(ns, "test"); err != nil {
		t.Fatal(err)
	}
	return ns
}

// Namespaces whose last reference is gone are waited for.
func TestWaitReturnsOnceTornDown(t *testing.T) {
	w := newWitness(t)
	for _, n := range []string{"a", "b", "c"} {
		track(t, w, n).Close()
	}
	if err := w.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
}

// A namespace that is still referenced is never torn down: Wait gives up
// at its deadline and names it, with what holds it, and not the ones
// that went.
func TestWaitNamesWhatOutlivesTheDeadline(t *testing.T) {
	w := newWitness(t)
	track(t, w, "gone").Close()
	// However loaded the machine, the one released goes first.
	if err := w.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	track(t, w, "gone-too").Close()
	kept := track(t, w, "kept")
	defer kept.Close()
	err := w.Wait(2 * time.Second)
	if !errors.Is(err, errTimeout) || !strings.Contains(err.Error(), "kept (id ") || strings.Contains(err.Error(), "gone") {
		t.Fatalf("Wait = %v, want errTimeout naming only netns kept", err)
	}
}

// A barrier probe that could not be made ahead (the program was at its
// file limit then) is made again when Wait needs it.
func TestWaitRemakesAStarvedProbe(t *testing.T) {
	w := newWitness(t)
	if p := <-w.spare; p.ns != nil {
		p.ns.Close()
	}
	w.spare <- spareProbe{err: syscall.EMFILE}
	track(t, w, "a").Close()
	if err := w.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
}
