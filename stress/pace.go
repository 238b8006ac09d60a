// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"sync"
)

// paceBound is the least fraction of fixed0's notification rate, from the
// same run, that fixed1 and switch must reach; below it the mode fails,
// whether or not it reached its minima. The senders are paced by their
// ACKs (a batch's ACKs are read before the next batch is sent), so a
// kernel that delays ACKs, or the walk, at 1 lowers this rate too.
// writeBound is the least fraction of a reference sysctl's write speed
// (refSysctl: the same handler) that the switch's writes must reach.
//
// Both rest on the ratios measured on the patched 6.1 images under TCG,
// alone and beside other guests on a loaded host
// (evidence/stress-ratios/runs.txt): each is at most the mean of the
// ratios' logarithms less 5 standard deviations, which
// TestPaceBoundFromEvidence recomputes. The notification rates spread
// widely (the modes run one after another while the host's load
// changes); the write times, taken in one mode by one thread, hardly.
const (
	paceBound  = 0.0625
	writeBound = 0.5
)

// paceBase is a mode's rates, kept for the modes run after it.
type paceBase struct {
	mode              string
	notificationsPerS float64
}

// baselines holds the rates of every mode that has run in this process
// and passed or fell short, by name.
var baselines = struct {
	sync.Mutex
	byMode map[string]paceBase
}{byMode: map[string]paceBase{}}

// baselineOf names the mode whose rates m is held against: fixed0 for
// fixed1 and switch; "" for fixed0 itself and the fault modes, whose
// rates depend on how many allocations fail.
func baselineOf(m mode) string {
	if m.faults || m.value == "0" {
		return ""
	}
	return "fixed0"
}

// notificationRate is the senders' notifications per second in all.
func notificationRate(r *modeReport) float64 {
	if r.DurationS <= 0 {
		return 0
	}
	n := 0
	for _, s := range r.Senders {
		n += s.Notifications
	}
	return float64(n) / r.DurationS
}

// keepBaseline keeps a mode's rates for the modes after it: only from a
// mode whose checks passed or that was short of a minimum (a rate from a
// mode that failed or was stopped says nothing).
func keepBaseline(r *modeReport) {
	if r.Checks != "pass" && r.Checks != "short" {
		return
	}
	rate := notificationRate(r)
	if rate <= 0 {
		return
	}
	baselines.Lock()
	defer baselines.Unlock()
	baselines.byMode[r.Mode] = paceBase{mode: r.Mode, notificationsPerS: rate}
}

// baseline returns the kept rates of mode name.
func baseline(name string) (paceBase, bool) {
	baselines.Lock()
	defer baselines.Unlock()
	b, ok := baselines.byMode[name]
	return b, ok
}

// paceVerdict is how a mode's rates compare with its baseline's.
type paceVerdict struct {
	Baseline          string  `json:"baseline"`
	BaselinePerS      float64 `json:"baseline_notifications_per_s"`
	NotificationsPerS float64 `json:"notifications_per_s"`
	Ratio             float64 `json:"ratio"`
	Bound             float64 `json:"bound"`
	WriteBound        float64 `json:"write_bound,omitempty"`
	// The switch writer's median write-and-read-back times, of the
	// switch and of the reference sysctl, and their ratio
	// (reference/switch).
	SwitchWriteUS    float64 `json:"switch_write_us,omitempty"`
	ReferenceWriteUS float64 `json:"reference_write_us,omitempty"`
	WriteRatio       float64 `json:"write_ratio,omitempty"`
}

// judgePace compares a mode's notification rate with its baseline's from
// the same run (base, if one ran) and, when the switch flipped, the
// switch's writes with the reference sysctl's (w, nil otherwise). A ratio
// below its bound (paceBound, writeBound) is a problem, with the figures.
func judgePace(r *modeReport, base *paceBase, w *writeTimes) (v *paceVerdict, problems []string) {
	bound := paceBound
	v = &paceVerdict{Bound: bound}
	if base != nil {
		rate := notificationRate(r)
		v.Baseline, v.BaselinePerS, v.NotificationsPerS = base.mode, round1(base.notificationsPerS), round1(rate)
		v.Ratio = round3(rate / base.notificationsPerS)
		if rate < bound*base.notificationsPerS {
			problems = append(problems, fmt.Sprintf("%s: the senders reached %.1f notifications/s, %.3f of %s's %.1f/s in this run (bound %g): the kernel is that much slower here than at %s, on the same machine and boot (the senders wait for each batch's ACKs, so delayed ACKs count too)",
				r.Mode, rate, rate/base.notificationsPerS, base.mode, base.notificationsPerS, bound, base.mode))
		}
	}
	if w != nil && w.switchN > 0 && w.refN > 0 {
		sw, ref := w.switchMedian(), w.refMedian()
		v.SwitchWriteUS, v.ReferenceWriteUS = round1(sw), round1(ref)
		v.WriteRatio, v.WriteBound = round3(ref/sw), writeBound
		if ref < writeBound*sw {
			problems = append(problems, fmt.Sprintf("%s: a write of %s (read back) took %.1f µs (median of %d writes), %.1f times the %.1f µs of %s (median of %d writes by the same thread in this mode, same handler; bound: %g of its speed): writing the switch is that much slower than writing a sysctl like it",
				r.Mode, "the switch", sw, w.switchN, sw/ref, ref, refSysctl, w.refN, writeBound))
		}
	}
	if base == nil && (w == nil || w.switchN == 0 || w.refN == 0) {
		return nil, nil
	}
	return v, problems
}

func round1(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }
func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }
