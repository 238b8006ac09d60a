// SPDX-License-Identifier: GPL-2.0

package nlsock

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A system call that returns a positive value without errno did not
// succeed: the contract is 0.
func TestSyscallResult(t *testing.T) {
	if err := syscallResult(0, 0, 0); err != nil {
		t.Errorf("0: %v", err)
	}
	if err := syscallResult(^uintptr(0), 0, unix.EINVAL); !errors.Is(err, unix.EINVAL) {
		t.Errorf("-1 EINVAL: %v", err)
	}
	if err := syscallResult(1, 0, 0); err == nil || !strings.Contains(err.Error(), "returned 1") {
		t.Errorf("1: %v, want an error naming the value", err)
	}
}
