// SPDX-License-Identifier: GPL-2.0

package main

import (
	"strings"
	"testing"
)

// A stream as go test -json writes it: a skipped test, two subtests
// skipped for the same reason, a passing test that logged, a failing one.
const stream = `{"Action":"start","Package":"jt"}
{"Action":"run","Package":"jt","Test":"TestA"}
{"Action":"output","Package":"jt","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"jt","Test":"TestA","Output":"    a_test.go:3: needs a kernel image: set X\n"}
{"Action":"output","Package":"jt","Test":"TestA","Output":"--- SKIP: TestA (0.00s)\n"}
{"Action":"skip","Package":"jt","Test":"TestA","Elapsed":0}
{"Action":"run","Package":"jt","Test":"TestB"}
{"Action":"output","Package":"jt","Test":"TestB","Output":"=== RUN   TestB\n"}
{"Action":"run","Package":"jt","Test":"TestB/x"}
{"Action":"output","Package":"jt","Test":"TestB/x","Output":"=== RUN   TestB/x\n"}
{"Action":"output","Package":"jt","Test":"TestB/x","Output":"    a_test.go:4: no switch here\n"}
{"Action":"output","Package":"jt","Test":"TestB/x","Output":"--- SKIP: TestB/x (0.00s)\n"}
{"Action":"skip","Package":"jt","Test":"TestB/x","Elapsed":0}
{"Action":"run","Package":"jt","Test":"TestB/y"}
{"Action":"output","Package":"jt","Test":"TestB/y","Output":"=== RUN   TestB/y\n"}
{"Action":"output","Package":"jt","Test":"TestB/y","Output":"    a_test.go:4: no switch here\n"}
{"Action":"output","Package":"jt","Test":"TestB/y","Output":"--- SKIP: TestB/y (0.00s)\n"}
{"Action":"skip","Package":"jt","Test":"TestB/y","Elapsed":0}
{"Action":"output","Package":"jt","Test":"TestB","Output":"--- PASS: TestB (0.00s)\n"}
{"Action":"pass","Package":"jt","Test":"TestB","Elapsed":0}
{"Action":"run","Package":"jt","Test":"TestC"}
{"Action":"output","Package":"jt","Test":"TestC","Output":"=== RUN   TestC\n"}
{"Action":"output","Package":"jt","Test":"TestC","Output":"    a_test.go:5: hello\n"}
{"Action":"output","Package":"jt","Test":"TestC","Output":"--- PASS: TestC (0.00s)\n"}
{"Action":"pass","Package":"jt","Test":"TestC","Elapsed":0}
{"Action":"run","Package":"jt","Test":"TestD"}
{"Action":"output","Package":"jt","Test":"TestD","Output":"=== RUN   TestD\n"}
{"Action":"output","Package":"jt","Test":"TestD","Output":"    a_test.go:6: boom\n"}
{"Action":"output","Package":"jt","Test":"TestD","Output":"        second line\n"}
{"Action":"output","Package":"jt","Test":"TestD","Output":"--- FAIL: TestD (0.00s)\n"}
{"Action":"fail","Package":"jt","Test":"TestD","Elapsed":0}
{"Action":"output","Package":"jt","Output":"FAIL\n"}
{"Action":"output","Package":"jt","Output":"FAIL\tjt\t0.017s\n"}
{"Action":"fail","Package":"jt","Elapsed":0.018}
{"Action":"start","Package":"ok"}
{"Action":"output","Package":"ok","Output":"PASS\n"}
{"Action":"output","Package":"ok","Output":"ok  \tok\t0.010s\n"}
{"Action":"pass","Package":"ok","Elapsed":0.01}
not json: printed as it is
`

func TestSummary(t *testing.T) {
	var b strings.Builder
	s := newSummary(&b)
	s.read(strings.NewReader(stream))
	s.printSkips()
	want := `--- FAIL: TestD (jt)
    a_test.go:6: boom
        second line
FAIL
FAIL	jt	0.017s
ok  	ok	0.010s
not json: printed as it is

SKIP: 3 tests, with the reason each gave:
  jt TestA: needs a kernel image: set X
  jt TestB/x and 1 more: no switch here
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// Nothing skipped: no SKIP section.
func TestSummaryWithoutSkips(t *testing.T) {
	var b strings.Builder
	s := newSummary(&b)
	s.read(strings.NewReader(`{"Action":"output","Package":"ok","Output":"ok  \tok\t0.010s\n"}` + "\n"))
	s.printSkips()
	if got := b.String(); got != "ok  \tok\t0.010s\n" {
		t.Errorf("got %q", got)
	}
}

// The exit status is the failing command's, and the commands after it do
// not run.
func TestRunStatus(t *testing.T) {
	var b strings.Builder
	s := newSummary(&b)
	if got := run([]string{"sh", "-c", "echo '{\"Action\":\"output\",\"Package\":\"p\",\"Output\":\"FAIL\\tp\\n\"}'; exit 3"}, s); got != 3 {
		t.Errorf("exit status %d, want 3", got)
	}
	if got := run([]string{"/nonexistent/go"}, s); got != 1 {
		t.Errorf("a command that cannot start: status %d, want 1", got)
	}
	if !strings.Contains(b.String(), "FAIL\tp") {
		t.Errorf("output %q", b.String())
	}
}
