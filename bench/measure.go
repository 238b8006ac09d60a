// SPDX-License-Identifier: GPL-2.0

package main

import (
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// cost is what one thread spent on a work unit.
type cost struct {
	wall, thread, user, sys time.Duration
}

func (a cost) add(b cost) cost {
	return cost{max(a.wall, b.wall), a.thread + b.thread, a.user + b.user, a.sys + b.sys}
}

// threadClock reads the calling thread's CPU time and rusage.
func threadClock() (thread, user, sys time.Duration) {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_THREAD, &ru)
	return time.Duration(ts.Nano()), time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// sender is a goroutine locked to its OS thread for its whole life, so
// that the thread clocks measure exactly the work units it runs and the
// scheduler never moves the sender mid-unit.
type sender struct {
	jobs chan func()
	wg   sync.WaitGroup
}

func newSender() *sender {
	s := &sender{jobs: make(chan func())}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for job := range s.jobs {
			job()
		}
	}()
	return s
}

func (s *sender) stop() {
	close(s.jobs)
	s.wg.Wait()
}

// timed runs unit on the sender's thread, starting when start is closed,
// and returns its cost.
func (s *sender) timed(start <-chan struct{}, unit func() error) <-chan timedResult {
	out := make(chan timedResult, 1)
	s.jobs <- func() {
		<-start
		t0, u0, s0 := threadClock()
		w0 := time.Now()
		err := unit()
		w := time.Since(w0)
		t1, u1, s1 := threadClock()
		out <- timedResult{cost{w, t1 - t0, u1 - u0, s1 - s0}, err}
	}
	return out
}

type timedResult struct {
	cost cost
	err  error
}

// measure runs one unit per sender at once and returns the combined cost:
// the wall time until the last one finished, the threads' times summed.
func measure(senders []*sender, units []func() error) (cost, error) {
	start := make(chan struct{})
	results := make([]<-chan timedResult, len(units))
	for i, u := range units {
		results[i] = senders[i].timed(start, u)
	}
	w0 := time.Now()
	close(start)
	var total cost
	var firstErr error
	for _, r := range results {
		res := <-r
		total = total.add(res.cost)
		if res.err != nil && firstErr == nil {
			firstErr = res.err
		}
	}
	if len(units) > 1 {
		total.wall = time.Since(w0)
	}
	return total, firstErr
}
