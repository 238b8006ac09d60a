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

func TestParseRow(t *testing.T) {
	text := `sk               Eth Pid        Groups   Rmem     Wmem     Dump  Locks    Drops    Inode
0000000012345678 0   0          00000000 1280     0        0     2        0        0
00000000abcdef01 0   4242       00000010 4352     0        1     2        3        5123
00000000abcdef02 16  4242       00000000 0        0        0     2        0        5124
`
	r, err := parseRow(strings.NewReader(text), 0, 4242)
	if err != nil || r != (Row{Rmem: 4352, Dump: true, Drops: 3}) {
		t.Errorf("portid 4242: %+v, %v", r, err)
	}
	if r, err := parseRow(strings.NewReader(text), 0, 0); err != nil || r != (Row{Rmem: 1280}) {
		t.Errorf("kernel socket: %+v, %v", r, err)
	}
	if _, err := parseRow(strings.NewReader(text), 0, 7); !errors.Is(err, errNoRow) {
		t.Errorf("portid 7: %v, want errNoRow for a missing line (readRow reads again)", err)
	}
}
