// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"
)

// progress is what a mode is doing, for the progress lines it prints every
// -progress (10 s). A mode's result line comes only when it ends, minutes
// later on a debug kernel under TCG; without these lines a reader (a person
// at a console, or a harness that calls a guest hung after a minute of
// silence) cannot tell a mode at work from a stuck one. It says the phase,
// and once the run has started, its senders' batches and the switch
// writer's verified writes. Every field is published atomically: the
// mode's own goroutine sets them, the progress ticker reads them.
type progress struct {
	start   time.Time
	phase   atomic.Pointer[string]
	senders atomic.Pointer[[]*sender]
	writes  atomic.Pointer[atomic.Int64]
}

func newProgress(phase string) *progress {
	p := &progress{start: time.Now()}
	p.set(phase)
	return p
}

// set names the phase the mode is in; nil-safe, for modes run without a
// reader (the unit tests).
func (p *progress) set(phase string) {
	if p != nil {
		p.phase.Store(&phase)
	}
}

// running publishes the counters of a run that has started.
func (p *progress) running(senders []*sender, writes *atomic.Int64) {
	if p == nil {
		return
	}
	p.senders.Store(&senders)
	p.writes.Store(writes)
	p.set("running")
}

// line says where the mode is, e.g. `progress: running, 20s into the mode;
// batches S0 412, S1 398; switch writes 1520`.
func (p *progress) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "progress: %s, %.0fs into the mode", *p.phase.Load(), time.Since(p.start).Seconds())
	if ss := p.senders.Load(); ss != nil && len(*ss) > 0 {
		b.WriteString("; batches")
		for i, s := range *ss {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %s %d", s.name, s.completed.Load())
		}
	}
	if w := p.writes.Load(); w != nil {
		fmt.Fprintf(&b, "; switch writes %d", w.Load())
	}
	return b.String()
}
