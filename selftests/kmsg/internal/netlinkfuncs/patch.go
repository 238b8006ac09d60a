// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// filePatch is one file's part of a unified diff (git format-patch's).
type filePatch struct {
	path  string // in the tree
	isNew bool   // the patch creates the file
	hunks []hunk
}

type hunk struct {
	oldStart int      // 1-based line of the first old line
	old, new []string // the lines the hunk replaces, and what with
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// parsePatch reads the files and hunks of a unified diff. Text outside a
// hunk (the mail, the diffstat, the signature) is skipped.
func parsePatch(text string) ([]filePatch, error) {
	var files []filePatch
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			from := strings.TrimPrefix(l, "--- ")
			to := strings.TrimPrefix(lines[i+1], "+++ ")
			if to == "/dev/null" {
				return nil, fmt.Errorf("patch line %d: it deletes %s, which this reader does not handle", i+2, from)
			}
			files = append(files, filePatch{path: strings.TrimPrefix(to, "b/"), isNew: from == "/dev/null"})
			i++
		case strings.HasPrefix(l, "@@ "):
			m := hunkHeader.FindStringSubmatch(l)
			if m == nil || len(files) == 0 {
				return nil, fmt.Errorf("patch line %d: a hunk header %q outside a file", i+1, l)
			}
			oldLen, newLen := count(m[2]), count(m[4])
			h := hunk{oldStart: atoi(m[1])}
			for i+1 < len(lines) && (len(h.old) < oldLen || len(h.new) < newLen) {
				i++
				body := lines[i]
				switch {
				case strings.HasPrefix(body, " ") || body == "":
					h.old = append(h.old, strings.TrimPrefix(body, " "))
					h.new = append(h.new, strings.TrimPrefix(body, " "))
				case strings.HasPrefix(body, "-"):
					h.old = append(h.old, body[1:])
				case strings.HasPrefix(body, "+"):
					h.new = append(h.new, body[1:])
				case strings.HasPrefix(body, `\`): // "\ No newline at end of file"
				default:
					return nil, fmt.Errorf("patch line %d: %q inside a hunk", i+1, body)
				}
			}
			if len(h.old) != oldLen || len(h.new) != newLen {
				return nil, fmt.Errorf("patch line %d: hunk %q ends early (%d of %d old lines, %d of %d new)", i+1, l, len(h.old), oldLen, len(h.new), newLen)
			}
			f := &files[len(files)-1]
			f.hunks = append(f.hunks, h)
		}
	}
	return files, nil
}

func count(s string) int {
	if s == "" {
		return 1
	}
	return atoi(s)
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// apply returns src with the hunks applied. A hunk's old lines must be
// in src exactly (no fuzz); where they are not at the line the hunk
// says (the tree is a stable release or two away), the nearest place
// they are is taken.
func (f filePatch) apply(src string) (string, error) {
	lines := strings.Split(src, "\n")
	var out []string
	next := 0 // the first line of src not yet copied
	for n, h := range f.hunks {
		at := findLines(lines, h.old, h.oldStart-1, next)
		if at < 0 {
			return "", fmt.Errorf("%s: hunk %d (old line %d) does not apply", f.path, n+1, h.oldStart)
		}
		out = append(out, lines[next:at]...)
		out = append(out, h.new...)
		next = at + len(h.old)
	}
	out = append(out, lines[next:]...)
	return strings.Join(out, "\n"), nil
}

// findLines is where want is in lines at or after from, nearest to near,
// or -1.
func findLines(lines, want []string, near, from int) int {
	best := -1
	for at := from; at+len(want) <= len(lines); at++ {
		if !equalAt(lines, want, at) {
			continue
		}
		if best < 0 || abs(at-near) < abs(best-near) {
			best = at
		}
	}
	return best
}

func equalAt(lines, want []string, at int) bool {
	for i, w := range want {
		if lines[at+i] != w {
			return false
		}
	}
	return true
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
