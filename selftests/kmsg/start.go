// SPDX-License-Identifier: GPL-2.0

package kmsg

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// userHZ is the unit of /proc/PID/stat's start time (USER_HZ, 100 on
// every architecture Linux runs these programs on).
const userHZ = 100

// The records' timestamps come from the kernel's local_clock(), which is
// not CLOCK_MONOTONIC: the two drift apart (tens of ppm, so seconds on a
// host up for weeks), and nothing in /proc reads local_clock. So the
// watch finds the program's start on the log's own clock by logging a
// marker line, as the kselftest runner marks each target's start: the
// marker's timestamp, less the CLOCK_MONOTONIC time from the program's
// start to its write, is the start, to within one USER_HZ tick (the
// resolution of the start time the kernel gives; a record from up to a
// tick before the program started may count too, never one after it is
// missed).

// marker is one marker write: the text written and the CLOCK_MONOTONIC
// time just before the write.
type marker struct {
	text string
	at   time.Duration
}

// markLog writes a marker line to /dev/kmsg.
func markLog(program string) (marker, error) {
	// math/rand, not crypto/rand: early in a boot the kernel's CRNG is
	// not ready, and getrandom would block the program until it is
	// (seconds under TCG). The nonce only tells this marker from another
	// program's with the same pid.
	text := fmt.Sprintf("%s[%d]: kernel log watched for reports from the program's start (%012x)",
		program, os.Getpid(), rand.Uint64()&(1<<48-1))
	fd, err := unix.Open(DevKmsg, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return marker{}, fmt.Errorf("open %s for writing: %w", DevKmsg, err)
	}
	defer unix.Close(fd)
	at, err := monotonic()
	if err != nil {
		return marker{}, err
	}
	// <14>: facility user, level info. A fresh descriptor has a fresh
	// rate limit, so this first write is always logged.
	if _, err := unix.Write(fd, []byte("<14>"+text+"\n")); err != nil {
		return marker{}, fmt.Errorf("write %s: %w", DevKmsg, err)
	}
	return marker{text: text, at: at}, nil
}

// processStart is when the process started, on CLOCK_MONOTONIC. Tests
// replace it.
var processStart = func() (time.Duration, error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, err
	}
	// comm, in parentheses, may hold anything: fields count from the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/self/stat: no ')' in %q", b)
	}
	f := strings.Fields(string(b[i+1:]))
	// Field 22 (starttime) is the 20th after comm (field 2).
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/self/stat: %d fields after comm", len(f))
	}
	ticks, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/self/stat starttime %q: %w", f[19], err)
	}
	// starttime is on CLOCK_BOOTTIME, which goes on during suspend.
	var boot, mono unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &boot); err != nil {
		return 0, err
	}
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &mono); err != nil {
		return 0, err
	}
	suspended := time.Duration(boot.Nano() - mono.Nano())
	return time.Duration(ticks)*(time.Second/userHZ) - suspended, nil
}

func monotonic() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0, err
	}
	return time.Duration(ts.Nano()), nil
}

// start reads the records the log holds at Open and keeps, as reports to
// come, those logged since the program started. It returns "" when the
// start was found, else where the watch starts and why.
func (w *Watcher) start(program string, mark func(string) (marker, error)) string {
	began, err := processStart()
	if err != nil {
		w.skipAll()
		return fmt.Sprintf("from the watch's start, not the program's (its start time: %v)", err)
	}
	m, err := mark(program)
	if err != nil {
		w.skipAll()
		return fmt.Sprintf("from the watch's start, not the program's (the log cannot be marked: %v)", err)
	}
	// A record that follows records overwritten before they were read
	// (EPIPE) carries how many were lost; they count only if they may
	// have been logged since the program's start, which the first record
	// after them says.
	type heldRecord struct {
		rec  []byte
		lost uint64
	}
	var held []heldRecord
	found, markAt := false, time.Duration(0)
	w.readAll(func(rec []byte) {
		hdr, body, _ := strings.Cut(string(rec), ";")
		lost := w.gap(hdr)
		if text, _, _ := strings.Cut(body, "\n"); text == m.text {
			found, markAt = true, recordTime(hdr)
			if lost > 0 {
				// Lost just before the marker: since the start,
				// at least in part.
				w.missed += lost
			}
			return
		}
		held = append(held, heldRecord{bytes.Clone(rec), lost})
	})
	if !found {
		return "from the watch's start, not the program's (its marker line is not in the log)"
	}
	since := markAt - (m.at - began) - time.Second/userHZ
	last := w.lastSeq // replaying moves it back
	defer func() { w.lastSeq, w.lastRead = last, w.now() }()
	for _, h := range held {
		hdr, _, _ := strings.Cut(string(h.rec), ";")
		if recordTime(hdr) >= since {
			w.missed += h.lost
			w.record(h.rec)
		}
	}
	return ""
}

// skipAll reads past every record the log holds: only what is logged
// from now on counts.
func (w *Watcher) skipAll() {
	w.readAll(func([]byte) {})
	w.resync = false
}

// recordTime is the timestamp of a record's header "PRI,SEQ,USEC,FLAGS".
func recordTime(hdr string) time.Duration {
	f := strings.Split(hdr, ",")
	if len(f) < 3 {
		return 0
	}
	us, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return 0
	}
	return time.Duration(us) * time.Microsecond
}

// From says where the watch starts when that is not the program's start
// (the log could not be marked), or "".
func (w *Watcher) From() string { return w.from }
