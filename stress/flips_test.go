// SPDX-License-Identifier: GPL-2.0

package main

import (
	"reflect"
	"strings"
	"testing"
)

// The writer's CPU is none of the senders' (sender i runs on
// cpus[i mod len(cpus)]); with too few CPUs the mode SKIPs saying why.
func TestWriterCPUIsNoSenders(t *testing.T) {
	for _, tc := range []struct {
		cpus    []int
		senders int
		want    int
	}{
		{[]int{0, 1, 2}, 2, 2},
		{[]int{4, 6, 9}, 2, 9},
		{[]int{0, 1, 2, 3}, 3, 3},
		{[]int{0, 1}, 1, 1},
	} {
		cpu, skip := writerCPU(tc.cpus, tc.senders)
		if cpu != tc.want || skip != "" {
			t.Errorf("writerCPU(%v, %d) = %d, %q; want %d", tc.cpus, tc.senders, cpu, skip, tc.want)
		}
		for i := range tc.senders {
			if tc.cpus[i%len(tc.cpus)] == cpu {
				t.Errorf("writerCPU(%v, %d) = %d, sender %d's CPU", tc.cpus, tc.senders, cpu, i)
			}
		}
	}
	for _, tc := range []struct {
		cpus    []int
		senders int
	}{{[]int{0, 1}, 2}, {[]int{0}, 1}, {[]int{3}, 2}} {
		cpu, skip := writerCPU(tc.cpus, tc.senders)
		if cpu != -1 || !strings.Contains(skip, "need") || !strings.Contains(skip, "no sender uses") {
			t.Errorf("writerCPU(%v, %d) = %d, %q; want a SKIP reason", tc.cpus, tc.senders, cpu, skip)
		}
	}
}

// Flips per batch land in their buckets, and a sender of whose batches
// fewer than half saw a flip fails the mode; half is enough.
func TestFlipsPerBatch(t *testing.T) {
	var f flipCounts
	for _, n := range []int64{0, 0, 0, 1, 2, 3, 4, 15, 16, 63, 64, 9000} {
		f.add(n)
	}
	want := map[string]int{"0": 3, "1": 1, "2-3": 2, "4-15": 2, "16-63": 2, "64+": 2}
	if f.Batches != 12 || f.WithFlip != 9 || f.MaxPerBatch != 9000 || !reflect.DeepEqual(f.Buckets, want) {
		t.Errorf("got %+v, want 12 batches, 9 with a flip, at most 9000, buckets %v", f, want)
	}
	if p := f.problem("S0"); p != "" {
		t.Errorf("9 of 12 batches with a flip: %q", p)
	}

	var half, less flipCounts
	for i := range 10 {
		half.add(int64(i % 2))
		less.add(int64(min(i%2, i/8)))
	}
	if p := half.problem("S0"); p != "" {
		t.Errorf("5 of 10: %q", p)
	}
	p := less.problem("S1")
	for _, w := range []string{"sender S1", "only 1 of its 10 batches", "fewer than half"} {
		if !strings.Contains(p, w) {
			t.Errorf("1 of 10: %q lacks %q", p, w)
		}
	}
	if p := (&flipCounts{}).problem("S2"); p != "" {
		t.Errorf("no batches: %q (-min-batches says that)", p)
	}
}
