// SPDX-License-Identifier: GPL-2.0

package kmsg

import (
	_ "embed" // the known-report list
	"fmt"
	"strings"
	"sync"
)

// knownReports is the list of known reports: kernel reports that the
// unpatched kernel of the same build gives as well, so they are not the
// series'. One fingerprint (Report.Fingerprint) a line; lines starting
// with '#' are comments, and the comment lines right above a fingerprint
// say where it was seen. It is built into every program, so it travels
// with the binary into an installed copy, an initramfs or a VM.
//
//go:embed known_reports.txt
var knownReports string

// known is knownReports parsed: fingerprint -> where it was seen; refused
// is the entries left out (see parseKnown).
var known, refused = parseKnown(knownReports)

// parseKnown reads a known-report list. Every line that is neither blank
// nor a comment is a fingerprint, taken as it is (spaces at its ends
// trimmed). An entry that would match reports raised in netlink's,
// rtnetlink's or the network namespace's code (NetlinkFingerprint) is
// refused: it would hide a new report in the code the series changes or
// runs on. refused says, for each, why.
func parseKnown(text string) (list map[string]string, refused []string) {
	list = map[string]string{}
	var comment []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
			comment = nil
		case strings.HasPrefix(l, "#"):
			comment = append(comment, strings.TrimSpace(strings.TrimPrefix(l, "#")))
		default:
			for _, fp := range expandKnown(l) {
				if why := NetlinkFingerprint(fp); why != "" {
					refused = append(refused, fmt.Sprintf("known_reports.txt: %q refused: %s, so it would hide a report in netlink's, rtnetlink's or the network namespace's code", fp, why))
					continue
				}
				list[fp] = strings.Join(comment, " ")
			}
		}
	}
	return list, refused
}

// expandKnown returns the fingerprints an entry names: the entry itself,
// or, where it has one group "{a|b}", the entry with each alternative in
// its place. A KCSAN race of two functions on one variable has a
// fingerprint for each pair of their accesses to it, and which pair KCSAN
// catches is chance.
func expandKnown(entry string) []string {
	open := strings.Index(entry, "{")
	end := strings.Index(entry, "}")
	if open < 0 || end < open {
		return []string{entry}
	}
	var out []string
	for _, alt := range strings.Split(entry[open+1:end], "|") {
		out = append(out, entry[:open]+alt+entry[end+1:])
	}
	return out
}

// Known reports whether the known-report list names r, and what it says
// about where it was seen.
func Known(r Report) (why string, ok bool) {
	why, ok = known[r.Fingerprint()]
	return why, ok
}

// taintBy is what taint bits a kind of report sets, so that the taint
// a known report caused is known too: __warn() sets W (also for a
// refcount_t, a list corruption without BUG_ON_DATA_CORRUPTION and
// "BUG: sleeping function called ..."), KASAN sets B, die() sets D, the
// soft lockup watchdog L.
var taintBy = map[string]string{
	"WARNING":         "W",
	"refcount":        "W",
	"list corruption": "WD",
	"BUG":             "WD",
	"Oops":            "D",
	"KASAN":           "B",
	"lockup":          "L",
}

// sifter splits reports into known and new ones. It remembers which
// taint bits known reports explained: the kernel sets a WARN's taint bit
// after logging it, so a poll between the two sees the bit alone.
type sifter struct {
	mu        sync.Mutex
	list      map[string]string
	refused   []string // said once, at the first sift
	explained string   // taint letters
}

// process is the program's sifter: one kernel, one taint mask.
var process = &sifter{list: known, refused: refused}

// Sift returns the reports that are not known, for the caller to fail
// on, and prints each known one as one diag line ("known kernel report
// (not the series'): ..."), with its fingerprint and where it was seen.
// A KCSAN report outside networking code (OutsideNetworking) is set
// aside the same way, on a line of its own.
// A taint bit that a known report sets is known too. For each new report
// it prints its fingerprint, the line to add to known_reports.txt once
// the unpatched kernel has given it as well. Safe for concurrent use.
func Sift(reports []Report, diag func(format string, args ...any)) []Report {
	return process.sift(reports, diag)
}

func (s *sifter) sift(reports []Report, diag func(format string, args ...any)) []Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.refused {
		diag("%s", r)
	}
	s.refused = nil
	var fresh, taints []Report
	for _, r := range reports {
		if r.Kind == "taint" {
			taints = append(taints, r)
			continue
		}
		fp := r.Fingerprint()
		why, ok := s.list[fp]
		if !ok && OutsideNetworking(r) {
			diag("KCSAN report outside networking code (no frame of its stacks is networking's), set aside: %s; fingerprint %q", r, fp)
			continue
		}
		if !ok {
			diag("new kernel report (not in the known list): %s; fingerprint %q", r, fp)
			fresh = append(fresh, r)
			continue
		}
		s.explained += taintBy[r.Kind]
		if why != "" {
			why = "; " + why
		}
		diag("known kernel report (not the series'): %s; fingerprint %q%s", r, fp, why)
	}
	for _, r := range taints {
		fp := r.Fingerprint()
		if _, ok := s.list[fp]; ok || strings.Contains(s.explained, strings.TrimPrefix(fp, "taint ")) {
			diag("known kernel report (not the series'): %s, set by a known report", r)
			continue
		}
		fresh = append(fresh, r)
	}
	return fresh
}
