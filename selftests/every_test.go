// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"sync/atomic"
	"testing"
	"time"
)

// Every calls fn until stopped; stop waits for the ticker to end, so no
// call comes after it; 0 calls nothing.
func TestEvery(t *testing.T) {
	calls := make(chan struct{}, 100)
	var after atomic.Bool
	stop := Every(10*time.Millisecond, func() {
		if after.Load() {
			t.Error("a call after stop")
		}
		select {
		case calls <- struct{}{}:
		default:
		}
	})
	for i := 0; i < 3; i++ {
		select {
		case <-calls:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d calls in 10 s at one per 10 ms", i)
		}
	}
	stop()
	after.Store(true)
	stop() // twice is allowed
	Every(0, func() { t.Error("Every(0) called fn") })()
}
