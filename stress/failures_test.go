// SPDX-License-Identifier: GPL-2.0

package main

import (
	"flag"
	"strings"
	"testing"
	"time"
)

// topologyWithFailures is a fault mode's topology whose clone-only
// receivers read counts ENOBUFS (by kind), and whose two senders
// completed their batches.
func topologyWithFailures(counts map[string]int64) *topology {
	t := &topology{cfg: config{minBatches: 1, minFailures: 100, failPercent: 20, maxDuration: time.Minute}}
	for kind := range cloneOnlyKinds {
		st := &stable{kind: kind, cloneOnly: true}
		st.overruns.Store(counts[kind])
		t.stables = append(t.stables, st)
	}
	t.stables = append(t.stables, &stable{kind: "local-plain"})
	t.stables[len(t.stables)-1].overruns.Store(1000) // not a clone-only kind: never counted
	for _, name := range []string{"S0", "S1"} {
		t.senders = append(t.senders, &sender{name: name, batches: 10})
	}
	return t
}

func judgeFaults(counts map[string]int64) outcome {
	var out outcome
	out.report.Mode = "faults0"
	topologyWithFailures(counts).judgeMinima(&out, modes[3], 30*time.Second, 0, true)
	return out
}

// The minimum of failures that hit the broadcast is required per protocol
// and per receiver kind. 400 failures, all in the NETLINK_USERSOCK walk,
// met the old minimum (100 in all); now the mode fails, since the ROUTE
// walk reported none of its failed clones, naming the counts.
func TestFailuresOnlyInUsersockFail(t *testing.T) {
	out := judgeFaults(map[string]int64{"usersock-local": 200, "usersock-foreign-all-nsid": 200})
	if out.report.CloneFailures != 400 {
		t.Errorf("counted %d failures, want 400 (the clone-only kinds alone)", out.report.CloneFailures)
	}
	if out.verdict() != "fail" {
		t.Fatalf("verdict %s (problems %q, shortfalls %q), want fail", out.verdict(), out.problems, out.shortfalls)
	}
	p := strings.Join(out.problems, "\n")
	t.Logf("%s", p)
	for _, w := range []string{"no failure hit the NETLINK_ROUTE walk", "foreign-all-nsid-mapped read no ENOBUFS", "NETLINK_USERSOCK subscribers read 400 (usersock-foreign-all-nsid 200, usersock-local 200)"} {
		if !strings.Contains(p, w) {
			t.Errorf("the failure lacks %q", w)
		}
	}
}

// Each kind short of its minimum is a shortfall naming it: the ROUTE
// observer must read -min-failures, each usersock kind a 50th of it.
func TestFailuresPerKind(t *testing.T) {
	for _, tc := range []struct {
		counts  map[string]int64
		verdict string
		short   []string
	}{
		{map[string]int64{"foreign-all-nsid-mapped": 100, "usersock-local": 2, "usersock-foreign-all-nsid": 2}, "pass", nil},
		{map[string]int64{"foreign-all-nsid-mapped": 99, "usersock-local": 50, "usersock-foreign-all-nsid": 50}, "short",
			[]string{"99 failures hit the NETLINK_ROUTE broadcast at foreign-all-nsid-mapped (ENOBUFS) in 30.0s (3.3/s; -max-duration 1m0s), fewer than the 100 it must reach (-min-failures 100)"}},
		{map[string]int64{"foreign-all-nsid-mapped": 500, "usersock-local": 1, "usersock-foreign-all-nsid": 0}, "short",
			[]string{"0 failures hit the NETLINK_USERSOCK broadcast at usersock-foreign-all-nsid", "1 failures hit the NETLINK_USERSOCK broadcast at usersock-local", "fewer than the 2 it must reach (-min-failures 100, a 50th of it for each usersock kind)"}},
		// The ROUTE walk reported none while the usersock kinds have
		// not reached theirs: a short run, not yet a kernel's fault.
		{map[string]int64{"usersock-local": 3, "usersock-foreign-all-nsid": 1}, "short", []string{"0 failures hit the NETLINK_ROUTE broadcast"}},
	} {
		out := judgeFaults(tc.counts)
		if out.verdict() != tc.verdict {
			t.Errorf("%v: verdict %s (problems %q, shortfalls %q), want %s", tc.counts, out.verdict(), out.problems, out.shortfalls, tc.verdict)
			continue
		}
		s := strings.Join(out.shortfalls, "\n")
		for _, w := range tc.short {
			if !strings.Contains(s, w) {
				t.Errorf("%v: shortfalls %q lack %q", tc.counts, out.shortfalls, w)
			}
		}
	}
	out := judgeFaults(nil)
	if p := strings.Join(out.problems, "\n"); out.verdict() != "fail" || !strings.Contains(p, "no failure hit the broadcast in 30.0s") {
		t.Errorf("no failure at all: verdict %s, problems %q; want the failure", out.verdict(), out.problems)
	}
}

// The run stops early only once every clone-only kind has its minimum.
func TestFailuresEnoughForTheMonitor(t *testing.T) {
	full := map[string]int64{"foreign-all-nsid-mapped": 100, "usersock-local": 2, "usersock-foreign-all-nsid": 2}
	if !failuresEnough(full, 100, "") {
		t.Errorf("%v: not enough", full)
	}
	for kind := range cloneOnlyKinds {
		c := map[string]int64{}
		for k, v := range full {
			c[k] = v
		}
		c[kind]--
		if failuresEnough(c, 100, "") {
			t.Errorf("%v: enough, with %s one short", c, kind)
		}
	}
}

// -min-failures defaults to 100, and that is what the ROUTE observer must
// read; each usersock kind, 2.
func TestMinFailuresDefault(t *testing.T) {
	var c config
	fs := flag.NewFlagSet(program, flag.ContinueOnError)
	c.register(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if c.minFailures != 100 {
		t.Errorf("-min-failures defaults to %d, want 100", c.minFailures)
	}
	if f := fs.Lookup("min-failures"); f == nil || f.DefValue != "100" {
		t.Errorf("-min-failures' default as -h prints it: %+v, want 100", f)
	}
	if r, u := kindMinimum(protoRoute, c.minFailures), kindMinimum(protoUsersock, c.minFailures); r != 100 || u != 2 {
		t.Errorf("kind minima %d (ROUTE), %d (USERSOCK); want 100, 2", r, u)
	}
	if kindMinimum(protoRoute, 0) != 1 || kindMinimum(protoUsersock, 0) != 1 {
		t.Errorf("-min-failures 0 must still ask one failure of each kind")
	}
}
