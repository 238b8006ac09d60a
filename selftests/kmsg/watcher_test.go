// SPDX-License-Identifier: GPL-2.0

package kmsg

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fakeLog plays /dev/kmsg's read(2): one record per read, EINVAL when the
// buffer is too small (the record stays unread), and scripted errors.
type fakeLog struct {
	steps []any // string: a record; error: returned once
	reads int
}

func (f *fakeLog) read(_ int, p []byte) (int, error) {
	f.reads++
	if len(f.steps) == 0 {
		return 0, unix.EAGAIN
	}
	switch s := f.steps[0].(type) {
	case error:
		f.steps = f.steps[1:]
		return 0, s
	case string:
		if len(s) > len(p) {
			return 0, unix.EINVAL
		}
		f.steps = f.steps[1:]
		return copy(p, s), nil
	}
	panic("bad step")
}

func fakeWatcher(t *testing.T, steps ...any) (*Watcher, *fakeLog) {
	t.Helper()
	mask, err := ReadTaint()
	if err != nil {
		t.Skipf("no taint mask to compare with: %v", err)
	}
	f := &fakeLog{steps: steps}
	// fd 0 is never read: the fake replaces the read.
	w := newWatcher(0, f.read, mask)
	clock := &fakeClock{t: time.Unix(1000, 0)}
	w.now, w.sleep = clock.now, clock.sleep
	return w, f
}

// fakeClock is a clock that moves only when slept on.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time        { return c.t }
func (c *fakeClock) sleep(d time.Duration) { c.t = c.t.Add(d) }

func TestPollRecords(t *testing.T) {
	w, _ := fakeWatcher(t,
		"6,100,1000,-;veth0: entered promiscuous mode\n SUBSYSTEM=net\n DEVICE=n3\n",
		"4,101,1001,-;------------[ cut here ]------------\n",
		// A message with an embedded newline and an escaped backslash.
		`4,102,1002,-;WARN message one\x0aline two \x5c end`+"\n",
		"4,103,1003,-;WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x0/0x10\n",
		"4,104,1004,-;Modules linked in:\n",
		// A pr_cont() fragment from a kernel before 5.10.
		"4,105,1005,c;CPU: 0 PID: 1 \n",
		"4,106,1006,+;Comm: init\n",
		"4,107,1007,-;---[ end trace 0000000000000000 ]---\n",
		"6,108,1008,-;ordinary line\n",
	)
	got := w.Poll()
	want := []Report{{Kind: "WARNING", Lines: []string{
		"WARN message one",
		`line two \ end`,
		"WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x0/0x10",
		"Modules linked in:",
		"CPU: 0 PID: 1 Comm: init",
		"---[ end trace 0000000000000000 ]---",
	}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Poll() =\n%q\nwant\n%q", got, want)
	}
	if w.Missed() != 0 || w.Err() != nil {
		t.Errorf("Missed %d, Err %v; want 0, nil", w.Missed(), w.Err())
	}
	if again := w.Poll(); len(again) != 0 {
		t.Errorf("second Poll() = %q, want nothing", again)
	}
}

// A line user space wrote to /dev/kmsg (facility user) is a report of its
// own: the kernel's records after it are not its body.
func TestPollFacilityEndsReport(t *testing.T) {
	w, _ := fakeWatcher(t,
		"12,1,1,-;WARNING: CPU: 0 PID: 1 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x0/0x10\n",
		"6,2,2,-;ACPI: PM: Preparing to enter system sleep state S5\n",
		"4,3,3,-;WARNING: CPU: 1 PID: 9 at net/core/dev.c:10 f+0x0/0x1\n",
		"4,4,4,-;Modules linked in:\n",
	)
	got := w.Settle()
	if len(got) != 2 || len(got[0].Lines) != 1 || len(got[1].Lines) != 2 {
		t.Errorf("Poll() = %q, want the user's one-line WARNING and the kernel's two-line one", got)
	}
}

// A report still being logged when Poll runs stays open: it is returned
// whole, with the fingerprint of the whole report, once its end marker
// comes; a report that never gets one ends when the log has been quiet
// for Quiet (Settle waits for that at the end of a case). Closed at the
// first poll, as before, the known KCSAN report had a partial
// fingerprint, and printed as a new one.
func TestPollSplitReport(t *testing.T) {
	data, err := os.ReadFile("testdata/u-kcsan-strict-poll_schedule_timeout-pollwake.txt")
	if err != nil {
		t.Fatal(err)
	}
	var recs []any
	for i, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		recs = append(recs, fmt.Sprintf("4,%d,%d,-;%s\n", i+1, i+1, StripPrefix(l)))
	}
	whole := Scan(strings.Split(string(data), "\n"))
	if len(whole) != 1 {
		t.Fatalf("%d reports in the capture, want 1", len(whole))
	}
	cut := 12 // in the first stack
	w, f := fakeWatcher(t, recs[:cut]...)
	if first := w.Poll(); len(first) != 0 {
		t.Fatalf("first Poll() = %q, want nothing: the report is still being logged", first)
	}
	f.steps = recs[cut:]
	second := w.Poll()
	if len(second) != 1 || second[0].Fingerprint() != whole[0].Fingerprint() {
		t.Fatalf("second Poll() = %q, want the whole report, fingerprint %q", second, whole[0].Fingerprint())
	}
	if _, ok := Known(second[0]); !ok {
		t.Errorf("the report split across two polls is not known: %q", second[0].Fingerprint())
	}

	// No end marker: open until the log is quiet.
	w, _ = fakeWatcher(t,
		"4,1,1,-;INFO: task kworker/0:1:12 blocked for more than 120 seconds.\n",
		"4,2,2,-;      Not tainted 6.1.192 #1\n",
	)
	if got := w.Poll(); len(got) != 0 {
		t.Fatalf("Poll() = %q, want nothing before the log is quiet", got)
	}
	w.sleep(Quiet - time.Millisecond)
	if got := w.Poll(); len(got) != 0 {
		t.Fatalf("Poll() %v later = %q, want nothing", Quiet-time.Millisecond, got)
	}
	w.sleep(time.Millisecond)
	if got := w.Poll(); len(got) != 1 || len(got[0].Lines) != 2 {
		t.Fatalf("Poll() once quiet = %q, want the report's two lines", got)
	}

	// Settle waits for the end of the report being logged.
	w, f = fakeWatcher(t, recs[:cut]...)
	late := recs[cut:]
	w.sleep = func(d time.Duration) { f.steps, late = append(f.steps, late...), nil }
	if got := w.Settle(); len(got) != 1 || got[0].Fingerprint() != whole[0].Fingerprint() {
		t.Fatalf("Settle() = %q, want the whole report", got)
	}

	// A report whose lines keep coming ends after MaxOpen.
	w, f = fakeWatcher(t, "4,1,1,-;INFO: task x:1 blocked for more than 120 seconds.\n")
	for i := 0; w.Poll() == nil && i < 1000; i++ {
		f.steps = []any{fmt.Sprintf("4,%d,1,-;line %d\n", i+2, i)}
		w.sleep(time.Second)
	}
	if w.now().Sub(time.Unix(1000, 0)) > MaxOpen+time.Second {
		t.Errorf("the report ended after %v, want MaxOpen (%v)", w.now().Sub(time.Unix(1000, 0)), MaxOpen)
	}
}

func TestPollOverwrittenAndLongRecords(t *testing.T) {
	long := "4,10,1,-;WARNING: CPU: 1 PID: 2 at x.c:1 f+0x0/0x1 " + strings.Repeat("x", 3*recordBuf) + "\n"
	w, f := fakeWatcher(t,
		"6,7,1,-;first\n",
		unix.EPIPE, // records 8 and 9 overwritten
		long,
		unix.EINTR,
		"6,11,1,-;after\n",
	)
	got := w.Settle()
	if len(got) != 1 || got[0].Kind != "WARNING" || !strings.HasSuffix(got[0].Lines[0], "xxx") {
		t.Fatalf("Poll() = %.200q, want the long WARNING record whole", got)
	}
	if w.Missed() != 2 {
		t.Errorf("Missed() = %d, want 2", w.Missed())
	}
	if w.Err() != nil {
		t.Errorf("Err() = %v", w.Err())
	}
	if len(f.steps) != 0 {
		t.Errorf("records left unread: %q", f.steps)
	}

	// A loss before the first record read is counted, as its size is unknown.
	w, _ = fakeWatcher(t, unix.EPIPE, "6,50,1,-;x\n")
	w.Poll()
	if w.Missed() != 1 {
		t.Errorf("Missed() after a loss before any record = %d, want 1", w.Missed())
	}
}

func TestPollReadError(t *testing.T) {
	w, _ := fakeWatcher(t, unix.EIO, "4,1,1,-;WARNING: CPU: 0 PID: 1 at a.c:1 f+0x0/0x1\n")
	if got := w.Poll(); len(got) != 0 {
		t.Errorf("Poll() = %q after a read error, want nothing", got)
	}
	if !errors.Is(w.Err(), unix.EIO) {
		t.Errorf("Err() = %v, want EIO", w.Err())
	}
}

func TestPollTaint(t *testing.T) {
	w, _ := fakeWatcher(t)
	// The real mask cannot be changed here (that would taint the host), so
	// the watcher is made to believe it began on an untainted kernel.
	now := w.seen
	w.seen = 0
	got := w.Poll()
	if len(got) != len(NewBits(0, now)) {
		t.Fatalf("Poll() = %q, want one report per bit of %d", got, now)
	}
	for i, bit := range NewBits(0, now) {
		if got[i].Kind != "taint" || got[i].Lines[0] != "taint: "+BitName(bit) {
			t.Errorf("report %q, want taint: %s", got[i], BitName(bit))
		}
	}
	if again := w.Poll(); len(again) != 0 {
		t.Errorf("bits reported twice: %q", again)
	}
}

func TestTaintReports(t *testing.T) {
	got := TaintReports(1<<12|1<<13, 1<<12|1<<13|1<<9|1<<6)
	want := []Report{
		{Kind: "taint", Lines: []string{"taint: U (user request)", "/proc/sys/kernel/tainted: 12864 (UWOE), was 12288 (OE)"}},
		{Kind: "taint", Lines: []string{"taint: W (warning)", "/proc/sys/kernel/tainted: 12864 (UWOE), was 12288 (OE)"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("TaintReports = %q, want %q", got, want)
	}
	if got[1].String() != "taint: W (warning)" {
		t.Errorf("String() = %q", got[1].String())
	}
	if got := TaintReports(0, 64); got[0].Lines[1] != "/proc/sys/kernel/tainted: 64 (U), was 0 (untainted)" {
		t.Errorf("from an untainted kernel: %q", got)
	}
	if got := TaintReports(512, 0); got != nil {
		t.Errorf("a cleared bit is reported: %q", got)
	}
}

func TestTaintLetters(t *testing.T) {
	// The kernel's order: P F S R M B U D A W C I O E L K X T N J.
	if got := Letters(1<<20 - 1); got != "PFSRMBUDAWCIOELKXTNJ" {
		t.Errorf("Letters(all) = %q", got)
	}
	if got := BitName(9); got != "W (warning)" {
		t.Errorf("BitName(9) = %q", got)
	}
	if got := BitName(6); got != "U (user request)" {
		t.Errorf("BitName(6) = %q", got)
	}
	if got := BitName(40); got != "bit 40" {
		t.Errorf("BitName(40) = %q", got)
	}
	for in, want := range map[string]uint64{"0\n": 0, "512\n": 512, " 12288 ": 12288} {
		if got, err := ParseTaint(in); err != nil || got != want {
			t.Errorf("ParseTaint(%q) = %d, %v", in, got, err)
		}
	}
	if _, err := ParseTaint("W"); err == nil {
		t.Error("ParseTaint accepted W")
	}
}

// The real log is only read here: nothing is written to the host's log
// (the marker write is refused, so the watch starts at Open and says so)
// and no taint is set on it.
func TestOpenRealLog(t *testing.T) {
	w, err := open("kmsg-test", func(string) (marker, error) { return marker{}, errors.New("not in a test") })
	if err != nil {
		if errors.Is(err, os.ErrPermission) || errors.Is(err, os.ErrNotExist) {
			t.Skipf("cannot watch this kernel: %v", err)
		}
		t.Fatal(err)
	}
	if !strings.Contains(w.From(), "the log cannot be marked: not in a test") {
		t.Errorf("From() = %q", w.From())
	}
	// Whatever the host logs meanwhile is not this test's business; the
	// point is that Poll returns at once and the watcher closes.
	w.Poll()
	if err := w.Err(); err != nil {
		t.Errorf("Err() = %v", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close() = %v", err)
	}
	if got := w.Poll(); len(got) != 0 && got[0].Kind != "taint" {
		t.Errorf("Poll() after Close read the log: %q", got)
	}
}
