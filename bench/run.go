// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"fmt"

	"nlmcast/bench/internal/sample"
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

// runScene builds sc, runs its rounds and prints every sample. The samples
// are also returned for a results directory.
func runScene(emit func(sample.Sample), d design, sw *mcswitch.Switch, senders []*sender, sc Scene) error {
	if sc.Kind >= addrTargeted {
		rf, err := buildRelated(sc)
		if err != nil {
			return err
		}
		defer rf.close()
		return runRounds(emit, d, sw, senders, sc, []func() error{rf.unit}, rf.ops, rf.after, nil)
	}
	f, err := build(sc, d.routes)
	if err != nil {
		return err
	}
	defer f.close()

	var units []func() error
	ops := d.routes
	switch sc.Kind {
	case optionChanges:
		pool := f.pool
		units = []func() error{func() error { return optionUnit(pool) }}
		ops = optionOps(len(pool))
	default:
		for _, src := range f.sources {
			units = append(units, src.batch.run)
		}
		ops = d.routes * len(units)
	}
	return runRounds(emit, d, sw, senders, sc, units, ops, nil, f.checkSilent)
}

// runRounds runs the boot's rounds of one scene: the switch set for the
// round's state, a warm-up, the samples (after each, the scene's after
// hook, untimed; each sample handed to emit), then the scene's check that
// nothing strayed.
func runRounds(emit func(sample.Sample), d design, sw *mcswitch.Switch, senders []*sender, sc Scene,
	units []func() error, ops int, after func(), check func() error) error {
	for r := 0; r < d.roundsInBoot(sw); r++ {
		state, value := d.stateOfRound(sw, r)
		if sw != nil {
			if err := sw.Set(value); err != nil {
				return err
			}
		}
		for k := 0; k <= d.samples; k++ {
			c, err := measure(senders, units)
			if after != nil {
				after()
			}
			if err != nil {
				return fmt.Errorf("state %s round %d sample %d: %w", state, r, k, err)
			}
			s := sample.Sample{Kernel: d.kernel, Image: d.image, State: state, Boot: d.boot, Round: r, Sample: k,
				Warmup: k == 0, Scene: sc.Label(), N: sc.N, D: sc.D, Icount: d.icount,
				WallNS: int64(c.wall), ThreadNS: int64(c.thread), UserNS: int64(c.user), SysNS: int64(c.sys), Ops: ops}
			emit(s)
		}
		if check == nil {
			continue
		}
		if err := check(); err != nil {
			return fmt.Errorf("state %s round %d: %w", state, r, err)
		}
	}
	return nil
}

// isSkip reports whether err says the scene cannot run here.
func isSkip(err error) (string, bool) {
	var s skipError
	if errors.As(err, &s) {
		return s.reason, true
	}
	return "", false
}
