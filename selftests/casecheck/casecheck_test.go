// SPDX-License-Identifier: GPL-2.0

package casecheck

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"nlmcast/selftests"
)

func registered(t selftests.T) {}

// A directory with a registered case, a forgotten one, helpers of another
// shape, a helper of the case's shape that says so with t.Helper(), and a
// method of the case shape: only the forgotten ones are reported (one
// calls Helper, but not first, on its t).
func TestUnregistered(t *testing.T) {
	dir := t.TempDir()
	src := `package cases

import "nlmcast/selftests"

func registered(t selftests.T) {}
func forgotten(t selftests.T)  {}
func helper(t selftests.T, n int) {}
func result(t selftests.T) int { return 0 }
func prepares(t selftests.T) { t.Helper() }
func forgottenToo(t selftests.T) { t.Logf("x"); t.Helper() }

type x struct{}

func (x) method(t selftests.T) {}
`
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Unregistered(dir, []selftests.Case{{Name: "registered", Run: registered}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"forgotten (a.go)", "forgottenToo (a.go)"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Unregistered = %q, want %q", got, want)
	}
	got, _ = Unregistered(dir, []selftests.Case{{Name: "registered", Run: registered}}, "forgotten", "forgottenToo")
	if len(got) != 0 {
		t.Errorf("with forgotten listed as wrapped: %q, want nothing", got)
	}
}

// A case without an About, or with only blanks, is named; one with an
// About is not.
func TestUndescribed(t *testing.T) {
	table := []selftests.Case{
		{Name: "described", Run: registered, About: "what it checks"},
		{Name: "bare", Run: registered},
		{Name: "blank", Run: registered, About: " \t"},
	}
	if got, want := Undescribed(table), []string{"bare", "blank"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Undescribed = %q, want %q", got, want)
	}
}
