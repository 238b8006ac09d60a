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

	"nlmcast/semantics/cases"
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

// The semantics counts in the README are the table's.
func TestReadmeCountsSemanticsCases(t *testing.T) {
	text, _ := readme(t)
	n := len(cases.All)
	for _, re := range []string{
		"\\| `netlink_mcast_semantics` \\| (\\d+) cases",
		"the (\\d+) semantics cases again",
	} {
		m := regexp.MustCompile(re).FindStringSubmatch(text)
		if m == nil {
			t.Errorf("README.md: no match for %q", re)
			continue
		}
		if got, _ := strconv.Atoi(m[1]); got != n {
			t.Errorf("README.md says %q: the table has %d cases", m[0], n)
		}
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
	case strings.HasSuffix(s, ".go"), strings.HasSuffix(s, ".md"), strings.HasSuffix(s, ".txt"), strings.HasSuffix(s, "/"):
		return true
	}
	return s == "Makefile" || s == "config" || s == "settings"
}
