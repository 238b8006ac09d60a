// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// TestFlipKindsInCurrentMode runs every kind of change of flips.go
// without touching the switch: build and check, change, check. On a
// kernel without the switch this checks the model, kind by kind, against
// the unpatched walk.
func TestFlipKindsInCurrentMode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces")
	}
	for _, k := range flipKinds {
		t.Run(k.name, func(t *testing.T) {
			sc := emptyScenario(t)
			f := k.build(sc)
			f.events()
			f.change()
			f.events()
		})
	}
}

// forgetOne makes the model forget one change of each kind, as a kernel
// would behave that missed the list update behind it: the socket loses
// what the change gave it (a group, or foreign events), or, for the socket
// without CAP_NET_BROADCAST, gets foreign events the capability check
// refuses.
var forgetOne = map[string]func(sc *scenario){
	"rebind":                      func(sc *scenario) { delete(sc.m("sz").groups, gAddr) },
	"join":                        func(sc *scenario) { delete(sc.m("oj").groups, gAddr) },
	"leave":                       func(sc *scenario) { delete(sc.m("orj").groups, gAddr) },
	"all_nsid_set_and_cleared":    func(sc *scenario) { sc.m("oset").noCap = true },
	"close":                       func(sc *scenario) { delete(sc.m("sn").groups, gAddr) },
	"groups_above_32_only":        func(sc *scenario) { delete(sc.m("s36").groups, gStats) },
	"all_nsid_subscribed_by_bind": func(sc *scenario) { sc.m("om").noCap = true },
	"usersock_pair":               func(sc *scenario) { delete(sc.m("uj").groups, userGroup) },
	"no_cap_net_broadcast":        func(sc *scenario) { sc.m("nj").noCap = false },
	"device_moved_between_netns":  func(sc *scenario) { delete(sc.m("a").groups, gAddr) },
	"netns_dies":                  func(sc *scenario) { sc.m("on").noCap = true },
}

// TestFlipKindsSeeEveryChange shows that each kind's check can fail: with
// one change forgotten by the model (forgetOne), the events after the
// change must make the case fail, with a diff naming the socket.
func TestFlipKindsSeeEveryChange(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces")
	}
	for _, k := range flipKinds {
		t.Run(k.name, func(t *testing.T) {
			forget, ok := forgetOne[k.name]
			if !ok {
				t.Fatalf("no fault to inject for kind %s", k.name)
			}
			r := &recorder{T: t}
			r.run(func() {
				sc := emptyScenario(r)
				f := k.build(sc)
				f.events()
				f.change()
				forget(sc)
				f.events()
			})
			switch {
			case r.skipped != "":
				t.Skip(r.skipped)
			case len(r.errors) == 0:
				t.Errorf("with a change forgotten by the model, the case still passed")
			case !strings.Contains(strings.Join(r.errors, "\n"), "unexpected transcript"):
				t.Errorf("the case failed without a transcript diff: %q", r.errors)
			default:
				t.Logf("failed as it must:\n%s", strings.Join(r.errors, "\n"))
			}
		})
	}
}

// recorder is a selftests.T that records failures and skips instead of
// reporting them; Fatalf and Skipf end the goroutine run started.
type recorder struct {
	*testing.T
	mu      sync.Mutex
	errors  []string
	skipped string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Skipf(format string, args ...any) {
	r.mu.Lock()
	r.skipped = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.errors) > 0
}

// run runs body on a goroutine of its own and waits for it.
func (r *recorder) run(body func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		body()
	}()
	<-done
}
