// SPDX-License-Identifier: GPL-2.0

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/selftests/mcswitch"
	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
	"nlmcast/stress/internal/verify"
)

// config is the validated command line.
type config struct {
	duration      time.Duration
	senders       int
	minBatches    int
	minWrites     int64
	cycles        int
	idle          int
	nsPace        time.Duration
	injectDup     bool
	injectWarning bool
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

// Namespace ids: O calls sender i nsidObserver+i, F calls it nsidChurn+i.
const (
	nsidObserver = 10
	nsidChurn    = 20
	idleSpaces   = 4
)

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
	var cleanups []func()
	defer func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}()
	onExit := func(f func()) { cleanups = append(cleanups, f) }
	setupFailed := func(err error) outcome {
		out.fail("setup: %v", err)
		return out
	}

	// Senders, each in a quiet namespace of its own.
	n := cfg.senders
	senders := make([]*sender, n)
	names := make([]string, 2*n)
	for i := range senders {
		sp, err := newSpace(fmt.Sprintf("S%d", i), true)
		if err != nil {
			return setupFailed(err)
		}
		onExit(sp.close)
		s := &sender{idx: i, name: sp.Name, sp: sp, cpu: cpus[i%len(cpus)], cycles: cfg.cycles}
		if err := s.setup(); err != nil {
			return setupFailed(err)
		}
		us, err := openMany(sp.NS, unix.NETLINK_USERSOCK, 2, sp.Name+"-usersock")
		if err != nil {
			return setupFailed(err)
		}
		onExit(func() { closeAll(us) })
		for _, u := range us {
			if err := u.Bind(0, 0); err != nil {
				return setupFailed(err)
			}
		}
		s.us, s.sink = us[0], us[1]
		s.us.Name, s.sink.Name = "usersock-sender", "usersock-sink"
		s.usPid = s.us.Portid()
		if cfg.injectDup && i == 0 {
			inj, err := openMany(sp.NS, unix.NETLINK_ROUTE, 1, "injector")
			if err != nil {
				return setupFailed(err)
			}
			onExit(func() { closeAll(inj) })
			if err := inj[0].Bind(0, 0); err != nil {
				return setupFailed(err)
			}
			s.injector, s.injectAt = inj[0], time.Now().Add(cfg.duration/2)
		}
		senders[i] = s
		names[i] = sp.Name
		names[n+i] = sp.Name + "/usersock"
	}

	// O maps every sender, F too (for churn), N none.
	foreign := map[string]*space{}
	for _, name := range []string{"O", "N", "F"} {
		sp, err := newSpace(name, false)
		if err != nil {
			return setupFailed(err)
		}
		onExit(sp.close)
		foreign[name] = sp
	}
	for i, s := range senders {
		if err := foreign["O"].mapPeer(s.sp, int32(nsidObserver+i)); err != nil {
			return setupFailed(err)
		}
		if err := foreign["F"].mapPeer(s.sp, int32(nsidChurn+i)); err != nil {
			return setupFailed(err)
		}
		switch id, err := foreign["N"].ctl.PeerID(s.sp.FD()); {
		case err != nil:
			return setupFailed(err)
		case id != rtnl.NotAssigned:
			return setupFailed(fmt.Errorf("netns N has the id %d for %s; it must have none", id, s.name))
		}
	}

	// Stable receivers.
	var stables []*stable
	add := func(kind string, sp *space, proto int, mask uint32, join []uint32, allNSID bool, want verify.Receiver) error {
		socks, err := openMany(sp.NS, proto, 1, kind)
		if err != nil {
			return err
		}
		onExit(func() { closeAll(socks) })
		return addStable(&stables, kind, socks[0], mask, join, allNSID, want)
	}
	route := []uint32{groupAddr, groupRoute, groupStats}
	bindMask := uint32(1<<(groupAddr-1) | 1<<(groupRoute-1))
	observed := map[int]verify.Tag{}
	userObserved := map[int]verify.Tag{}
	for i, s := range senders {
		local := map[int]verify.Tag{i: verify.Local}
		for _, r := range []struct {
			kind    string
			mask    uint32
			join    []uint32
			allNSID bool
			groups  []uint32
		}{
			{"local-plain", bindMask, []uint32{groupStats}, false, route},
			{"local-bind", bindMask, nil, false, []uint32{groupAddr, groupRoute}},
			{"local-setsockopt", 0, route, false, route},
			{"local-all-nsid", bindMask, []uint32{groupStats}, true, route},
		} {
			if err := add(r.kind, s.sp, unix.NETLINK_ROUTE, r.mask, r.join, r.allNSID, verify.Receiver{Groups: r.groups, Sees: local}); err != nil {
				return setupFailed(err)
			}
		}
		userLocal := map[int]verify.Tag{n + i: verify.Local}
		if err := add("usersock-local", s.sp, unix.NETLINK_USERSOCK, 1<<(groupUser-1), nil, false, verify.Receiver{Groups: []uint32{groupUser}, Sees: userLocal}); err != nil {
			return setupFailed(err)
		}
		if err := addStable(&stables, "usersock-sink", s.sink, 0, nil, false, verify.Receiver{Groups: []uint32{groupUser}, Sees: userLocal}); err != nil {
			return setupFailed(err)
		}
		observed[i] = verify.NSID(int32(nsidObserver + i))
		userObserved[n+i] = verify.NSID(int32(nsidObserver + i))
	}
	o, nn := foreign["O"], foreign["N"]
	for _, r := range []struct {
		kind    string
		sp      *space
		proto   int
		mask    uint32
		join    []uint32
		allNSID bool
		want    verify.Receiver
	}{
		{"foreign-all-nsid-mapped", o, unix.NETLINK_ROUTE, bindMask, []uint32{groupStats}, true, verify.Receiver{Groups: route, Sees: observed}},
		{"foreign-plain", o, unix.NETLINK_ROUTE, bindMask, []uint32{groupStats}, false, verify.Receiver{Groups: route}},
		{"foreign-all-nsid-unmapped", nn, unix.NETLINK_ROUTE, bindMask, []uint32{groupStats}, true, verify.Receiver{Groups: route}},
		{"usersock-foreign-all-nsid", o, unix.NETLINK_USERSOCK, 1 << (groupUser - 1), nil, true, verify.Receiver{Groups: []uint32{groupUser}, Sees: userObserved}},
		{"usersock-foreign-plain", o, unix.NETLINK_USERSOCK, 1 << (groupUser - 1), nil, false, verify.Receiver{Groups: []uint32{groupUser}}},
	} {
		if err := add(r.kind, r.sp, r.proto, r.mask, r.join, r.allNSID, r.want); err != nil {
			return setupFailed(err)
		}
	}
	for _, st := range stables {
		go st.drain()
	}
	stablesFinished := false
	onExit(func() {
		if !stablesFinished {
			for _, st := range stables {
				st.stop.Store(true)
				<-st.done
			}
		}
	})

	// Idle subscribers in foreign namespaces: they make every walk of
	// the global list long and must receive nothing.
	var idle []*nlsock.Socket
	for k := 0; k < idleSpaces && cfg.idle > 0; k++ {
		sp, err := newSpace(fmt.Sprintf("I%d", k), false)
		if err != nil {
			return setupFailed(err)
		}
		onExit(sp.close)
		cnt := cfg.idle / idleSpaces
		if k < cfg.idle%idleSpaces {
			cnt++
		}
		socks, err := openMany(sp.NS, unix.NETLINK_ROUTE, cnt, sp.Name+"-idle")
		if err != nil {
			return setupFailed(err)
		}
		onExit(func() { closeAll(socks) })
		for j, s := range socks {
			if err := s.Bind(0, bindMask); err != nil {
				return setupFailed(err)
			}
			// Some also on the ALL_NSID list and group 36; none is
			// mapped to a sender, so none may receive anything.
			if j%2 == 0 {
				if err := s.Join(groupStats); err != nil {
					return setupFailed(err)
				}
			}
			if j%8 == 0 {
				if err := s.SetOption(unix.NETLINK_LISTEN_ALL_NSID, true); err != nil {
					return setupFailed(err)
				}
			}
		}
		idle = append(idle, socks...)
	}
	out.report.IdleSubscribers = len(idle)

	// Churn: pools for membership and option churn in every sender's
	// namespace and in F, socket churn in each of them.
	ch := &churn{names: names}
	places := []where{}
	for i, s := range senders {
		places = append(places, where{ns: s.sp.NS, localSender: i, mapped: map[int32]int{}})
	}
	fMapped := map[int32]int{}
	for i := range senders {
		fMapped[int32(nsidChurn+i)] = i
	}
	places = append(places, where{ns: foreign["F"].NS, localSender: -1, mapped: fMapped})
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))
	var memberPool, optionPool []*churnSock
	for _, w := range places {
		socks, err := openMany(w.ns, unix.NETLINK_ROUTE, 6, w.ns.Name+"-churn")
		if err != nil {
			return setupFailed(err)
		}
		onExit(func() { closeAll(socks) })
		for j, s := range socks {
			cs := &churnSock{s: s, rules: w.rules(s.Name)}
			if err := ch.prepare(cs, rng); err != nil {
				return setupFailed(err)
			}
			if j%2 == 0 {
				memberPool = append(memberPool, cs)
			} else {
				// Option churn needs subscribed sockets.
				if err := ch.join(cs, groupRoute); err != nil {
					return setupFailed(err)
				}
				optionPool = append(optionPool, cs)
			}
		}
	}

	// The switch.
	switchState := "absent"
	if sw != nil && m.value != "" {
		if err := sw.Set(m.value); err != nil {
			return setupFailed(err)
		}
		switchState = m.value
	} else if sw != nil {
		if err := sw.Set("0"); err != nil {
			return setupFailed(err)
		}
		switchState = "flipping"
	}
	out.report.Switch = switchState

	// Run.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	timer := time.AfterFunc(cfg.duration, stop)
	defer timer.Stop()
	var errMu sync.Mutex
	var runErrs []string
	failRun := func(what string, err error) {
		errMu.Lock()
		runErrs = append(runErrs, fmt.Sprintf("%s: %v", what, err))
		errMu.Unlock()
		stop()
	}
	start := time.Now()
	var workers, senderWG sync.WaitGroup
	for _, s := range senders {
		senderWG.Add(1)
		go func() {
			defer senderWG.Done()
			s.run(runCtx)
			if s.err != nil {
				failRun("sender "+s.name, s.err)
			}
		}()
	}
	churnWorker := func(what string, fn func() error) {
		workers.Add(1)
		go func() {
			defer workers.Done()
			if err := fn(); err != nil && runCtx.Err() == nil {
				failRun(what, err)
			}
		}()
	}
	for k, w := range places {
		churnWorker("socket churn in netns "+w.ns.Name, func() error {
			return ch.sockets(runCtx, w, w.ns.Name+"-open", uint64(k)+rng.Uint64())
		})
	}
	churnWorker("membership churn", func() error { return ch.membership(runCtx, memberPool, rng.Uint64()) })
	churnWorker("option churn", func() error { return ch.options(runCtx, optionPool, rng.Uint64()) })
	churnWorker("namespace churn", func() error { return ch.namespaces(runCtx, senders, cfg.nsPace, rng.Uint64()) })
	var writes int64
	if switchState == "flipping" {
		workers.Add(1)
		go func() {
			defer workers.Done()
			var err error
			writes, err = flipSwitch(runCtx, sw)
			if err != nil {
				failRun("switch writer", err)
			}
		}()
	}
	if cfg.injectWarning {
		warn := time.AfterFunc(cfg.duration/2, func() {
			if err := writeKernelWarning(); err != nil {
				failRun("-inject-warning", err)
			} else {
				errMu.Lock()
				out.notes = append(out.notes, "self-test: wrote a WARNING line to /dev/kmsg")
				errMu.Unlock()
			}
		})
		defer warn.Stop()
	}
	senderWG.Wait()
	elapsed := time.Since(start)
	stop()
	workers.Wait()

	// Judge.
	out.problems = append(out.problems, runErrs...)
	if ctx.Err() != nil {
		out.report.Interrupted = true
	}
	transcripts := make([][]verify.Msg, 2*n)
	for i, s := range senders {
		transcripts[i], transcripts[n+i] = s.transcript, s.userTranscript
		if s.injected != "" {
			out.notes = append(out.notes, "self-test: injected "+s.injected)
		}
	}
	out.report.Deliveries = map[string]int{}
	for _, st := range stables {
		rep := st.finish(names, transcripts)
		out.report.Deliveries[st.kind] += rep.Verified
		out.problems = append(out.problems, rep.Problems...)
	}
	stablesFinished = true
	for _, s := range idle {
		if p := expectEmpty(s); p != "" {
			out.fail("idle subscriber: %s", p)
		}
	}
	ch.mu.Lock()
	out.problems = append(out.problems, ch.problems...)
	if ch.dropped > 0 {
		out.fail("%d more churn problems not shown", ch.dropped)
	}
	ch.mu.Unlock()
	if sw != nil && m.value != "" {
		if v, err := sw.Read(); err != nil || v != m.value {
			out.fail("the switch reads %q (%v) after the run, it was held at %s", v, err, m.value)
		}
	}

	fillReport(&out.report, elapsed, senders, &ch.counts, writes)
	if !out.report.Interrupted {
		for _, s := range senders {
			if s.batches < cfg.minBatches {
				out.fail("sender %s completed %d batches in %.1fs, fewer than -min-batches %d", s.name, s.batches, elapsed.Seconds(), cfg.minBatches)
			}
		}
		if switchState == "flipping" && writes < cfg.minWrites {
			out.fail("the switch writer made %d verified writes in %.1fs, fewer than -min-writes %d", writes, elapsed.Seconds(), cfg.minWrites)
		}
	}
	return out
}

// addStable binds sock, joins its groups, sets its options and registers
// it as a stable receiver. Binding comes first: a socket that never bound
// has portid 0, which every notification excludes.
func addStable(stables *[]*stable, kind string, sock *nlsock.Socket, mask uint32, join []uint32, allNSID bool, want verify.Receiver) error {
	st, err := newStable(kind, sock, want)
	if err != nil {
		return err
	}
	if pid := sock.Portid(); pid == 0 {
		if err := sock.Bind(0, mask); err != nil {
			return err
		}
	} else if mask != 0 {
		return fmt.Errorf("%s: already bound, cannot set groups %#x", sock, mask)
	}
	for _, g := range join {
		if err := sock.Join(g); err != nil {
			return err
		}
	}
	if allNSID {
		if err := sock.SetOption(unix.NETLINK_LISTEN_ALL_NSID, true); err != nil {
			return err
		}
	}
	*stables = append(*stables, st)
	return nil
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
