// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// PrivilegeSkip names the missing capability for an EPERM or EACCES when
// the thread lacks it, and gives nothing for another error or for a
// thread that has it (an EPERM no missing capability explains is a
// failure, not a SKIP).
func TestPrivilegeSkip(t *testing.T) {
	if has, err := HasCapability(unix.CAP_SYS_ADMIN); err != nil || !has || !InInitialUserNS() {
		t.Skipf("needs CAP_SYS_ADMIN in the initial user namespace (%v)", err)
	}
	eacces := fmt.Errorf("open failslab: %w", unix.EACCES)
	if got := PrivilegeSkip(eacces, unix.CAP_SYS_ADMIN, "x"); got != "" {
		t.Errorf("with the capability: %q, want nothing", got)
	}
	var without, other string
	if err := WithoutCapability(unix.CAP_SYS_ADMIN, func() error {
		without = PrivilegeSkip(eacces, unix.CAP_SYS_ADMIN, "writing failslab's settings")
		other = PrivilegeSkip(unix.ENOENT, unix.CAP_SYS_ADMIN, "x")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(without, "writing failslab's settings needs CAP_SYS_ADMIN, which this process lacks (open failslab: ") {
		t.Errorf("without the capability: %q", without)
	}
	if other != "" {
		t.Errorf("ENOENT without the capability: %q, want nothing", other)
	}
}
