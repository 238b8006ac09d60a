// SPDX-License-Identifier: GPL-2.0

package kmsg

import (
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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

// Records overwritten while Open scans the log count as lost only when
// they may have been logged since the program's start: a gap before a
// record from before the start is not the program's; one before a record
// from after it is, with its size.
func TestOpenCountsOnlyTheProgramsLostRecords(t *testing.T) {
	const text = "prog[7]: kernel log watched for reports from the program's start (ab)"
	mark := func(string) (marker, error) { return marker{text: text, at: 102 * time.Second}, nil }
	for _, tt := range []struct {
		name  string
		steps []any
		want  uint64
	}{
		{"before the start", []any{unix.EPIPE, "6,5,40000000,-;old\n", "6,6,41000000,-;old\n", "14,7,50000000,-;" + text + "\n"}, 0},
		{"after the start", []any{"6,5,40000000,-;old\n", unix.EPIPE, "6,9,49000000,-;new\n", "14,10,50000000,-;" + text + "\n"}, 3},
		{"before the marker", []any{"6,5,40000000,-;old\n", unix.EPIPE, "14,10,50000000,-;" + text + "\n"}, 4},
	} {
		startAt(t, 100*time.Second)
		w, _ := fakeWatcher(t, tt.steps...)
		if from := w.start("prog", mark); from != "" {
			t.Fatalf("%s: start = %q", tt.name, from)
		}
		w.Settle()
		if w.Missed() != tt.want {
			t.Errorf("%s: Missed() = %d, want %d", tt.name, w.Missed(), tt.want)
		}
	}
}
