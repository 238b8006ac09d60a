// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

const original = "int f(void)\n{\n\treturn 0;\n}\n"

func TestGuardRestores(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.c")
	os.WriteFile(file, []byte(original), 0o644)
	g := newGuard(filepath.Join(dir, ".mutate"))
	if err := g.Mutate(file, []byte("mutated")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); string(b) != "mutated" {
		t.Fatalf("file not mutated: %q", b)
	}
	if err := g.Mutate(file, []byte("twice")); err == nil {
		t.Error("a second Mutate before Restore succeeded")
	}
	if err := g.Restore(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); string(b) != original {
		t.Errorf("after Restore: %q", b)
	}
	if _, err := os.Stat(g.journalPath()); !os.IsNotExist(err) {
		t.Errorf("journal left behind: %v", err)
	}
}

// A run killed outright (SIGKILL: no handler runs) leaves the journal; the
// next run's Recover puts the original back.
func TestRecoverAfterKill(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.c")
	os.WriteFile(file, []byte(original), 0o644)
	if err := newGuard(filepath.Join(dir, ".mutate")).Mutate(file, []byte("mutated")); err != nil {
		t.Fatal(err)
	}
	got, err := newGuard(filepath.Join(dir, ".mutate")).Recover()
	if err != nil || got != file {
		t.Fatalf("Recover: %q, %v", got, err)
	}
	if b, _ := os.ReadFile(file); string(b) != original {
		t.Errorf("after Recover: %q", b)
	}
	if got, err := newGuard(filepath.Join(dir, ".mutate")).Recover(); got != "" || err != nil {
		t.Errorf("second Recover: %q, %v", got, err)
	}
}

// The child of TestSIGTERMRestores: mutate the file, say so, and wait for
// the signal as a run does.
func TestMain(m *testing.M) {
	if file := os.Getenv("MUTATE_TEST_SIGNAL_CHILD"); file != "" {
		g := newGuard(filepath.Join(filepath.Dir(file), ".mutate"))
		ctx, exitCode := restoreOnSignal(g)
		if err := g.Mutate(file, []byte("mutated")); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("mutated\n")
		<-ctx.Done()
		os.Exit(exitCode(0))
	}
	os.Exit(m.Run())
}

func TestSIGTERMRestores(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.c")
	os.WriteFile(file, []byte(original), 0o644)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MUTATE_TEST_SIGNAL_CHILD="+file)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "mutated\n" {
		cmd.Process.Kill()
		t.Fatalf("child said %q", line)
	}
	if b, _ := os.ReadFile(file); string(b) != "mutated" {
		t.Fatalf("child did not mutate: %q", b)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("child did not exit on SIGTERM")
	}
	if code := cmd.ProcessState.ExitCode(); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit status %d, want %d", code, 128+int(syscall.SIGTERM))
	}
	if b, _ := os.ReadFile(file); string(b) != original {
		t.Errorf("after SIGTERM: %q", b)
	}
}

// The project's arguments file parses, and each of its unset: lines names
// config options.
func TestEquivalentFileParses(t *testing.T) {
	eq, err := readEquivalences("equivalent.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(eq) == 0 {
		t.Fatal("no arguments read from equivalent.txt")
	}
	for id, es := range eq {
		for _, e := range es {
			if e.id != id || e.code == "" || e.reason == "" {
				t.Errorf("%s: %+v", id, e)
			}
		}
	}
	if _, err := readEquivalences(writeTemp(t, "id: a+1:del-call:1\ncode: a();\nunset: NETFILTER\nreason: r\n")); err == nil {
		t.Error("an unset: option without CONFIG_ was taken")
	}
}

// One ID may have an argument per source line (the same function's line
// N differs between trees); the one for the mutant's line applies, and a
// second argument for the same line is refused.
func TestEquivalencePerLine(t *testing.T) {
	two := "id: f+3:del-assign:1\ncode: a = 0;\nbuilds: tiny\nreason: ra\n\nid: f+3:del-assign:1\ncode: b = 0;\nunset: CONFIG_X\nbuilds: tiny\nreason: rb\n" +
		"\nid: f+3:del-assign:1\ncode: d = 0;\nkernel: 6.1 5.15\nbuilds: tiny\nreason: rd\n"
	eq, err := readEquivalences(writeTemp(t, two))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		code   string
		config map[string]bool
		kernel string
		want   string
	}{
		{"a = 0;", nil, "6.12.5", "ra"},
		{"b = 0;", nil, "6.1.192", "rb"},
		{"b = 0;", map[string]bool{"CONFIG_X": true}, "6.1.192", ""},
		{"c = 0;", nil, "6.1.192", ""},
		{"d = 0;", nil, "6.1.192", "rd"},
		{"d = 0;", nil, "5.15", "rd"},
		{"d = 0;", nil, "6.12.5", ""},
		{"d = 0;", nil, "6.10.1", ""},
	} {
		e, why, ok := equivalenceFor(eq["f+3:del-assign:1"], c.code, c.config, c.kernel)
		if ok != (c.want != "") || (ok && e.reason != c.want) {
			t.Errorf("%q with %v: %+v, %q, %v; want reason %q", c.code, c.config, e, why, ok, c.want)
		}
		if !ok && why == "" {
			t.Errorf("%q: no argument applies, and no reason why", c.code)
		}
	}
	if _, err := readEquivalences(writeTemp(t, two+"\nid: f+3:del-assign:1\ncode: a = 0;\nbuilds: tiny\nreason: again\n")); err == nil {
		t.Error("a second argument for the same ID and line was taken")
	}
}

func writeTemp(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "equivalent.txt")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
