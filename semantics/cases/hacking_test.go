// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// hackingExample is the case HACKING.md shows whole, and the line its
// sample failure cites.
const (
	hackingExample = "address_delete_notified.go"
	hackingFailing = "a.Expect(del.DelAddr()"
)

// HACKING.md's worked example is the real case file, byte for byte, and
// its sample failure cites the line of that file the failure was made at.
func TestHackingExampleIsTheRealCase(t *testing.T) {
	doc, err := os.ReadFile("../../HACKING.md")
	if err != nil {
		t.Fatal(err)
	}
	real, err := os.ReadFile(hackingExample)
	if err != nil {
		t.Fatal(err)
	}
	block, err := firstGoBlock(string(doc))
	if err != nil {
		t.Fatal(err)
	}
	if block != string(real) {
		t.Errorf("HACKING.md's first ```go block is not %s; paste the file into it again:\n%s", hackingExample, lineDiff(block, string(real)))
	}
	m := regexp.MustCompile(`# address_delete_notified: ` + regexp.QuoteMeta(hackingExample) + `:(\d+): `).FindStringSubmatch(string(doc))
	if m == nil {
		t.Fatalf("HACKING.md has no sample failure of %s", hackingExample)
	}
	n, _ := strconv.Atoi(m[1])
	lines := strings.Split(string(real), "\n")
	if n < 1 || n > len(lines) || !strings.Contains(lines[n-1], hackingFailing) {
		t.Errorf("HACKING.md's sample failure cites %s:%d, which is not the line with %s; make the case fail there once in a scratch copy and paste what it prints",
			hackingExample, n, hackingFailing)
	}
	if !strings.Contains(string(doc), "line "+m[1]+" of the case above") {
		t.Errorf("HACKING.md's text around the sample failure does not name line %s, the one the sample cites", m[1])
	}
}

// firstGoBlock returns the text of the first ```go fenced block of doc.
func firstGoBlock(doc string) (string, error) {
	_, rest, ok := strings.Cut(doc, "\n```go\n")
	if !ok {
		return "", os.ErrNotExist
	}
	block, _, ok := strings.Cut(rest, "\n```\n")
	if !ok {
		return "", os.ErrNotExist
	}
	return block + "\n", nil
}

// lineDiff names the first line where a and b differ.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < max(len(al), len(bl)); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "line " + strconv.Itoa(i+1) + ":\n  HACKING.md: " + x + "\n  the file:   " + y
		}
	}
	return ""
}
