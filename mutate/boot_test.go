// SPDX-License-Identifier: GPL-2.0

package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeVMTest writes a shell script that stands in for vmtest.
func fakeVMTest(t *testing.T, script string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "vmtest")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func plan(vm string) bootPlan {
	return bootPlan{vmtest: vm, failFast: true, silence: 2 * time.Second, limit: time.Minute}
}

func TestBootFailFastStopsAtFirstFailedCase(t *testing.T) {
	vm := fakeVMTest(t, `echo "TAP version 13"
echo "# ok 1 netlink_mcast_semantics.local_subscriber"
echo "# not ok 2 netlink_mcast_semantics.foreign_subscriber"
exec sleep 1000
`)
	start := time.Now()
	p := plan(vm)
	p.silence = 30 * time.Second // only fail-fast ends this boot early
	r := boot(context.Background(), p, "img", io.Discard)
	if r.status != statusKilled || len(r.failed) != 1 || r.failed[0] != "netlink_mcast_semantics.foreign_subscriber" {
		t.Errorf("got %+v", r)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("fail-fast took %v: the boot was not stopped", d)
	}
}

func TestBootSilentIsHung(t *testing.T) {
	vm := fakeVMTest(t, "echo 'TAP version 13'\nexec sleep 1000\n")
	start := time.Now()
	r := boot(context.Background(), plan(vm), "img", io.Discard)
	if r.status != statusHung {
		t.Errorf("got %+v", r)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("hang known after %v, want about the 2 s silence", d)
	}
}

// The init's kmemleak steps, on stderr, keep a boot alive through a
// stretch without TAP longer than the silence; nothing else on stderr does.
func TestBootKmemleakStepsAreSignsOfLife(t *testing.T) {
	for _, tc := range []struct {
		marker string
		want   string
	}{
		{"nlmc-vmtest: kmemleak scan 1 of 2 after netlink_mcast_semantics", statusSurvived},
		{"nlmc-vmtest: something else", statusHung},
	} {
		vm := fakeVMTest(t, `echo "TAP version 13"
echo "ok 1 selftests: netlink_mcast: netlink_mcast_semantics"
for i in 1 2 3 4; do sleep 1; echo "`+tc.marker+`" >&2; done
echo "ok 2 selftests: netlink_mcast: netlink_mcast_switch"
`)
		r := boot(context.Background(), plan(vm), "img", io.Discard)
		if r.status != tc.want {
			t.Errorf("%q every second for 4 s, silence 2 s: %+v, want %s", tc.marker, r, tc.want)
		}
	}
}

func TestBootClasses(t *testing.T) {
	for _, tc := range []struct{ name, script, want string }{
		{"pass", "echo '# ok 1 netlink_mcast_semantics.a'\necho 'ok 1 selftests: netlink_mcast: netlink_mcast_semantics'\nexit 0\n", statusSurvived},
		{"panic", "echo 'vmtest: guest kernel panicked: Kernel panic - not syncing: Fatal exception' >&2\nexit 1\n", statusCrashed},
		{"report", "echo '# ok 1 x.a'\necho 'vmtest: FAIL: the guest kernel logged 1 kernel report (WARNING), although every program passed' >&2\nexit 1\n", statusCrashed},
		{"guest timeout", "echo 'not ok 1 selftests: netlink_mcast: netlink_mcast_semantics # TIMEOUT 120 seconds'\nexit 1\n", statusHung},
		// the runner's line for a failed program is not a case
		{"runner line only", "echo 'not ok 1 selftests: netlink_mcast: netlink_mcast_semantics # exit=1'\nexit 1\n", statusUnexplained},
		// a program's own check failed it (namespaces never torn down)
		{"bail out", "echo '# ok 1 netlink_mcast_semantics.a'\necho '# Bail out! the kernel did not finish tearing down the cases'\\'' namespaces'\necho 'not ok 1 selftests: netlink_mcast: netlink_mcast_semantics # exit=1'\nexit 1\n", statusKilled},
		// a bail out in a program that then passed is not a failure
		{"bail then ok", "echo '# Bail out! nothing'\necho 'ok 1 selftests: netlink_mcast: netlink_mcast_semantics'\nexit 0\n", statusSurvived},
	} {
		r := boot(context.Background(), plan(fakeVMTest(t, tc.script)), "img", io.Discard)
		if r.status != tc.want {
			t.Errorf("%s: got %q (%s), want %q", tc.name, r.status, r.detail, tc.want)
		}
	}
}

// A case the unmutated tree ran that skips on the mutant kills it (the
// switch program skips every case when the switch is gone); a case that
// skipped on the unmutated tree too does not.
// A program that bails out names its reason in the kill.
func TestBootBailOutNamesTheProgram(t *testing.T) {
	vm := fakeVMTest(t, `echo "# ok 1 netlink_mcast_switch.a"
echo "# Bail out! the kernel did not finish tearing down the cases' namespaces"
echo "not ok 2 selftests: netlink_mcast: netlink_mcast_switch # exit=1"
exit 1
`)
	r := boot(context.Background(), plan(vm), "img", io.Discard)
	want := "netlink_mcast_switch: Bail out! the kernel did not finish tearing down the cases' namespaces"
	if r.status != statusKilled || len(r.failed) != 1 || r.failed[0] != want {
		t.Errorf("got %+v, want killed by %q", r, want)
	}
}

func TestBootNewSkipKills(t *testing.T) {
	vm := fakeVMTest(t, `echo "# ok 1 netlink_mcast_switch.a # SKIP no switch"
echo "# ok 2 netlink_mcast_switch.b # SKIP no switch"
exit 0
`)
	p := plan(vm)
	p.ranBefore = map[string]bool{"netlink_mcast_switch.b": true}
	r := boot(context.Background(), p, "img", io.Discard)
	if r.status != statusKilled || len(r.failed) != 1 || !strings.HasPrefix(r.failed[0], "netlink_mcast_switch.b skipped") {
		t.Errorf("got %+v", r)
	}
	p.ranBefore = map[string]bool{}
	if r := boot(context.Background(), p, "img", io.Discard); r.status != statusSurvived {
		t.Errorf("skips as on the unmutated tree: got %+v", r)
	}
}
