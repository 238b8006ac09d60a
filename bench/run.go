// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"

	"nlmcast/bench/internal/sample"
	"nlmcast/selftests"
	"nlmcast/selftests/mcswitch"
)

// skipError is a scene this kernel cannot run, with the precise reason.
type skipError struct{ reason string }

func (e skipError) Error() string { return e.reason }

// design is the part of boots x rounds x samples that one boot runs.
type design struct {
	boot, rounds, samples, routes int
	kernel, image                 string
	icount                        bool
	cpus                          int  // CPUs the program may run on
	injectStray                   bool // -inject-stray: the silence check's self-test
}

// stateOfRound is the state round r of this boot measures: U without the
// switch; with it P0 and P1 alternate round by round, the boot's number
// choosing which comes first, so both get early and late rounds.
func (d design) stateOfRound(sw *mcswitch.Switch, r int) (state, value string) {
	if sw == nil {
		return "U", ""
	}
	if (r+d.boot)%2 == 0 {
		return "P0", "0"
	}
	return "P1", "1"
}

// roundsInBoot is how many rounds the boot runs: each state gets d.rounds.
func (d design) roundsInBoot(sw *mcswitch.Switch) int {
	if sw == nil {
		return d.rounds
	}
	return 2 * d.rounds
}

// runScene builds sc, runs its rounds and hands every sample to emit;
// logf says what the scene itself has to say (a self-test). It ends early,
// with an error, once stop is closed.
func runScene(emit func(sample.Sample), logf func(string, ...any), stop <-chan struct{}, d design, sw *mcswitch.Switch, senders []*sender, sc Scene) error {
	if sc.needsAllNSID() {
		if has, err := selftests.HasCapability(unix.CAP_NET_BROADCAST); err == nil && !has {
			return skipError{"NETLINK_LISTEN_ALL_NSID needs CAP_NET_BROADCAST, which this process lacks"}
		}
	}
	if sc.Kind == parallelBatch && d.cpus < 2 {
		return skipError{fmt.Sprintf("two senders at once need two CPUs, and this program may run on %d: they would take turns "+
			"(vmbench gives an -icount guest one CPU)", d.cpus)}
	}
	r := rounds{emit: emit, stop: stop, d: d, sw: sw, senders: senders, sc: sc}
	if sc.Kind >= addrTargeted {
		rf, err := buildRelated(sc)
		if err != nil {
			return err
		}
		defer rf.close()
		if d.injectStray {
			logf("-inject-stray: nothing injected: this scene has no socket that must stay silent")
		}
		r.units, r.ops, r.after = []func() error{rf.unit}, rf.ops, rf.after
		return r.run()
	}
	f, err := build(sc, d.routes, stop)
	if err != nil {
		return err
	}
	defer f.close()

	switch sc.Kind {
	case optionChanges:
		pool := f.pool
		r.units = []func() error{func() error { return optionUnit(pool) }}
		r.ops = optionOps(len(pool))
	default:
		for _, src := range f.sources {
			r.units = append(r.units, src.batch.run)
		}
		r.ops = d.routes * len(r.units)
	}
	r.check = f.checkSilent
	if d.injectStray {
		r.inject = func() {
			if what, err := f.injectStray(); err != nil {
				logf("-inject-stray: %v", err)
			} else {
				logf("-inject-stray: %s", what)
			}
		}
	}
	return r.run()
}

// rounds is one scene's measurement in this boot.
type rounds struct {
	emit    func(sample.Sample)
	stop    <-chan struct{}
	d       design
	sw      *mcswitch.Switch
	senders []*sender
	sc      Scene
	units   []func() error // one per sender, run at once
	ops     int            // requests (or changes) per sample
	after   func()         // after each unit, untimed
	check   func() error   // after each round: nothing strayed
	inject  func()         // -inject-stray, before the first round's check
}

// run runs the boot's rounds of the scene: the switch set for the round's
// state, a warm-up, the samples (after each, the scene's after hook,
// untimed; each sample handed to emit), then the scene's check that
// nothing strayed.
func (r *rounds) run() error {
	d := r.d
	for round := 0; round < d.roundsInBoot(r.sw); round++ {
		state, value := d.stateOfRound(r.sw, round)
		if r.sw != nil {
			if err := r.sw.Set(value); err != nil {
				return err
			}
		}
		for k := 0; k <= d.samples; k++ {
			select {
			case <-r.stop:
				return fmt.Errorf("stopped in state %s round %d before sample %d", state, round, k)
			default:
			}
			c, err := measure(r.senders, r.units)
			if r.after != nil {
				r.after()
			}
			if err != nil {
				return fmt.Errorf("state %s round %d sample %d: %w", state, round, k, err)
			}
			s := sample.Sample{Kernel: d.kernel, Image: d.image, State: state, Boot: d.boot, Round: round, Sample: k,
				Warmup: k == 0, Scene: r.sc.Label(), N: r.sc.N, D: r.sc.D, Icount: d.icount, CPUs: d.cpus, Arch: runtime.GOARCH,
				WallNS: int64(c.wall), ThreadNS: int64(c.thread), UserNS: int64(c.user), SysNS: int64(c.sys), Ops: r.ops}
			r.emit(s)
		}
		if r.check == nil {
			continue
		}
		if round == 0 && r.inject != nil {
			r.inject()
		}
		if err := r.check(); err != nil {
			return fmt.Errorf("state %s round %d: %w", state, round, err)
		}
	}
	return nil
}

// isSkip reports whether err says the scene cannot run here: a skipError,
// or a file descriptor limit too low for the scene's sockets.
func isSkip(err error) (string, bool) {
	var s skipError
	if errors.As(err, &s) {
		return s.reason, true
	}
	if errors.Is(err, unix.EMFILE) {
		var rl unix.Rlimit
		_ = unix.Getrlimit(unix.RLIMIT_NOFILE, &rl)
		return fmt.Sprintf("RLIMIT_NOFILE (%d, hard %d) is too low for this scene's sockets: %v", rl.Cur, rl.Max, err), true
	}
	return "", false
}
