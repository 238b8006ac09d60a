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

	"golang.org/x/sys/unix"

	"nlmcast/selftests/mcswitch"
	"nlmcast/selftests/nsdeath"
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
	switchCycles  int // cycles per batch in the modes that flip the switch
	idle          int
	nsPace        time.Duration
	progressEvery time.Duration // a progress line this often; 0: none
	injectDup     bool
	injectWarning bool
	// injectTeardownWarning writes the WARNING once the mode has released
	// its namespaces, while the kernel tears them down.
	injectTeardownWarning bool
	injectLoss            bool // a stable receiver's drainer drops a message it read
	injectIdle            bool // an idle subscriber is sent a message
	injectOverrun         bool // a stable receiver is made to overrun
	injectSetupFailure    bool // sender S0's CPU pinning fails
	failPercent           int  // fault modes: failslab's probability
	minFailures           int64
	// slow is KSFT_MACHINE_SLOW=yes: the default -max-duration is longer.
	slow bool
	// capped says why -max-duration was cut to fit the runner's timeout.
	capped string
}

// mode is one of the runs.
type mode struct {
	name   string
	value  string // the switch value held during the run; "" = flipping
	about  string
	faults bool // allocations of socket buffers fail in the senders' threads
}

var modes = []mode{
	{"fixed0", "0", "switch held at 0 (the global walk; on a kernel without the switch, its only walk)", false},
	{"fixed1", "1", "switch held at 1 (the per-netns index walk)", false},
	{"switch", "", "switch flipped between 0 and 1 as fast as the kernel takes it, from its own thread", false},
	{"faults0", "0", "fixed0 with socket buffer allocations failing in the senders' threads (failslab): every loss must be one the kernel reports", true},
	{"faults1", "1", "fixed1 with socket buffer allocations failing in the senders' threads", true},
	{"faultswitch", "", "switch mode with socket buffer allocations failing in the senders' threads", true},
}

// flipping says the mode flips the switch.
func (m mode) flipping() bool { return m.value == "" }

// outcome is what one mode found. problems fail it; shortfalls are the
// minima it did not reach (batches, writes, failures that hit the
// broadcast): a run that proved less than it was asked to, which, when
// nothing failed, SKIPs.
type outcome struct {
	problems   []string
	shortfalls []string
	notes      []string
	report     modeReport
}

func (o *outcome) fail(f string, a ...any) { o.problems = append(o.problems, fmt.Sprintf(f, a...)) }
func (o *outcome) short(f string, a ...any) {
	o.shortfalls = append(o.shortfalls, fmt.Sprintf(f, a...))
}

// verdict is how a mode ends: "fail" with problems, "short" without
// problems but with shortfalls (a SKIP), "pass" otherwise.
func (o *outcome) verdict() string {
	switch {
	case len(o.problems) > 0:
		return "fail"
	case len(o.shortfalls) > 0:
		return "short"
	}
	return "pass"
}

// runMode runs one mode: fresh namespaces, stable receivers, idle
// subscribers, senders, churn and (switch mode) the switch writer, for
// cfg.duration; then it judges every receiver. cpus are the CPUs the
// senders are pinned to, one each, and writerCPU the switch writer's. inj
// is the fault modes' failure injection (nil otherwise).
func runMode(ctx context.Context, cfg config, m mode, sw *mcswitch.Switch, cpus []int, writerCPU int, inj injector, prog *progress) (out outcome) {
	out.report.Mode = m.name
	t := &topology{cfg: cfg, faults: inj != nil, progress: prog}
	if m.flipping() {
		t.cfg.cycles = cfg.switchCycles
	}
	defer func() {
		if cfg.injectTeardownWarning && len(t.senders) > 0 {
			// Written when the kernel tears S0 down, after the mode
			// has returned: as a WARNING from a pernet exit method
			// would come.
			err := nsdeath.OnTeardown(t.senders[0].sp.NS, time.Minute, func(err error) {
				if err == nil {
					err = writeKernelWarning()
				}
				if err != nil {
					fmt.Fprintf(os.Stderr, "%s: -inject-teardown-warning: %v\n", program, err)
				}
			})
			if err != nil {
				out.fail("-inject-teardown-warning: %v", err)
			} else {
				out.notes = append(out.notes, "self-test: a WARNING line goes to /dev/kmsg when the kernel tears "+t.senders[0].name+" down")
			}
		}
		prog.set("closing its sockets and namespaces")
		t.close()
	}()
	prog.set("setting up its namespaces and sockets")
	if err := t.build(cpus); err != nil {
		out.fail("setup: %v", err)
		return out
	}
	out.report.IdleSubscribers = len(t.idle)

	out.report.Switch = "absent"
	if sw != nil {
		v, state := m.value, m.value
		if m.flipping() {
			v, state = "0", "flipping"
		}
		if err := sw.Set(v); err != nil {
			out.fail("setup: %v", err)
			return out
		}
		out.report.Switch = state
	}

	elapsed, writes := t.run(ctx, &out, sw, writerCPU, inj)
	if ctx.Err() != nil {
		out.report.Interrupted = true
	}
	prog.set("judging what every receiver got")
	t.judge(&out)
	if sw != nil && !m.flipping() {
		if v, err := sw.Read(); err != nil || v != m.value {
			out.fail("the switch reads %q (%v) after the run, it was held at %s", v, err, m.value)
		}
	}
	fillReport(&out.report, elapsed, t.senders, &t.churn.counts, writes)
	if out.report.Interrupted {
		return out
	}
	t.judgeMinima(&out, m, elapsed, writes, inj != nil)
	return out
}

// judgeMinima judges what a mode that ran for elapsed, with writes
// verified switch writes, proved: its minima (batches, writes and, under
// faults, failures that hit the broadcast per protocol and receiver kind),
// the flips during batches, and its rates against its baseline's from the
// same run (fixed0's).
func (t *topology) judgeMinima(out *outcome, m mode, elapsed time.Duration, writes int64, faults bool) {
	for _, s := range t.senders {
		if s.batches < t.cfg.minBatches {
			out.short("sender %s completed %d batches in %.1fs (%.1f/s; -max-duration %s), fewer than -min-batches %d", s.name, s.batches, elapsed.Seconds(),
				perSecond(int64(s.batches), elapsed), t.cfg.maxDuration, t.cfg.minBatches)
		}
	}
	if out.report.Switch == "flipping" {
		if writes < t.cfg.minWrites {
			out.short("the switch writer made %d verified writes in %.1fs (%.1f/s; -max-duration %s), fewer than -min-writes %d", writes, elapsed.Seconds(),
				perSecond(writes, elapsed), t.cfg.maxDuration, t.cfg.minWrites)
		}
		// The mode exists for flips that land while a batch is in the
		// kernel: a run where they mostly came between batches proved
		// little about the walk switching under a broadcast.
		for _, s := range t.senders {
			if p := s.flips.problem(s.name); p != "" {
				out.fail("%s", p)
			}
		}
	}
	if faults {
		// The failures that hit the broadcast, as the receivers that
		// only a failed clone can overrun saw them, per kind.
		counts := t.cloneFailures()
		for _, c := range counts {
			out.report.CloneFailures += c
		}
		fails, shorts := failureVerdict(counts, t.cfg.minFailures, t.cfg.failPercent, elapsed, t.cfg.maxDuration)
		out.problems = append(out.problems, fails...)
		out.shortfalls = append(out.shortfalls, shorts...)
	}
	var base *paceBase
	if name := baselineOf(m); name != "" {
		if b, ok := baseline(name); ok {
			base = &b
		} else {
			out.notes = append(out.notes, fmt.Sprintf("%s did not run before %s in this run (or failed): its rates are not compared with %s's", name, m.name, name))
		}
	}
	var w *writeTimes
	if out.report.Switch == "flipping" {
		w = &t.writeTimes
	}
	v, problems := judgePace(&out.report, base, w)
	out.report.Pace = v
	if len(out.problems) > 0 {
		// A run cut short by a failure has no rate worth judging.
		for _, p := range problems {
			out.notes = append(out.notes, "also: "+p)
		}
		return
	}
	out.problems = append(out.problems, problems...)
}

// run starts the senders, the churn threads and, when the switch flips,
// its writer pinned to writerCPU; with inj, it starts injecting failures
// once every sender has marked its thread, and stops before the senders
// do. It stops them all once cfg.duration has passed and every sender has
// completed cfg.minBatches batches and the writer cfg.minWrites writes, or
// at cfg.maxDuration, on ctx, or on the first error. It returns how long
// the senders ran and the verified switch writes.
func (t *topology) run(ctx context.Context, out *outcome, sw *mcswitch.Switch, writerCPU int, inj injector) (time.Duration, int64) {
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var writes atomic.Int64
	flipping := out.report.Switch == "flipping"
	if flipping {
		t.progress.running(t.senders, &writes)
	} else {
		t.progress.running(t.senders, nil)
	}
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
	ready := make(chan error, len(t.senders))
	for i, s := range t.senders {
		if flipping {
			s.writes = &writes
		}
		if inj != nil {
			s.markThread = inj.markThread
		}
		s.ready = func(err error) { ready <- err }
		s.breakSetup = t.cfg.injectSetupFailure && i == 0
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
		ref, refValue, err := openReference(t.senders[0].sp.NS)
		if err != nil {
			failRun("switch writer", err)
		} else {
			workers.Add(1)
			go func() {
				defer workers.Done()
				defer unix.Close(ref)
				if err := flipSwitch(runCtx, sw, writerCPU, &writes, ref, refValue, &t.writeTimes); err != nil {
					failRun("switch writer", err)
				}
			}()
		}
	}
	for _, inject := range t.selfTests(out, &mu) {
		defer inject.Stop()
	}
	// Failures are injected once every sender has marked its thread; a
	// sender that could not set up ends the run at once (its error is
	// the run's problem), with nothing injected.
	if inj != nil && t.allReady(runCtx, ready) {
		if err := inj.start(t.cfg.failPercent); err != nil {
			failRun("failslab", err)
		}
		// The senders' last batches run without failures: the
		// injection stops when the run is told to, before they end.
		stopped := make(chan struct{})
		defer func() { <-stopped }()
		go func() {
			defer close(stopped)
			<-runCtx.Done()
			if err := inj.stop(); err != nil {
				note("failslab: %v", err)
			}
		}()
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

// allReady waits until every sender has said it is set up; false if one
// could not, or the run ended first.
func (t *topology) allReady(ctx context.Context, ready <-chan error) bool {
	for range t.senders {
		select {
		case err := <-ready:
			if err != nil {
				return false
			}
		case <-ctx.Done():
			return false
		}
	}
	return ctx.Err() == nil
}

// selfTests arms the detectors' self-tests the flags ask for, halfway
// through the run; the caller stops their timers.
func (t *topology) selfTests(out *outcome, mu *sync.Mutex) []*time.Timer {
	noted := func(what string, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			out.problems = append(out.problems, fmt.Sprintf("self-test %s: %v", what, err))
			return
		}
		out.notes = append(out.notes, "self-test: "+what)
	}
	var timers []*time.Timer
	at := func(what string, fn func() error) {
		timers = append(timers, time.AfterFunc(t.cfg.duration/2, func() { noted(what, fn()) }))
	}
	if t.cfg.injectWarning {
		at("wrote a WARNING line to /dev/kmsg", writeKernelWarning)
	}
	if t.cfg.injectIdle && len(t.idle) > 0 {
		at("sent a message to idle subscriber "+t.idle[0].String(), t.messageIdle)
	}
	// The loss is injected into a stable receiver and into an option-churn
	// socket, whose transcript is as exact though LISTEN_ALL_NSID toggles
	// under it.
	if t.cfg.injectLoss {
		lossy := []*stable{t.stableOf("local-plain")}
		if len(t.exact) > 0 {
			lossy = append(lossy, t.exact[0].exact)
		}
		for _, st := range lossy {
			if st != nil {
				st.dropOne.Store(true)
				out.notes = append(out.notes, "self-test: the drainer of "+st.want.Name+" drops one message it reads")
			}
		}
	}
	if st := t.stableOf("local-plain"); st != nil {
		if t.cfg.injectOverrun {
			at("made "+st.want.Name+" overrun", st.overrun)
		}
	}
	return timers
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
		if t.faults {
			enough = enough && failuresEnough(t.cloneFailures(), t.cfg.minFailures, "")
		}
		for _, s := range t.senders {
			enough = enough && s.completed.Load() >= int64(t.cfg.minBatches)
		}
		if enough {
			stop()
			return
		}
	}
}

// judge compares every stable receiver (and every churn socket whose
// transcript is known) with the senders' transcripts, checks that the
// idle subscribers got nothing, and collects what churn found. Under
// faults, a message may be missing where the kernel says why.
func (t *topology) judge(out *outcome) {
	n := len(t.senders)
	transcripts := make([][]verify.Msg, 2*n)
	for i, s := range t.senders {
		transcripts[i], transcripts[n+i] = s.transcript, s.userTranscript
		if s.injected != "" {
			out.notes = append(out.notes, "self-test: injected "+s.injected)
		}
	}
	for _, st := range t.stables {
		st.stopDrain()
	}
	ch := t.churn
	for _, cs := range t.exact {
		ch.check(cs)
	}
	receivers := append([]*stable(nil), t.stables...)
	for _, cs := range t.exact {
		receivers = append(receivers, cs.exact)
	}
	// What the churn pools still hold: read now (every broadcast is
	// over), so that what they got counts as proof of sending.
	for _, cs := range append(append([]*churnSock(nil), t.members...), t.options...) {
		if cs.exact == nil {
			ch.check(cs)
			ch.keep(cs)
		}
	}
	var faults *verify.Faults
	if t.faults {
		// A message no socket got may never have been sent (its
		// nlmsg_new() failed). Sent or not, every socket that can show
		// it is asked: the stable receivers, the churn sockets whose
		// transcripts are known, and every other churn socket, each
		// read to the end before it left the walks. That matters: the
		// first candidate of a walk gets the notification itself
		// (do_one_broadcast(): skb_get() of an skb nobody shares, no
		// clone that could fail), and new subscribers, the churn
		// sockets, are walked first (sk_add_bind_node() and the index
		// lists add at the head); though not where the request asked
		// for an echo: nlmsg_notify() holds a reference of its own, so
		// the skb is shared and, unless netlink_trim() copied it, every
		// socket gets a clone. The senders' own sockets show those: an
		// echo is read only after the walk ran for its notification.
		faults = &verify.Faults{Delivered: map[verify.FromSender]int{}, Unsure: map[verify.Msg]bool{}, Sent: map[int][]verify.Span{},
			Echoes: map[verify.FromSender]verify.Echo{}}
		for _, st := range receivers {
			faults.CountDelivered(st.want, st.got)
		}
		ch.mu.Lock()
		for k, c := range ch.receipts {
			faults.Delivered[k] = max(faults.Delivered[k], c)
		}
		ch.mu.Unlock()
		for i, s := range t.senders {
			for m := range s.unsure {
				faults.Unsure[m] = true
			}
			faults.Sent[i], faults.Sent[n+i] = s.transcriptAt, s.userTranscriptAt
			for m, e := range s.echoes {
				faults.Echoes[verify.FromSender{Sender: i, Msg: m}] = e
			}
		}
		proofs, problems := faults.Proofs(t.names, transcripts)
		out.report.Proofs = &proofs
		out.problems = append(out.problems, problems...)
	}
	out.report.Deliveries = map[string]int{}
	out.report.Overruns = map[string]int{}
	for _, st := range receivers {
		rep := st.judge(t.names, transcripts, faults)
		out.report.Deliveries[st.kind] += rep.Verified
		out.report.Overruns[st.kind] += rep.Overruns
		out.report.Covered += rep.Covered
		out.report.Undelivered += rep.Undelivered
		out.problems = append(out.problems, rep.Problems...)
	}
	for _, s := range t.idle {
		if p := expectEmpty(s); p != "" {
			out.fail("idle subscriber: %s", p)
		}
	}
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
