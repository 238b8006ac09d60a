// SPDX-License-Identifier: GPL-2.0

package faultlock

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A second holder waits for the first one's release, and a holder in
// another process makes Acquire fail with ErrBusy naming it, until that
// process is gone.
func TestAcquireSerialises(t *testing.T) {
	Path = filepath.Join(t.TempDir(), "lock")
	release, err := Acquire("first", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		r, err := Acquire("second", 10*time.Second)
		if err == nil {
			r()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("the second holder got the lock while the first held it: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	release()
	if err := <-got; err != nil {
		t.Fatalf("the second holder after the first's release: %v", err)
	}

	// Another process: flock(1) holds the file for as long as it sleeps.
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock(1) for the other process")
	}
	cmd := exec.Command("flock", "-o", Path, "sh", "-c", `echo 'other[1]' >"$0"; exec sleep 30`, Path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill := func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) } // flock(1) and its sleep
	defer kill()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := Acquire("third", 0)
		if err != nil && strings.Contains(err.Error(), "other[1]") {
			break
		}
		if err != nil && !errors.Is(err, ErrBusy) {
			t.Fatalf("busy lock: %v, want ErrBusy", err)
		}
		if err == nil {
			r() // flock(1) has not taken it yet
		}
		if time.Now().After(deadline) {
			t.Fatalf("flock(1) never held the lock with its name in it: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	kill()
	cmd.Wait()
	r, err := Acquire("fourth", 5*time.Second)
	if err != nil {
		t.Fatalf("after the other process ended: %v", err)
	}
	r()
}
