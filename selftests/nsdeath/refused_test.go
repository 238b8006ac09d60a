// SPDX-License-Identifier: GPL-2.0

package nsdeath

import (
	"testing"
	"time"

	"nlmcast/selftests/netns"
)

// A witness whose set-up fails (here its namespace is no namespace; on a
// kernel that refuses the RTNLGRP_NSID membership, the Join) returns the
// error. Before, In's clean-up waited for a spare probe no one was making,
// and the program hung before its first case.
func TestInReturnsWhenItsSetUpFails(t *testing.T) {
	done := make(chan error, 1)
	go func() {
		_, err := In(netns.FromFD("not-a-namespace", -1))
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("In succeeded in no namespace")
		}
		t.Logf("In: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("In still running after 10 s: its clean-up waits for what never comes")
	}
}
