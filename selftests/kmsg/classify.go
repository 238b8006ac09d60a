// SPDX-License-Identifier: GPL-2.0

package kmsg

import (
	"regexp"
	"strings"
)

// MaxLines is how many lines of a report are kept: enough for the report's
// title, the task and the first frames of its stack.
const MaxLines = 12

// MaxKCSANLines is MaxLines for a KCSAN report, whose point is its two
// stacks: the two accesses and their frames, the value change and the
// task line.
const MaxKCSANLines = 64

// maxReportLines bounds a report whose end the kernel does not mark: past
// the lines kept, the rest is read only for its stack frames (Stacks).
const maxReportLines = 400

// A trigger is a message that starts a kernel report. Every pattern is
// anchored at the start of the message, as the kernel prints these titles
// there: a line that merely mentions "BUG" or "warning" (a TAP comment, a
// program's diagnostics, "DEBUG: ...") is never a report.
type trigger struct {
	kind string
	re   *regexp.Regexp
	// blanks: the report's body has blank lines of its own, so a blank line
	// does not end it (it ends at its closing marker).
	blanks bool
	// keep is how many lines are kept (Report.Lines): MaxLines when 0.
	keep int
}

// triggers are tried in order; the first that matches names the kind.
var triggers = []trigger{
	{kind: "KASAN", re: regexp.MustCompile(`^BUG: KASAN: `), blanks: true},
	// "BUG: KCSAN: data-race in a / b", "BUG: KCSAN: assert: race in a / b",
	// or "... in a+0x1/0x2" when the other access is unknown.
	{kind: "KCSAN", re: regexp.MustCompile(`^BUG: KCSAN: `), blanks: true, keep: MaxKCSANLines},
	{kind: "lockdep", re: regexp.MustCompile(`^WARNING: (possible circular locking dependency|inconsistent lock state|suspicious RCU usage|possible recursive locking|possible irq lock inversion|bad unlock balance|held lock freed|lock held when returning to user space|[Nn]ested lock was not taken|possible deadlock|.* still has locks held)`), blanks: true},
	{kind: "lockdep", re: regexp.MustCompile(`^BUG: (MAX_LOCKDEP_\w+ too low|looking up invalid subclass|key \S+ has not been registered|held lock freed)`), blanks: true},
	{kind: "UBSAN", re: regexp.MustCompile(`^UBSAN: `)},
	{kind: "RCU stall", re: regexp.MustCompile(`^(rcu: )?INFO: rcu_\w+ (self-detected stall|detected (expedited )?stalls?)`)},
	{kind: "list corruption", re: regexp.MustCompile(`^(h?list(_add|_del|_bl_\w+)?) (corruption|double add)`)},
	{kind: "refcount", re: regexp.MustCompile(`^refcount_t: `)},
	{kind: "WARNING", re: regexp.MustCompile(`^WARNING: `)},
	{kind: "lockup", re: regexp.MustCompile(`^(watchdog: BUG: soft lockup|(NMI )?watchdog: Watchdog detected hard LOCKUP|BUG: workqueue lockup)`)},
	{kind: "BUG", re: regexp.MustCompile(`^(BUG: |kernel BUG at )`)},
	{kind: "Oops", re: regexp.MustCompile(`^(Oops[:#]|Internal error: Oops|general protection fault|invalid opcode: )`)},
	{kind: "panic", re: regexp.MustCompile(`^Kernel panic - `)},
	{kind: "kmemleak", re: regexp.MustCompile(`^(unreferenced object 0x|kmemleak: \d+ new suspected memory leaks)`)},
	// A socket's destructor finding it not orphaned: the protocol's release
	// path skipped sock_orphan() (netlink_sock_destruct(): "Freeing alive
	// netlink socket %p"; af_packet and af_key say "Attempt to release
	// alive ... socket"). Only a kernel bug prints it, without a stack.
	{kind: "alive socket", re: aliveSocket},
	{kind: "hung task", re: regexp.MustCompile(`^(INFO: task .* blocked for more than \d+ seconds|hung_task: )`)},
}

// aliveSocket is the title of an "alive socket" report; its group is the
// message without the socket's address.
var aliveSocket = regexp.MustCompile(`^((?:Freeing|Attempt to release) alive [\w ]+? socket):? `)

// classify returns the trigger a message starts, or nil.
func classify(msg string) *trigger {
	for i := range triggers {
		if triggers[i].re.MatchString(msg) {
			return &triggers[i]
		}
	}
	return nil
}

// leads says whether a report of this kind is often followed, as one event,
// by the BUG, WARNING or Oops it raises: the kernel prints a list
// corruption's or a refcount_t's message first, and "BUG: unable to handle
// page fault" goes on with "Oops: ...".
func leads(kind string) bool {
	return kind == "list corruption" || kind == "refcount" || kind == "BUG"
}

// follows says whether a report of kind next, starting while a report of
// kind open has only just begun, is the same event.
func follows(open, next string) bool {
	return leads(open) && next != open && (next == "WARNING" || next == "BUG" || next == "Oops")
}

// joinWindow is how many lines an open report may have for a following
// trigger still to count as the same event.
const joinWindow = 6

// cutHere opens the preamble of a WARN() or BUG(): the lines between it and
// the WARNING or BUG line are the caller's message, which belongs to the
// report.
const cutHere = "------------[ cut here ]------------"

// preambleLines is how many lines after cutHere wait for the report's title.
const preambleLines = 3

// closes reports whether msg is the last line of a report.
func closes(msg string) bool {
	t := strings.TrimSpace(msg)
	return strings.HasPrefix(t, "---[ end ") || t == "</TASK>" ||
		(len(t) >= 20 && strings.Trim(t, "=") == "")
}

// gapLine finds the console's and printk's own notes that messages went
// missing: "** 12 printk messages dropped **" (the console could not keep
// up) and "net_ratelimit: 5 callbacks suppressed" (a rate limit). Inside a
// report they mean the report is not whole.
var gapLine = regexp.MustCompile(`\*\* \d+ printk messages dropped \*\*|\d+ callbacks suppressed`)

// splitter groups a stream of messages into reports. It holds the report
// being logged, so the lines that follow a title join it.
type splitter struct {
	open     *Report
	trig     *trigger
	read     int         // lines of the open report, kept or not
	stacks   stackReader // the open report's stacks
	locks    lockReader  // the open report's lock classes (lockdep)
	preamble []string    // lines since a cutHere, while no title has come
	inCut    bool
	done     []Report
}

// kmemleakVerbose is the prefix of every line kmemleak prints for a
// suspect when booted or set with kmemleak.verbose=1 (its pr_fmt): the
// listing's own lines after it.
const kmemleakVerbose = "kmemleak: "

// kmemleakSummary is the line kmemleak prints after a scan that found new
// suspects, after their listing when it is verbose.
var kmemleakSummary = regexp.MustCompile(`^kmemleak: \d+ new suspected memory leaks`)

// line feeds one message (without any record or console prefix).
func (s *splitter) line(msg string) {
	if rest, ok := strings.CutPrefix(msg, kmemleakVerbose); ok &&
		(strings.HasPrefix(rest, "unreferenced object 0x") || strings.HasPrefix(rest, " ")) {
		msg = rest
	}
	if t := classify(msg); t != nil {
		if s.open != nil && len(s.open.Lines) < joinWindow && follows(s.open.Kind, t.kind) {
			s.add(msg)
			return
		}
		// The summary after a verbose listing ends the last suspect's
		// report; on its own (not verbose) it is the report.
		if s.open != nil && s.open.Kind == "kmemleak" && kmemleakSummary.MatchString(msg) {
			s.add(msg)
			s.flush()
			return
		}
		s.flush()
		r := &Report{Kind: t.kind}
		if s.inCut {
			r.Lines = append(r.Lines, s.preamble...)
			for _, l := range s.preamble {
				if gapLine.MatchString(l) {
					r.Gaps = append(r.Gaps, l)
				}
			}
		}
		s.inCut, s.preamble = false, nil
		s.open, s.trig, s.read, s.stacks, s.locks = r, t, len(r.Lines), newStackReader(), lockReader{}
		s.add(msg)
		return
	}
	if strings.TrimSpace(msg) == cutHere {
		// A list corruption's message comes before the BUG it raises.
		if s.open != nil && len(s.open.Lines) < joinWindow && leads(s.open.Kind) {
			return
		}
		s.flush()
		s.inCut, s.preamble = true, nil
		return
	}
	if s.inCut {
		if len(s.preamble) == preambleLines {
			s.inCut, s.preamble = false, nil
		} else {
			s.preamble = append(s.preamble, msg)
		}
		return
	}
	if s.open == nil {
		return
	}
	if closes(msg) {
		s.add(msg)
		s.flush()
		return
	}
	if strings.TrimSpace(msg) == "" && !s.trig.blanks {
		s.flush()
		return
	}
	s.add(msg)
}

// cont appends a fragment to the previous line, when that line belongs to
// the open report.
func (s *splitter) cont(frag string) {
	if s.open != nil && len(s.open.Lines) > 0 && len(s.open.Lines) == s.read {
		s.open.Lines[len(s.open.Lines)-1] += frag
	}
}

func (s *splitter) add(msg string) {
	keep := s.trig.keep
	if keep == 0 {
		keep = MaxLines
	}
	if len(s.open.Lines) < keep {
		s.open.Lines = append(s.open.Lines, msg)
	}
	if gapLine.MatchString(msg) {
		s.open.Gaps = append(s.open.Gaps, msg)
	}
	s.stacks.line(msg)
	if s.open.Kind == "lockdep" {
		s.locks.line(msg)
	}
	if s.read++; s.read >= maxReportLines {
		s.flush()
	}
}

// boundary says that what follows cannot belong to the report being logged.
func (s *splitter) boundary() {
	s.flush()
	s.inCut, s.preamble = false, nil
}

// flush ends the open report, if any.
func (s *splitter) flush() {
	if s.open != nil {
		s.open.Stacks, s.open.Accesses = s.stacks.stacks, s.stacks.accesses
		s.open.Locks = s.locks.classes
		s.done = append(s.done, *s.open)
		s.open, s.trig, s.stacks, s.locks = nil, nil, stackReader{}, lockReader{}
	}
}

// take returns the reports completed so far. The one being logged stays
// open: closed now, it would have only the lines logged so far, and a
// partial fingerprint that no known report matches.
func (s *splitter) take() []Report {
	out := s.done
	s.done = nil
	return out
}

// takeAll is take at the end of the stream: the open report ends too.
func (s *splitter) takeAll() []Report {
	s.boundary()
	return s.take()
}

// pending says whether a report (or a WARN's preamble) is being logged.
func (s *splitter) pending() bool { return s.open != nil || s.inCut }
