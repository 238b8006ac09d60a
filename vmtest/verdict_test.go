// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestVerdict(t *testing.T) {
	type state struct {
		initStarted, opened, exitSeen bool
		exitStatus                    int
		running, panicLine            string
		stopCause, qemuErr            error
	}
	tests := []struct {
		name        string
		s           state
		wantStatus  int
		wantProblem string // substring; empty means no problem
	}{
		{"all passed", state{initStarted: true, opened: true, exitSeen: true, exitStatus: 0}, 0, ""},
		{"a failure", state{initStarted: true, opened: true, exitSeen: true, exitStatus: 1}, 1, ""},
		{"all skipped", state{initStarted: true, opened: true, exitSeen: true, exitStatus: 4}, 4, ""},
		{"odd status", state{initStarted: true, opened: true, exitSeen: true, exitStatus: 7}, 1, "exit status 7"},
		{"panic beats status", state{initStarted: true, opened: true, exitSeen: true, panicLine: "Kernel panic - not syncing: oops"}, 1, "panicked: Kernel panic - not syncing: oops"},
		{"never reached init", state{panicLine: "", qemuErr: errors.New("exit status 1")}, 1, "never reached /init (QEMU: exit status 1)"},
		{"channel never opened", state{initStarted: true}, 1, "could not open its TAP channel"},
		{"init died quietly", state{initStarted: true, opened: true}, 1, "without reporting an exit status"},
		{"hung in a test", state{initStarted: true, opened: true, running: "netlink_mcast_switch", stopCause: errTimedOut}, 1, "timed out after 5s (-timeout): QEMU killed; the guest was running netlink_mcast_switch"},
		{"hung in boot", state{stopCause: errTimedOut}, 1, "never reached /init"},
		{"interrupted", state{initStarted: true, stopCause: interruptedError{syscall.SIGTERM}}, 143, "interrupted by SIGTERM: QEMU killed"},
	}
	for _, tt := range tests {
		o := bootOutcome{
			stopCause: tt.s.stopCause,
			qemuErr:   tt.s.qemuErr,
			timeout:   5 * time.Second,
			console:   &consoleWatcher{initStarted: tt.s.initStarted, panicLine: tt.s.panicLine},
			tap:       &tapRelay{opened: tt.s.opened, exitSeen: tt.s.exitSeen, exitStatus: tt.s.exitStatus, running: tt.s.running},
		}
		status, problem := verdict(o)
		if status != tt.wantStatus {
			t.Errorf("%s: status %d, want %d", tt.name, status, tt.wantStatus)
		}
		if (tt.wantProblem == "") != (problem == "") || !strings.Contains(problem, tt.wantProblem) {
			t.Errorf("%s: problem %q, want it to contain %q", tt.name, problem, tt.wantProblem)
		}
	}
}
