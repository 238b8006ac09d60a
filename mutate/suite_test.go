// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The suite commit is the repository's last commit outside evidence/ and
// the prose, also when asked from a subdirectory (go test runs in mutate/).
func TestSuiteCommitIsTheWholeSuites(t *testing.T) {
	want, err := exec.Command("git", "-C", "..", "log", "-1", "--format=%H", "--", ".", ":!evidence", ":!doc", ":(exclude,glob)**/*.md").Output()
	if err != nil {
		t.Skipf("SKIP not in a git checkout: %v", err)
	}
	if got := strings.TrimSuffix(suiteCommit(), "-dirty"); got != strings.TrimSpace(string(want)) {
		t.Errorf("suiteCommit() %q, want %q", got, strings.TrimSpace(string(want)))
	}
	if c := lastCaseChange(); len(c) != 40 {
		t.Errorf("lastCaseChange() %q", c)
	}
}
