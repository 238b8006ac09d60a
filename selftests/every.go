// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"sync"
	"time"
)

// Every calls fn every d (never when d is 0 or less) from a goroutine of
// its own until the returned stop is called. stop returns once fn is no
// longer running and will not run again; it may be called more than once.
// For the lines that say a slow step is still going.
func Every(d time.Duration, fn func()) (stop func()) {
	if d <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(d)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				fn()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		wg.Wait()
	}
}
