// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"strings"
	"testing"

	"nlmcast/selftests/casecheck"
)

// A case reaches its sockets through selftests and selftests/nlsock (a
// receive timeout, a filter, a read into a sized buffer, a UDP socket,
// the bare calls fail-nth needs: nlsock.Socket.Bare). It keeps a raw
// socket call only where it tests that very call's edge, and says so with
// a "raw syscall:" comment.
func TestNoRawSocketCalls(t *testing.T) {
	raw, err := casecheck.RawSocketCalls(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 0 {
		t.Errorf("raw socket calls without a %q comment; use selftests or selftests/nlsock (add what is missing there, with a test), or say why the case needs the call raw:\n  %s",
			casecheck.RawAllow, strings.Join(raw, "\n  "))
	}
}
