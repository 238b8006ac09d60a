// SPDX-License-Identifier: GPL-2.0

// Package kmsg watches the kernel log and the taint mask for kernel reports
// (BUG, WARNING, KASAN, KCSAN, UBSAN, lockdep, RCU stall, list corruption,
// ...), so that a test can fail when the kernel complained while it ran,
// even though everything it checked was delivered as expected.
//
// A Watcher reads /dev/kmsg without blocking from the moment it is opened and
// compares /proc/sys/kernel/tainted with its value at that moment. It
// returns a report once the report has ended, and counts the records the
// kernel overwrote before they were read (Missed): a report may have been
// among them. Scan
// classifies lines captured elsewhere, such as a serial console. Every
// report has a Fingerprint; Sift sets aside the known reports, those that
// known_reports.txt names (the unpatched kernel gives them too).
package kmsg

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Report is one kernel report: a BUG, WARNING, KASAN, UBSAN, lockdep, RCU
// stall, list corruption, a socket freed alive, or a newly set taint bit.
type Report struct {
	// Kind is one of "WARNING", "BUG", "KASAN", "KCSAN", "UBSAN",
	// "lockdep", "RCU stall", "list corruption", "refcount", "Oops",
	// "panic", "lockup", "hung task", "kmemleak", "alive socket", "taint".
	Kind string
	// Lines are the report's first lines (up to MaxLines, MaxKCSANLines
	// for KCSAN), as logged, without the kmsg record or console timestamp
	// prefix.
	Lines []string
	// Stacks are the function names of the report's stack traces, in
	// the order logged, read from all of the report, not only from Lines;
	// nil when it had none (see Fingerprint).
	Stacks [][]string
	// Accesses are a KCSAN race's two accesses, one per stack of Stacks
	// ("read 8", "write (marked) 4"); nil for other kinds.
	Accesses []string
	// Locks are the lock classes a lockdep report names before its
	// "other info" (the lock taken, then the one held), or the file:line
	// of a suspicious RCU usage, read from all of the report; nil for
	// other kinds.
	Locks []string
	// Gaps are the lines inside the report saying that messages were
	// dropped or suppressed: the report is not whole.
	Gaps []string
}

// String is the report on one line: its title line, after its kind when the
// title does not say it.
func (r Report) String() string {
	if len(r.Lines) == 0 {
		return r.Kind
	}
	first := r.title()
	if r.Kind == "taint" || strings.Contains(first, r.Kind) {
		return first
	}
	return r.Kind + ": " + first
}

// title is the line that names the report: its first, or the first that
// starts a report of its kind (a WARN()'s own message comes before it).
func (r Report) title() string {
	for _, l := range r.Lines {
		if t := classify(l); t != nil && t.kind == r.Kind {
			return l
		}
	}
	if len(r.Lines) == 0 {
		return ""
	}
	return r.Lines[0]
}

// Paths of the kernel's interfaces.
const (
	DevKmsg     = "/dev/kmsg"
	TaintedPath = "/proc/sys/kernel/tainted"
)

// recordBuf is the first read buffer: the kernel's largest record
// (CONSOLE_EXT_LOG_MAX) fits, but a larger one is still read by growing it.
const recordBuf = 8192

// maxRecordBuf bounds that growth.
const maxRecordBuf = 1 << 20

// Watcher watches the kernel log and the taint mask. It is not safe for
// concurrent use.
type Watcher struct {
	fd      int
	read    func(fd int, p []byte) (int, error) // unix.Read; tests replace it
	buf     []byte
	split   splitter
	seen    uint64 // the mask at Open and every bit reported since
	lastSeq uint64
	haveSeq bool // lastSeq is a record's that was read
	resync  bool // records were overwritten since the last one read
	// facility of the last record (0: the kernel's)
	facility     int
	haveFacility bool
	missed       uint64
	err          error
	from         string // where the watch starts, if not at the program's start
	// now and sleep are the clock (time.Now, time.Sleep); tests replace them.
	now   func() time.Time
	sleep func(time.Duration)
	// lastRead is when a record was last read, opened when the open
	// report began (see Poll).
	lastRead, opened time.Time
	openRep          *Report
	// started is the taint mask at the program's start (Open).
	started     uint64
	toldStarted bool // the bits already set were said
}

// Quiet is how long the log must stay silent before a report that has no
// end marker (or whose end marker is still to come) counts as ended. The
// kernel logs a report in one go, line after line; under TCG on a loaded
// host a vCPU may stall for a second between two of them.
const Quiet = 2 * time.Second

// MaxOpen bounds how long a report stays open while the log does not go
// quiet (a report without an end marker followed by unrelated messages).
const MaxOpen = 10 * time.Second

// settleStep is how often Settle reads the log while a report is open.
const settleStep = 50 * time.Millisecond

// Open starts watching the kernel log from the calling process's start:
// every record logged since then counts, also those logged before Open
// (a WARNING the program's first instructions caused). It opens
// /dev/kmsg non-blocking, records the taint mask, and finds the
// program's start on the log's own clock (Start); where that cannot be
// done, the watch starts at Open, and From says why. It fails when the
// log or the taint mask cannot be read (no /dev/kmsg, or no permission:
// CAP_SYSLOG with kernel.dmesg_restrict); the caller says so once and
// goes on without. program names the marker line Start writes.
func Open(program string) (*Watcher, error) { return open(program, markLog) }

func open(program string, mark func(string) (marker, error)) (*Watcher, error) {
	mask, err := ReadTaint()
	if err != nil {
		return nil, err
	}
	// A fresh descriptor reads from the oldest record the kernel keeps.
	fd, err := unix.Open(DevKmsg, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", DevKmsg, err)
	}
	w := newWatcher(fd, unix.Read, mask)
	w.from = w.start(program, mark)
	return w, nil
}

func newWatcher(fd int, read func(int, []byte) (int, error), mask uint64) *Watcher {
	return &Watcher{fd: fd, read: read, buf: make([]byte, recordBuf), seen: mask, started: mask,
		now: time.Now, sleep: time.Sleep}
}

// Poll reads every record logged since the last Poll without blocking and
// returns the reports they complete, plus one Report per taint bit newly set
// since Open. A report still being logged stays open until its end marker
// comes, the log has been quiet for Quiet, or it has been open for MaxOpen:
// cut at a poll, its fingerprint would be partial and a known report new.
func (w *Watcher) Poll() []Report {
	w.drain()
	if w.split.pending() {
		now := w.now()
		if now.Sub(w.lastRead) >= Quiet || (w.split.open != nil && now.Sub(w.opened) >= MaxOpen) {
			w.split.boundary()
		}
	}
	reports := w.split.take()
	mask, err := ReadTaint()
	if err != nil {
		w.fail(fmt.Errorf("taint mask: %w", err))
		return reports
	}
	reports = append(reports, TaintReports(w.seen, mask)...)
	w.seen |= mask
	return reports
}

// Settle is Poll at the end of a case: while a report is still being
// logged it reads the log again until the report ends (its end marker,
// Quiet, or MaxOpen), so that the report is whole and due to the case
// during which it began.
func (w *Watcher) Settle() []Report {
	reports := w.Poll()
	for w.split.pending() {
		w.sleep(settleStep)
		reports = append(reports, w.Poll()...)
	}
	return reports
}

// AlreadyTainted is the taint bits that were set when the program started,
// once: the taint mask cannot show them being set again, so they are not
// judged, and the caller says so. Later calls return 0.
func (w *Watcher) AlreadyTainted() uint64 {
	if w.toldStarted {
		return 0
	}
	w.toldStarted = true
	return w.started
}

// drain reads records until the log has no more.
func (w *Watcher) drain() {
	w.readAll(func(rec []byte) {
		w.lastRead = w.now()
		w.record(rec)
		if w.split.open != nil && w.split.open != w.openRep {
			w.openRep, w.opened = w.split.open, w.lastRead
		}
	})
}

// readAll hands every record the log has now to fn.
func (w *Watcher) readAll(fn func(rec []byte)) {
	for w.fd >= 0 {
		n, err := w.read(w.fd, w.buf)
		switch {
		case err == nil && n == 0:
			return
		case err == nil:
			fn(w.buf[:n])
		case errors.Is(err, unix.EAGAIN):
			return
		case errors.Is(err, unix.EINTR):
		case errors.Is(err, unix.EPIPE):
			// Records were overwritten before they were read; the kernel
			// has moved the file to the oldest record it still has. How
			// many were lost shows in the next record's sequence number.
			w.resync = true
		case errors.Is(err, unix.EINVAL) && len(w.buf) < maxRecordBuf:
			// The record does not fit; it stays unread until it does.
			w.buf = make([]byte, 2*len(w.buf))
		default:
			// The records from here on may never be read: the watch
			// is broken, and Err says so.
			w.fail(fmt.Errorf("read %s: %w", DevKmsg, err))
			return
		}
	}
}

// record parses one /dev/kmsg record: "PRI,SEQ,USEC,FLAGS[,...];TEXT\n"
// followed by " KEY=VALUE\n" dictionary lines.
func (w *Watcher) record(rec []byte) {
	hdr, body, ok := strings.Cut(string(rec), ";")
	if !ok {
		return
	}
	f := strings.Split(hdr, ",")
	w.missed += w.gap(hdr)
	// A report's lines all come from one source: a record written by user
	// space (facility 1 and up, as through /dev/kmsg) neither continues a
	// kernel report nor is continued by the kernel's records.
	if pri, err := strconv.Atoi(f[0]); err == nil {
		if w.haveFacility && pri>>3 != w.facility {
			w.split.boundary()
		}
		w.facility, w.haveFacility = pri>>3, true
	}
	text, _, _ := strings.Cut(body, "\n")
	// '+' marks a fragment of the previous line (kernels before 5.10 that
	// could not merge a pr_cont() themselves).
	cont := len(f) >= 4 && strings.Contains(f[3], "+")
	for i, line := range strings.Split(unescape(text), "\n") {
		if i == 0 && cont {
			w.split.cont(line)
			continue
		}
		w.split.line(line)
	}
}

// gap reads a record's sequence number and returns how many records were
// overwritten before it was read: none unless the read before it failed
// with EPIPE; then the gap in sequence numbers, or at least one when there
// is no record before it to count from.
func (w *Watcher) gap(hdr string) uint64 {
	f := strings.Split(hdr, ",")
	if len(f) < 2 {
		return 0
	}
	seq, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0
	}
	var lost uint64
	if w.resync {
		if w.haveSeq && seq > w.lastSeq {
			lost = seq - w.lastSeq - 1
		}
		if lost == 0 {
			lost = 1 // at least one; which, is unknown
		}
		w.resync = false
	}
	w.lastSeq, w.haveSeq = seq, true
	return lost
}

// unescape undoes /dev/kmsg's \xNN escaping of control characters,
// backslashes and bytes above 126.
func unescape(s string) string {
	if !strings.Contains(s, `\x`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			if v, ok := hexByte(s[i+2], s[i+3]); ok {
				b.WriteByte(v)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func hexByte(hi, lo byte) (byte, bool) {
	h, ok1 := hexDigit(hi)
	l, ok2 := hexDigit(lo)
	return h<<4 | l, ok1 && ok2
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// Missed is how many records the kernel overwrote before they were read;
// a report among them went unseen.
func (w *Watcher) Missed() uint64 { return w.missed }

// Err is the first error that stopped the watcher reading the log or the
// taint mask, or nil.
func (w *Watcher) Err() error { return w.err }

func (w *Watcher) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// Close stops watching.
func (w *Watcher) Close() error {
	if w.fd < 0 {
		return nil
	}
	err := unix.Close(w.fd)
	w.fd = -1
	return err
}

// Scan classifies plain log or console lines (a serial console capture, with
// or without "[    1.234567]" timestamps) and returns the reports in them.
func Scan(lines []string) []Report {
	var sc Scanner
	for _, l := range lines {
		sc.Line(l)
	}
	return sc.Reports()
}

// Scanner is Scan for lines that arrive one at a time, such as a console
// being read. The zero value is ready to use.
type Scanner struct{ s splitter }

// Line classifies one console line.
func (sc *Scanner) Line(line string) { sc.s.line(StripPrefix(line)) }

// Reports returns the reports found since the last call, the one still
// being logged included.
func (sc *Scanner) Reports() []Report { return sc.s.takeAll() }

// StripPrefix removes what the console puts before a message: a trailing
// carriage return, the "[    1.234567]" timestamp and a "[  T123]" or
// "[    C0]" caller id (CONFIG_PRINTK_CALLER).
func StripPrefix(line string) string {
	line = strings.TrimRight(line, "\r")
	rest, ok := bracket(line, isTimestamp)
	if !ok {
		return line
	}
	if r, ok := bracket(rest, isCaller); ok {
		rest = r
	}
	// The console puts one space after the prefix; more belong to the
	// message (stack frames are indented).
	return strings.TrimPrefix(rest, " ")
}

// bracket strips a leading "[...]" whose inside (spaces trimmed) passes ok.
func bracket(s string, ok func(string) bool) (string, bool) {
	if !strings.HasPrefix(s, "[") {
		return s, false
	}
	end := strings.IndexByte(s, ']')
	if end < 0 || !ok(strings.TrimSpace(s[1:end])) {
		return s, false
	}
	return s[end+1:], true
}

func isTimestamp(s string) bool {
	sec, frac, ok := strings.Cut(s, ".")
	return ok && allDigits(sec) && allDigits(frac)
}

func isCaller(s string) bool {
	return len(s) > 1 && (s[0] == 'T' || s[0] == 'C') && allDigits(s[1:])
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
