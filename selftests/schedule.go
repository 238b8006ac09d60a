// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"nlmcast/ktap"
	"nlmcast/selftests/kmsg"
)

// outcome is what one case ended with, before it is printed.
type outcome struct {
	res     ktap.Result
	reason  string
	elapsed time.Duration
	lines   []string      // its diagnostics, when it ran beside others
	reports []kmsg.Report // kernel reports read while it ran
	lost    []string      // what of the kernel log went unread while it ran
	beside  []string      // the cases running when those were read
	stuck   bool          // abandoned at its deadline, still holding what it made
	done    bool
}

// runCases runs the cases in table order, consecutive cases of one Group
// together, and prints each result as it is known.
func runCases(s Suite, cases []Case, w *ktap.Writer, opt options, h *health) {
	for i := 0; i < len(cases); {
		if Interrupted() {
			w.Diag("%s: %s and the %d cases after it did not run", interruptedBy(), cases[i].Name, len(cases)-i-1)
			return
		}
		j := i + 1
		if g := cases[i].Group; g != "" && opt.jobs > 1 {
			for j < len(cases) && cases[j].Group == g {
				j++
			}
		}
		if j-i == 1 {
			runAlone(s, cases[i], w, opt, h)
		} else if notRun := runGroup(s, cases[i:j], w, opt, h); len(notRun) > 0 {
			w.Diag("%s: %s did not run, nor the %d cases after the group", interruptedBy(), strings.Join(notRun, ", "), len(cases)-j)
			return
		}
		i = j
	}
}

// runAlone runs one case by itself: its diagnostics stream as they come.
func runAlone(s Suite, c Case, w *ktap.Writer, opt options, h *health) {
	current.Store(c.Name)
	start := time.Now()
	var o outcome
	o.res, o.reason, o.stuck = runCase(c, w, opt, nil)
	if o.stuck {
		h.forget(w, c.Name)
	}
	if c.Settle {
		if msg := h.settle(w, c.Name); msg != "" {
			w.Diag("%s: %s", c.Name, msg)
			if o.res != ktap.Fail {
				o.res, o.reason = ktap.Fail, "its namespaces were not torn down"
			}
		}
	}
	var lost string
	o.reports, lost = h.reports(w)
	if lost != "" {
		o.lost = append(o.lost, lost)
	}
	o.elapsed = time.Since(start)
	o.done = true
	printResult(s, c, w, h, &o)
}

// runGroup runs consecutive cases of one Group, opt.jobs at a time, and
// prints each result in table order once it and the ones before it are
// known. Cases marked Slow start first, so that the others run while they
// wait. The kernel log is read each time one ends: a report then is
// blamed on every case of the group that was running. It returns the
// names of the cases a stop kept from starting.
func runGroup(s Suite, cases []Case, w *ktap.Writer, opt options, h *health) (notRun []string) {
	group := "group " + cases[0].Group
	current.Store(group)
	order := make([]int, 0, len(cases))
	for _, slow := range []bool{true, false} {
		for k, c := range cases {
			if c.Slow == slow {
				order = append(order, k)
			}
		}
	}
	outs := make([]outcome, len(cases))
	started := make([]bool, len(cases))
	ended := make(chan int)
	running := map[int]bool{}
	starts := make([]time.Time, len(cases))
	next, printed := 0, 0
	for printed < len(cases) {
		for len(running) < opt.jobs && next < len(order) && !Interrupted() {
			k := order[next]
			running[k], started[k] = true, true
			starts[k] = time.Now()
			go func() {
				o := &outs[k]
				o.res, o.reason, o.stuck = runCase(cases[k], w, opt, &o.lines)
				ended <- k
			}()
			next++
		}
		if len(running) > 0 {
			k := <-ended
			delete(running, k)
			outs[k].elapsed = time.Since(starts[k])
			outs[k].done = true
			if reps, lost := h.reports(w); len(reps) > 0 || lost != "" {
				blamed := []int{k}
				for r := range running {
					blamed = append(blamed, r)
				}
				for _, b := range blamed {
					if lost != "" {
						outs[b].lost = append(outs[b].lost, lost)
					}
					if len(reps) == 0 {
						continue
					}
					outs[b].reports = append(outs[b].reports, reps...)
					for _, other := range blamed {
						// Reports read at several cases' ends blame it
						// beside the same case again: named once.
						if other != b && !slices.Contains(outs[b].beside, cases[other].Name) {
							outs[b].beside = append(outs[b].beside, cases[other].Name)
						}
					}
				}
			}
		}
		for printed < len(cases) && (outs[printed].done || !started[printed] && len(running) == 0 && (next == len(order) || Interrupted())) {
			o := &outs[printed]
			if !started[printed] {
				notRun = append(notRun, cases[printed].Name)
				printed++
				continue
			}
			for _, l := range o.lines {
				w.Diag("%s", l)
			}
			if o.stuck {
				h.forget(w, group)
			}
			printResult(s, cases[printed], w, h, o)
			printed++
		}
	}
	return notRun
}

// printResult judges a case's outcome against the kernel's health and prints
// its result line. A case that passed its own checks (or failed as
// expected) while the watch lost kernel log records has not been
// watched: it SKIPs, naming what was lost, as does one whose verdict
// rests on the log (RequireKernelLog) when the log is not read. Any other
// pass says on its result line what the watch could not see.
func printResult(s Suite, c Case, w *ktap.Writer, h *health, o *outcome) {
	res, reason := judge(w, c.Name, o.reports, o.beside, o.res, o.reason)
	if res == ktap.Pass || res == ktap.XFail {
		own := " (its own checks passed)"
		if res == ktap.XFail {
			own = " (its own checks: XFAIL " + reason + ")"
		}
		switch why := h.logUnwatched(); {
		case len(o.lost) > 0:
			res, reason = ktap.Skip, fmt.Sprintf("kernel log: %s while this case ran; it was not watched%s", strings.Join(o.lost, ", "), own)
		case c.RequireKernelLog && why != "":
			res, reason = ktap.Skip, fmt.Sprintf("%s; the case's verdict rests on it%s", why, own)
		default:
			if note := h.note(); note != "" {
				reason = strings.TrimPrefix(reason+"; "+note, "; ")
			}
		}
	}
	w.Result(s.Name+"."+c.Name, res, reason, o.elapsed)
	if s.AfterCase != nil {
		s.AfterCase(c.Name, res, reason)
	}
}
