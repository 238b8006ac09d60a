// SPDX-License-Identifier: GPL-2.0

package kmsg

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// startAt makes the process look started at began (CLOCK_MONOTONIC) for
// the rest of t.
func startAt(t *testing.T, began time.Duration) {
	t.Helper()
	saved := processStart
	processStart = func() (time.Duration, error) { return began, nil }
	t.Cleanup(func() { processStart = saved })
}

// The records the log held at Open count from the program's start, found
// on the log's clock through the marker: the marker was logged at 50.0 s
// on that clock, 2 s (CLOCK_MONOTONIC) after the program started, so the
// start is at 48.0 s there, less a tick.
func TestOpenCountsFromTheProgramsStart(t *testing.T) {
	startAt(t, 100*time.Second)
	const text = "prog[7]: kernel log watched for reports from the program's start (ab)"
	w, _ := fakeWatcher(t,
		"4,1,40000000,-;WARNING: CPU: 0 PID: 1 at a.c:1 before_the_program+0x0/0x1\n", // 40 s: before
		"4,6,47980000,-;WARNING: CPU: 0 PID: 1 at a.c:2 a_tick_before+0x0/0x1\n",      // 47.98 s: before the tick
		"4,2,47995000,-;WARNING: CPU: 0 PID: 1 at b.c:1 within_a_tick+0x0/0x1\n",      // 47.995 s: the start's tick
		"4,3,48500000,-;WARNING: CPU: 0 PID: 1 at c.c:1 early_in_the_program+0x0/0x1\n",
		"14,4,50000000,-;"+text+"\n",
		"4,5,50100000,-;WARNING: CPU: 0 PID: 1 at d.c:1 after_the_marker+0x0/0x1\n",
	)
	from := w.start("prog", func(string) (marker, error) { return marker{text: text, at: 102 * time.Second}, nil })
	if from != "" {
		t.Fatalf("start = %q, want the program's start found", from)
	}
	var got []string
	for _, r := range w.Settle() {
		if r.Kind == "WARNING" {
			got = append(got, r.Lines[0])
		}
	}
	want := []string{"within_a_tick", "early_in_the_program", "after_the_marker"}
	if len(got) != len(want) {
		t.Fatalf("reports %q, want those of %q", got, want)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("report %d = %q, want %s", i, got[i], want[i])
		}
	}
}

// Where the log cannot be marked, or the marker is not found, the watch
// starts at Open: nothing the log held then counts, and From says why.
func TestOpenWithoutAMarkerStartsAtOpen(t *testing.T) {
	startAt(t, time.Second)
	for name, mark := range map[string]func(string) (marker, error){
		"unwritable": func(string) (marker, error) { return marker{}, errors.New("EPERM") },
		"not logged": func(string) (marker, error) { return marker{text: "never logged", at: 2 * time.Second}, nil },
	} {
		w, f := fakeWatcher(t, "4,1,1500000,-;WARNING: CPU: 0 PID: 1 at a.c:1 held_at_open+0x0/0x1\n")
		if from := w.start("prog", mark); !strings.HasPrefix(from, "from the watch's start") {
			t.Errorf("%s: start = %q", name, from)
		}
		f.steps = []any{"4,2,3000000,-;WARNING: CPU: 0 PID: 1 at b.c:1 after_open+0x0/0x1\n"}
		reps := w.Settle()
		if len(reps) != 1 || !strings.Contains(reps[0].Lines[0], "after_open") {
			t.Errorf("%s: Poll() = %q, want only the WARNING logged after Open", name, reps)
		}
	}
}
