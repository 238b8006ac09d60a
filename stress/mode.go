// SPDX-License-Identifier: GPL-2.0

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"nlmcast/selftests/mcswitch"
	"nlmcast/stress/internal/verify"
)

// config is the validated command line.
type config struct {
	duration      time.Duration // the least a mode runs
	maxDuration   time.Duration // the most it runs to reach the minima
	senders       int
	minBatches    int
	minWrites     int64
	cycles        int
	idle          int
	nsPace        time.Duration
	injectDup     bool
	injectWarning bool
	// injectTeardownWarning writes the WARNING once the mode has released
	// its namespaces, while the kernel tears them down.
	injectTeardownWarning bool
}

// mode is one of the three runs.
type mode struct {
	name  string
	value string // the switch value held during the run; "" = flipping
	about string
}

var modes = []mode{
	{"fixed0", "0", "switch held at 0 (the global walk; on a kernel without the switch, its only walk)"},
	{"fixed1", "1", "switch held at 1 (the per-netns index walk)"},
	{"switch", "", "switch flipped between 0 and 1 as fast as the kernel takes it, from its own thread"},
}

// outcome is what one mode found.
type outcome struct {
	problems []string
	notes    []string
	report   modeReport
}

func (o *outcome) fail(f string, a ...any) { o.problems = append(o.problems, fmt.Sprintf(f, a...)) }

// runMode runs one mode: fresh namespaces, stable receivers, idle
// subscribers, senders, churn and (switch mode) the switch writer, for
// cfg.duration; then it judges every receiver.
func runMode(ctx context.Context, cfg config, m mode, sw *mcswitch.Switch, cpus []int) (out outcome) {
	out.report.Mode = m.name
	t := &topology{cfg: cfg}
	defer func() {
		t.close()
		if cfg.injectTeardownWarning {
			if err := writeKernelWarning(); err != nil {
				out.fail("-inject-teardown-warning: %v", err)
				return
			}
			out.notes = append(out.notes, "self-test: wrote a WARNING line to /dev/kmsg once the namespaces were released")
		}
	}()
	if err := t.build(cpus); err != nil {
		out.fail("setup: %v", err)
		return out
	}
	out.report.IdleSubscribers = len(t.idle)

	out.report.Switch = "absent"
	if sw != nil {
		v, state := m.value, m.value
		if v == "" {
			v, state = "0", "flipping"
		}
		if err := sw.Set(v); err != nil {
			out.fail("setup: %v", err)
			return out
		}
		out.report.Switch = state
	}

	elapsed, writes := t.run(ctx, &out, sw)
	if ctx.Err() != nil {
		out.report.Interrupted = true
	}
	t.judge(&out)
	if sw != nil && m.value != "" {
		if v, err := sw.Read(); err != nil || v != m.value {
			out.fail("the switch reads %q (%v) after the run, it was held at %s", v, err, m.value)
		}
	}
	fillReport(&out.report, elapsed, t.senders, &t.churn.counts, writes)
	if !out.report.Interrupted {
		for _, s := range t.senders {
			if s.batches < cfg.minBatches {
				out.fail("sender %s completed %d batches in %.1fs (-max-duration %s), fewer than -min-batches %d", s.name, s.batches, elapsed.Seconds(), cfg.maxDuration, cfg.minBatches)
			}
		}
		if out.report.Switch == "flipping" && writes < cfg.minWrites {
			out.fail("the switch writer made %d verified writes in %.1fs (-max-duration %s), fewer than -min-writes %d", writes, elapsed.Seconds(), cfg.maxDuration, cfg.minWrites)
		}
	}
	return out
}

// run starts the senders, the churn threads and, when the switch flips,
// its writer. It stops them all once cfg.duration has passed and every
// sender has completed cfg.minBatches batches and the writer cfg.minWrites
// writes, or at cfg.maxDuration, on ctx, or on the first error. It
// returns how long the senders ran and the verified switch writes.
func (t *topology) run(ctx context.Context, out *outcome, sw *mcswitch.Switch) (time.Duration, int64) {
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var writes atomic.Int64
	flipping := out.report.Switch == "flipping"
	go t.monitor(runCtx, stop, &writes, flipping)
	var mu sync.Mutex
	note := func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		out.problems = append(out.problems, fmt.Sprintf(f, a...))
	}
	failRun := func(what string, err error) {
		note("%s: %v", what, err)
		stop()
	}
	seed := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))

	start := time.Now()
	var workers, senders sync.WaitGroup
	for _, s := range t.senders {
		senders.Add(1)
		go func() {
			defer senders.Done()
			s.run(runCtx)
			if s.err != nil {
				failRun("sender "+s.name, s.err)
			}
		}()
	}
	worker := func(what string, fn func() error) {
		workers.Add(1)
		go func() {
			defer workers.Done()
			if err := fn(); err != nil && runCtx.Err() == nil {
				failRun(what, err)
			}
		}()
	}
	ch := t.churn
	for _, w := range t.places {
		s := seed.Uint64()
		worker("socket churn in netns "+w.ns.Name, func() error { return ch.sockets(runCtx, w, w.ns.Name+"-open", s) })
	}
	s1, s2, s3 := seed.Uint64(), seed.Uint64(), seed.Uint64()
	worker("membership churn", func() error { return ch.membership(runCtx, t.members, s1) })
	worker("option churn", func() error { return ch.options(runCtx, t.options, s2) })
	worker("namespace churn", func() error { return ch.namespaces(runCtx, t.senders, t.cfg.nsPace, s3) })
	if flipping {
		workers.Add(1)
		go func() {
			defer workers.Done()
			if err := flipSwitch(runCtx, sw, &writes); err != nil {
				failRun("switch writer", err)
			}
		}()
	}
	if t.cfg.injectWarning {
		warn := time.AfterFunc(t.cfg.duration/2, func() {
			if err := writeKernelWarning(); err != nil {
				failRun("-inject-warning", err)
				return
			}
			mu.Lock()
			out.notes = append(out.notes, "self-test: wrote a WARNING line to /dev/kmsg")
			mu.Unlock()
		})
		defer warn.Stop()
	}
	senders.Wait()
	elapsed := time.Since(start)
	stop()
	workers.Wait()
	if elapsed > t.cfg.duration+time.Second && ctx.Err() == nil {
		mu.Lock()
		out.notes = append(out.notes, fmt.Sprintf("ran %.1fs: past -duration %s until the minima were reached (or -max-duration %s)",
			elapsed.Seconds(), t.cfg.duration, t.cfg.maxDuration))
		mu.Unlock()
	}
	return elapsed, writes.Load()
}

// monitor calls stop when the run has done enough, or at cfg.maxDuration.
// It samples the counters; stopping a little late only adds batches.
func (t *topology) monitor(ctx context.Context, stop func(), writes *atomic.Int64, flipping bool) {
	start := time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		elapsed := time.Since(start)
		if elapsed >= t.cfg.maxDuration {
			stop()
			return
		}
		if elapsed < t.cfg.duration {
			continue
		}
		enough := !flipping || writes.Load() >= t.cfg.minWrites
		for _, s := range t.senders {
			enough = enough && s.completed.Load() >= int64(t.cfg.minBatches)
		}
		if enough {
			stop()
			return
		}
	}
}

// judge compares every stable receiver with the senders' transcripts,
// checks that the idle subscribers got nothing, and collects what churn
// found.
func (t *topology) judge(out *outcome) {
	n := len(t.senders)
	transcripts := make([][]verify.Msg, 2*n)
	for i, s := range t.senders {
		transcripts[i], transcripts[n+i] = s.transcript, s.userTranscript
		if s.injected != "" {
			out.notes = append(out.notes, "self-test: injected "+s.injected)
		}
	}
	out.report.Deliveries = map[string]int{}
	for _, st := range t.stables {
		rep := st.finish(t.names, transcripts)
		out.report.Deliveries[st.kind] += rep.Verified
		out.problems = append(out.problems, rep.Problems...)
	}
	for _, s := range t.idle {
		if p := expectEmpty(s); p != "" {
			out.fail("idle subscriber: %s", p)
		}
	}
	ch := t.churn
	ch.mu.Lock()
	defer ch.mu.Unlock()
	out.problems = append(out.problems, ch.problems...)
	if ch.dropped > 0 {
		out.fail("%d more churn problems not shown", ch.dropped)
	}
}

// writeKernelWarning is the kernel-health self-test (-inject-warning): a
// line in the kernel log that reads like a WARNING splat.
func writeKernelWarning() error {
	f, err := os.OpenFile("/dev/kmsg", os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString("<4>WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1 netlink_mcast_stress_self_test+0x0/0x0\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write /dev/kmsg: %w", err)
	}
	return nil
}
