// SPDX-License-Identifier: GPL-2.0

// Command testsummary runs `go test -json` commands for `make test` and
// prints what plain `go test` prints (each package's result line, and the
// output of every test that failed), then every skipped test with the
// reason it gave, which plain `go test` does not show:
//
//	go run ./internal/testsummary -- go test -json ./a/... -- env X=1 go test -json ./b/
//
// Each `--` starts a command; they run in turn, and the first that fails
// ends the run. The exit status is that command's (1 for one that could
// not start), and 0 when all passed.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
)

func main() {
	args := os.Args[1:]
	if len(args) == 0 || args[0] != "--" {
		fmt.Fprintln(os.Stderr, "usage: testsummary -- CMD [ARG...] [-- CMD [ARG...]]...")
		os.Exit(2)
	}
	var cmds [][]string
	for _, a := range args {
		if a == "--" {
			cmds = append(cmds, nil)
			continue
		}
		cmds[len(cmds)-1] = append(cmds[len(cmds)-1], a)
	}
	s := newSummary(os.Stdout)
	status := 0
	for _, c := range cmds {
		if len(c) == 0 {
			continue
		}
		if status = run(c, s); status != 0 {
			break
		}
	}
	s.printSkips()
	os.Exit(status)
}

// run runs one command, its stdout (go test -json) read by s, its stderr
// passed through, and returns its exit status.
func run(argv []string, s *summary) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "testsummary: %s: %v\n", strings.Join(argv, " "), err)
		return 1
	}
	s.read(out)
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		return exit.ExitCode()
	default:
		fmt.Fprintf(os.Stderr, "testsummary: %s: %v\n", strings.Join(argv, " "), err)
		return 1
	}
}

// event is a line of go test -json (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// skip is a skipped test and the reason it gave.
type skip struct{ pkg, test, reason string }

// where is the file:line t.Skip prefixes its reason with: left out, so
// that the tests one helper skips share a line.
var where = regexp.MustCompile(`^[\w.-]+\.go:\d+: `)

// summary turns the events into plain go test's output, and keeps the
// skipped tests for the end.
type summary struct {
	w      io.Writer
	output map[[2]string][]string // a running test's own lines, by package and name
	skips  []skip
}

func newSummary(w io.Writer) *summary {
	return &summary{w: w, output: map[[2]string][]string{}}
}

// read handles a stream of events; a line that is not one is printed as it
// is.
func (s *summary) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(s.w, sc.Text())
			continue
		}
		s.handle(e)
	}
}

// framing is test2json's own lines around a test's output.
func framing(line string) bool {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- PASS", "--- SKIP", "--- FAIL"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

func (s *summary) handle(e event) {
	key := [2]string{e.Package, e.Test}
	switch {
	case e.Action == "build-output":
		fmt.Fprint(s.w, e.Output)
	case e.Test == "" && e.Action == "output":
		// The package's result line; "PASS" alone only under -v.
		if e.Output != "PASS\n" {
			fmt.Fprint(s.w, e.Output)
		}
	case e.Test == "":
	case e.Action == "output":
		s.output[key] = append(s.output[key], e.Output)
	case e.Action == "fail":
		fmt.Fprintf(s.w, "--- FAIL: %s (%s)\n", e.Test, e.Package)
		for _, l := range s.output[key] {
			if !framing(l) {
				fmt.Fprint(s.w, l)
			}
		}
		delete(s.output, key)
	case e.Action == "skip":
		var reason []string
		for _, l := range s.output[key] {
			if l = strings.TrimSpace(l); l != "" && !framing(l) {
				reason = append(reason, l)
			}
		}
		s.skips = append(s.skips, skip{e.Package, e.Test, where.ReplaceAllString(strings.Join(reason, " "), "")})
		delete(s.output, key)
	case e.Action == "pass":
		delete(s.output, key)
	}
}

// printSkips lists the skipped tests, those of a package that gave the
// same reason on one line.
func (s *summary) printSkips() {
	if len(s.skips) == 0 {
		return
	}
	type group struct {
		pkg, reason string
		tests       []string
	}
	var groups []*group
	byKey := map[[2]string]*group{}
	for _, k := range s.skips {
		g := byKey[[2]string{k.pkg, k.reason}]
		if g == nil {
			g = &group{pkg: k.pkg, reason: k.reason}
			byKey[[2]string{k.pkg, k.reason}] = g
			groups = append(groups, g)
		}
		g.tests = append(g.tests, k.test)
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].pkg < groups[j].pkg })
	fmt.Fprintf(s.w, "\nSKIP: %d tests, with the reason each gave:\n", len(s.skips))
	for _, g := range groups {
		tests := g.tests[0]
		if len(g.tests) > 1 {
			tests += fmt.Sprintf(" and %d more", len(g.tests)-1)
		}
		reason := g.reason
		if reason == "" {
			reason = "(no reason given)"
		}
		fmt.Fprintf(s.w, "  %s %s: %s\n", g.pkg, tests, reason)
	}
}
