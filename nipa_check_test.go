// SPDX-License-Identifier: GPL-2.0

package nlmcast_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// nipaResults writes a results JSON as nipa-run writes it: semantics and
// switch with n results each, every one of result each.
func nipaResults(t *testing.T, dir string, sw string, nsem, nsw int) string {
	t.Helper()
	nested := func(n int, each string) []map[string]string {
		var out []map[string]string
		for i := 0; i < n; i++ {
			out = append(out, map[string]string{"test": fmt.Sprintf("case-%d", i), "result": each})
		}
		return out
	}
	run := map[string]any{"results": []map[string]any{
		{"group": "selftests-netlink-mcast", "test": "netlink-mcast-semantics", "result": "pass", "results": nested(nsem, "pass")},
		{"group": "selftests-netlink-mcast", "test": "netlink-mcast-switch", "result": sw, "results": nested(nsw, sw)},
	}}
	b, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, fmt.Sprintf("results-%s-%d-%d.json", sw, nsem, nsw))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// .ci/nipa/check-results takes the number of results NIPA must have parsed
// from the programs' -l, so that a new case changes no count by hand: it
// accepts a run with one result per listed case and refuses one short of
// that, naming both numbers.
func TestNIPACheckerCountsFromPrograms(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3")
	}
	dir := t.TempDir()
	// Stand-ins for the programs: -l prints 3 and 5 case names.
	for name, n := range map[string]int{"netlink_mcast_semantics": 3, "netlink_mcast_switch": 5} {
		script := fmt.Sprintf("#!/bin/sh\n[ \"$1\" = -l ] || exit 2\nseq %d | sed 's/^/case_/'\n", n)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	check := func(results, sw string) (string, bool) {
		out, err := exec.Command("python3", ".ci/nipa/check-results", results, sw, "--programs", dir).CombinedOutput()
		return string(out), err == nil
	}
	for _, tc := range []struct {
		sw        string
		nsem, nsw int
		ok        bool
		complaint string
	}{
		{"pass", 3, 5, true, ""},
		{"skip", 3, 1, true, ""},
		{"pass", 2, 5, false, "netlink-mcast-semantics: 2 results parsed, want 3"},
		{"pass", 3, 6, false, "netlink-mcast-switch: 6 results parsed, want 5"},
	} {
		out, ok := check(nipaResults(t, dir, tc.sw, tc.nsem, tc.nsw), tc.sw)
		if ok != tc.ok || !strings.Contains(out, tc.complaint) {
			t.Errorf("check-results on %d semantics and %d switch results (%s), -l listing 3 and 5: ok=%v, want %v and %q:\n%s",
				tc.nsem, tc.nsw, tc.sw, ok, tc.ok, tc.complaint, out)
		}
	}
}
