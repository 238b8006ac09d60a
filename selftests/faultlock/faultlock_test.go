// SPDX-License-Identifier: GPL-2.0

package faultlock

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A second holder waits for the first one's release, and a holder in
// another process makes Acquire fail with ErrBusy naming it, until that
// process is gone.
func TestAcquireSerialises(t *testing.T) {
	Path = filepath.Join(t.TempDir(), "lock")
	release, _, err := Acquire("first", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		r, _, err := Acquire("second", 10*time.Second)
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
		r, _, err := Acquire("third", 0)
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
	r, _, err := Acquire("fourth", 5*time.Second)
	if err != nil {
		t.Fatalf("after the other process ended: %v", err)
	}
	r()
}

// A kernel without file locks (flock gives ENOSYS) gets the pid file: it
// serialises two holders, names the holder when busy, goes on release,
// and a stale one (its holder dead) is taken over.
func TestAcquireWithoutFileLocking(t *testing.T) {
	Path = filepath.Join(t.TempDir(), "lock")
	flock = func(int, int) error { return unix.ENOSYS }
	defer func() { flock = unix.Flock }()
	release, unlocked, err := Acquire("x", time.Second)
	if err != nil || !strings.Contains(unlocked, "CONFIG_FILE_LOCKING") {
		t.Fatalf("Acquire: %q, %v; want the lock and the reason for the pid file", unlocked, err)
	}
	if _, _, err := Acquire("y", 50*time.Millisecond); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "x ") {
		t.Fatalf("second holder while x holds it: %v, want ErrBusy naming x", err)
	}
	release()
	if _, err := os.Stat(pidPath()); !os.IsNotExist(err) {
		t.Fatalf("pid file after release: %v", err)
	}
	// A holder that died without releasing: a pid that is not alive.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pidPath(), []byte(fmt.Sprintf("gone %d\n", dead.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	release, _, err = Acquire("z", time.Second)
	if err != nil {
		t.Fatalf("a stale pid file: %v, want it taken over", err)
	}
	release()
}

// Nothing is mounted on a directory that does not exist; a read of the
// mount table itself works.
func TestDebugfsMounted(t *testing.T) {
	if got, err := DebugfsMounted("/nonexistent/debugfs"); got || err != nil {
		t.Errorf("DebugfsMounted(/nonexistent/debugfs) = %v, %v; want false, nil", got, err)
	}
}
