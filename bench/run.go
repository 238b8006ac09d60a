// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"fmt"

	"nlmcast/bench/internal/sample"
	"nlmcast/ktap"
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
func runScene(w *ktap.Writer, d design, sw *mcswitch.Switch, senders []*sender, sc Scene) ([]sample.Sample, error) {
	if sc.Kind >= addrTargeted {
		rf, err := buildRelated(sc)
		if err != nil {
			return nil, err
		}
		defer rf.close()
		return runRounds(w, d, sw, senders, sc, []func() error{rf.unit}, rf.ops, rf.after, nil)
	}
	f, err := build(sc, d.routes)
	if err != nil {
		return nil, err
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
	return runRounds(w, d, sw, senders, sc, units, ops, nil, f.checkSilent)
}

// runRounds runs the boot's rounds of one scene: the switch set for the
// round's state, a warm-up, the samples (after each, the scene's after
// hook, untimed), then the scene's check that nothing strayed.
func runRounds(w *ktap.Writer, d design, sw *mcswitch.Switch, senders []*sender, sc Scene,
	units []func() error, ops int, after func(), check func() error) ([]sample.Sample, error) {
	var out []sample.Sample
	for r := 0; r < d.roundsInBoot(sw); r++ {
		state, value := d.stateOfRound(sw, r)
		if sw != nil {
			if err := sw.Set(value); err != nil {
				return out, err
			}
		}
		for k := 0; k <= d.samples; k++ {
			c, err := measure(senders, units)
			if after != nil {
				after()
			}
			if err != nil {
				return out, fmt.Errorf("state %s round %d sample %d: %w", state, r, k, err)
			}
			s := sample.Sample{Kernel: d.kernel, Image: d.image, State: state, Boot: d.boot, Round: r, Sample: k,
				Warmup: k == 0, Scene: sc.Label(), N: sc.N, D: sc.D, Icount: d.icount,
				WallNS: int64(c.wall), ThreadNS: int64(c.thread), UserNS: int64(c.user), SysNS: int64(c.sys), Ops: ops}
			w.Diag("%s", sample.Line(s))
			out = append(out, s)
		}
		if check == nil {
			continue
		}
		if err := check(); err != nil {
			return out, fmt.Errorf("state %s round %d: %w", state, r, err)
		}
	}
	return out, nil
}

// isSkip reports whether err says the scene cannot run here.
func isSkip(err error) (string, bool) {
	var s skipError
	if errors.As(err, &s) {
		return s.reason, true
	}
	return "", false
}
