// SPDX-License-Identifier: GPL-2.0

package nlmcast_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readme returns README.md and its Layout table's rows.
func readme(t *testing.T) (text string, layout []string) {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text = string(b)
	_, after, ok := strings.Cut(text, "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no ## Layout section")
	}
	section, _, _ := strings.Cut(after, "\n## ")
	for _, l := range strings.Split(section, "\n") {
		if strings.HasPrefix(l, "| `") {
			layout = append(layout, l)
		}
	}
	if len(layout) == 0 {
		t.Fatal("the Layout section has no table rows")
	}
	return text, layout
}

// docs returns the reference documents, doc/*.md, by path.
func docs(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob("doc/*.md")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no doc/*.md (%v)", err)
	}
	out := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = string(b)
	}
	return out
}

// No document keeps a count of cases by hand: the programs' -l lists are the
// count, and a new case then changes only its file and its table. The
// patterns are the ways the documents used to state them.
func TestDocsKeepNoCaseCounts(t *testing.T) {
	files := docs(t)
	for _, p := range []string{"README.md", "HACKING.md"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[p] = string(b)
	}
	counts := regexp.MustCompile("\\b\\d+ (semantics cases|switch results)\\b|\\| `netlink_mcast_(semantics|switch)` \\| \\d+|\\bwith \\d+ results\\b|\\bthe \\d+ semantics\\b")
	for p, text := range files {
		for _, loc := range counts.FindAllStringIndex(text, -1) {
			t.Errorf("%s:%d: %q: a count of cases kept by hand (say that -l lists them)", p, strings.Count(text[:loc[0]], "\n")+1, text[loc[0]:loc[1]])
		}
	}
}

// maxCell bounds a table cell of README.md: tables are for scanning, and
// longer text belongs in doc/.
const maxCell = 160

// Every cell of README.md's tables is at most maxCell characters.
func TestReadmeTableCellsAreShort(t *testing.T) {
	text, _ := readme(t)
	rows := 0
	for i, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "|") {
			continue
		}
		rows++
		for _, c := range strings.Split(strings.Trim(l, "| "), " | ") {
			if n := len([]rune(strings.TrimSpace(c))); n > maxCell {
				t.Errorf("README.md:%d: a table cell of %d characters, at most %d (move the text to doc/): %.60q...", i+1, n, maxCell, c)
			}
		}
	}
	if rows == 0 {
		t.Error("README.md has no table row: the pattern is wrong")
	}
}

// backticked finds `path` spans.
var backticked = regexp.MustCompile("`([^`\\s]+)`")

// Every path the Layout table names exists, and every Go package of the
// module has a row of its own (its directory, first in the row).
func TestReadmeLayoutMatchesTheTree(t *testing.T) {
	_, layout := readme(t)
	rows := map[string]bool{}
	for _, row := range layout {
		cells := strings.Split(row, "|")
		if len(cells) < 3 {
			t.Errorf("Layout row %q: not two columns", row)
			continue
		}
		for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
			rows[strings.TrimSuffix(m[1], "/")] = true
		}
		for _, m := range backticked.FindAllStringSubmatch(row, -1) {
			p := m[1]
			if !looksLikePath(p) {
				continue
			}
			if strings.HasPrefix(p, "../") {
				t.Errorf("Layout names %s, which is outside the tree: describe it in prose instead", p)
				continue
			}
			base := strings.TrimSuffix(p, "/")
			// A file named in a package's row, where no such file is at
			// the top, is in that package.
			if _, err := os.Stat(base); err != nil && !strings.Contains(base, "/") {
				for _, c := range backticked.FindAllStringSubmatch(cells[1], -1) {
					base = filepath.Join(strings.TrimSuffix(c[1], "/"), p)
					break
				}
			}
			if _, err := os.Stat(base); err != nil {
				t.Errorf("Layout names %s, which is not in the tree (%v)", p, err)
			}
		}
	}
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "./...").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	wd, _ := os.Getwd()
	for _, dir := range strings.Fields(string(out)) {
		rel, _ := filepath.Rel(wd, dir)
		if rel != "." && !rows[rel] {
			t.Errorf("package %s/ has no row in README.md's Layout table", rel)
		}
	}
}

// looksLikePath tells a path (a directory with '/', a file with an
// extension, or a file of the project's root) from other backticked text.
func looksLikePath(s string) bool {
	if strings.ContainsAny(s, "()=*<>") || strings.HasPrefix(s, "-") || strings.HasPrefix(s, "netlink_mcast") {
		return false
	}
	switch {
	case strings.HasSuffix(s, "/"), strings.Contains(s, "/"):
		return !strings.HasPrefix(s, "/")
	case strings.HasSuffix(s, ".go"), strings.HasSuffix(s, ".md"), strings.HasSuffix(s, ".txt"), strings.HasSuffix(s, ".config"):
		return true
	}
	return s == "Makefile" || s == "config" || s == "settings"
}

// The README starts you in one screen: its first 30 lines have the
// commands that run the suites, the project's tests, and a kernel of your
// own in QEMU; and the whole file stays short, the reference being in doc/.
func TestReadmeFirstScreen(t *testing.T) {
	text, _ := readme(t)
	lines := strings.Split(text, "\n")
	if len(lines) > 200 {
		t.Errorf("README.md has %d lines: at most 200 (move reference text to doc/)", len(lines))
	}
	first := strings.Join(lines[:min(30, len(lines))], "\n")
	for _, cmd := range []string{"make run_tests", "make test", "make kernel KSRC=", "make vmtest KERNEL="} {
		if !strings.Contains(first, cmd) {
			t.Errorf("README.md's first 30 lines do not show %q", cmd)
		}
	}
}

// mdLink finds [text](target) links.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Every relative link of README.md, HACKING.md, evidence/README.md and
// doc/*.md names a file of the tree, and its #anchor, if any, a heading
// of the file it points into.
func TestReadmeLinksResolve(t *testing.T) {
	files := map[string]string{}
	for p, d := range docs(t) {
		files[p] = d
	}
	for _, p := range []string{"README.md", "HACKING.md", "evidence/README.md"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[p] = string(b)
	}
	checked := 0
	for path, text := range files {
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			file, anchor, _ := strings.Cut(target, "#")
			dest := path
			if file != "" {
				dest = filepath.Join(filepath.Dir(path), file)
				if rel, err := filepath.Rel(".", dest); err != nil || strings.HasPrefix(rel, "..") {
					t.Errorf("%s links to %s, which is outside the tree", path, target)
					continue
				}
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s links to %s, which is not in the tree (%v)", path, target, err)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			b, err := os.ReadFile(dest)
			if err != nil {
				t.Errorf("%s links to %s: %v", path, target, err)
				continue
			}
			if !headingSlugs(string(b))[anchor] {
				t.Errorf("%s links to %s: %s has no heading for #%s", path, target, dest, anchor)
			}
		}
	}
	if checked == 0 {
		t.Error("no relative link found: the pattern is wrong")
	}
}

// No document holds the markers of a merge conflict left unresolved: each
// half would read as the truth.
func TestDocsHaveNoConflictMarkers(t *testing.T) {
	files := docs(t)
	for _, p := range []string{"README.md", "HACKING.md", "evidence/README.md", "evidence/mutation/README.md"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[p] = string(b)
	}
	marker := regexp.MustCompile(`(?m)^(<{7}|={7}|>{7})( |$)`)
	for p, text := range files {
		for _, loc := range marker.FindAllStringIndex(text, -1) {
			t.Errorf("%s:%d: a merge conflict marker %q", p, strings.Count(text[:loc[0]], "\n")+1, text[loc[0]:loc[1]])
		}
	}
}

// headingSlugs returns the anchors of a Markdown file's headings, as the
// usual renderers make them: lower case, punctuation dropped, spaces to -.
func headingSlugs(text string) map[string]bool {
	slugs := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				b.WriteRune(r)
			}
		}
		slugs[b.String()] = true
	}
	return slugs
}

// doc/ci.md's list of stages is .ci/run -l's: the same names in the same
// order, so that neither counts or names what the other does not.
func TestCIDocListsTheStages(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash")
	}
	out, err := exec.Command("bash", ".ci/run", "-l").CombinedOutput()
	if err != nil {
		t.Fatalf(".ci/run -l: %v\n%s", err, out)
	}
	var stages []string
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" && l[0] != ' ' {
			stages = append(stages, strings.Fields(l)[0])
		}
	}
	b, err := os.ReadFile("doc/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	var doc []string
	for _, m := range regexp.MustCompile("(?m)^(\\d+)\\. \\*\\*`([a-z0-9-]+)`\\*\\*").FindAllStringSubmatch(string(b), -1) {
		if m[1] != strconv.Itoa(len(doc)+1) {
			t.Errorf("doc/ci.md: stage %s is numbered %s, want %d", m[2], m[1], len(doc)+1)
		}
		doc = append(doc, m[2])
	}
	if strings.Join(doc, " ") != strings.Join(stages, " ") {
		t.Errorf("doc/ci.md lists the stages\n  %s\n.ci/run -l lists\n  %s", strings.Join(doc, " "), strings.Join(stages, " "))
	}
}
