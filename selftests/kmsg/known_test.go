// SPDX-License-Identifier: GPL-2.0

package kmsg

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

const testList = `# A comment on the file.

# seen on U-kcsan, netlink_mcast_stress fixed0
# and on P-kcsan
` + kcsanFingerprint + `

WARNING: do_one_broadcast:netlink_broadcast:rtnetlink_send
`

func TestParseKnown(t *testing.T) {
	got := parseKnown(testList)
	want := map[string]string{
		kcsanFingerprint: "seen on U-kcsan, netlink_mcast_stress fixed0 and on P-kcsan",
		"WARNING: do_one_broadcast:netlink_broadcast:rtnetlink_send": "",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseKnown = %q, want %q", got, want)
	}
}

// sift runs a sifter with list over batches of reports and returns what
// it let through and what it printed, per batch.
func sift(list string, batches ...[]Report) (fresh [][]Report, notes [][]string) {
	s := &sifter{list: parseKnown(list)}
	for _, b := range batches {
		var n []string
		fresh = append(fresh, s.sift(b, func(format string, args ...any) { n = append(n, fmt.Sprintf(format, args...)) }))
		notes = append(notes, n)
	}
	return fresh, notes
}

func scanOne(t *testing.T, text string) Report {
	t.Helper()
	r := Scan(lines(text))
	if len(r) != 1 {
		t.Fatalf("Scan found %d reports, want 1", len(r))
	}
	return r[0]
}

func TestSift(t *testing.T) {
	race := scanOne(t, kcsanSplat)
	swapped := scanOne(t, kcsanSplatSwapped)
	warning := scanOne(t, warningSplat)
	// A look-alike: the same title and first stack, another caller in
	// the second.
	lookAlike := scanOne(t, strings.Replace(kcsanSplat, "__sys_getsockname+0xa7/0x130", "__sys_getpeername+0xa7/0x130", 1))
	kasan := scanOne(t, kasanModuleSplat)
	taintW := TaintReports(0, 1<<9)
	taintB := TaintReports(1<<9, 1<<9|1<<5)

	fresh, notes := sift(testList,
		[]Report{race, swapped, lookAlike},
		[]Report{warning},
		taintW, // the WARNING's taint bit, logged after it: known
		append([]Report{kasan}, taintB...),
	)
	want := [][]Report{{lookAlike}, nil, nil, {kasan, taintB[0]}}
	if !reflect.DeepEqual(fresh, want) {
		t.Errorf("let through\n%q\nwant\n%q", fresh, want)
	}
	wantNotes := [][]string{
		{
			`known kernel report (not the series'): BUG: KCSAN: data-race in netlink_getname / netlink_insert; fingerprint "` + kcsanFingerprint + `"; seen on U-kcsan, netlink_mcast_stress fixed0 and on P-kcsan`,
			`known kernel report (not the series'): BUG: KCSAN: data-race in netlink_getname / netlink_insert; fingerprint "` + kcsanFingerprint + `"; seen on U-kcsan, netlink_mcast_stress fixed0 and on P-kcsan`,
			`new kernel report (not in the known list): BUG: KCSAN: data-race in netlink_getname / netlink_insert; fingerprint "` + strings.Replace(kcsanFingerprint, "__sys_getsockname", "__sys_getpeername", 1) + `"`,
		},
		{`known kernel report (not the series'): WARNING: CPU: 0 PID: 97 at net/netlink/af_netlink.c:1500 do_one_broadcast+0x3c2/0x3e0; fingerprint "WARNING: do_one_broadcast:netlink_broadcast:rtnetlink_send"`},
		{`known kernel report (not the series'): taint: W (warning), set by a known report`},
		{`new kernel report (not in the known list): BUG: KASAN: use-after-free in do_one_broadcast+0x5a1/0x5f0; fingerprint "KASAN use-after-free: do_one_broadcast:netlink_broadcast_filtered:vxlan_fdb_notify:rtnl_notify"`},
	}
	if !reflect.DeepEqual(notes, wantNotes) {
		t.Errorf("printed\n%s\nwant\n%s", join(notes), join(wantNotes))
	}

	// Without a known report, a taint bit is new.
	fresh, _ = sift(testList, taintW)
	if !reflect.DeepEqual(fresh, [][]Report{taintW}) {
		t.Errorf("a taint bit alone was let through as %q", fresh)
	}
	// With an empty list, every report is new.
	fresh, _ = sift("", []Report{race, warning})
	if len(fresh[0]) != 2 {
		t.Errorf("with no known reports, %d of 2 new", len(fresh[0]))
	}
}

func join(n [][]string) string {
	var b strings.Builder
	for _, batch := range n {
		b.WriteString("  --\n")
		for _, l := range batch {
			b.WriteString("  " + l + "\n")
		}
	}
	return b.String()
}

// The list built into the programs: every entry is a fingerprint as
// Fingerprint makes them, and says where it was seen.
func TestKnownReportsFile(t *testing.T) {
	shape := regexp.MustCompile(`^(taint \S+|(KCSAN|KASAN|UBSAN|lockdep|BUG|WARNING|refcount|list corruption|RCU stall|Oops|panic|lockup|hung task|kmemleak)( [^:]+)?: \S.*)$`)
	seen := map[string]bool{}
	for _, l := range strings.Split(knownReports, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if !shape.MatchString(l) {
			t.Errorf("known_reports.txt: %q is not a fingerprint", l)
		}
		if seen[l] {
			t.Errorf("known_reports.txt: %q twice", l)
		}
		seen[l] = true
		if known[l] == "" {
			t.Errorf("known_reports.txt: %q has no comment saying where it was seen", l)
		}
	}
}

// The reports the unpatched builds gave, as their consoles showed them
// (testdata/u-*), are known, and so is the same bug on the patched build
// (testdata/p-*: other addresses, tasks, CPUs); they stay known when they
// come through the kernel log; one frame changed makes a report new.
func TestBaselineIsKnown(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no captured reports in testdata: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.TrimRight(string(data), "\n")
		r := scanOne(t, text)
		if why, ok := Known(r); !ok || why == "" {
			t.Errorf("%s: %s not known (fingerprint %q)", f, r, r.Fingerprint())
		}
		var plain []string
		for _, l := range lines(text) {
			plain = append(plain, StripPrefix(l))
		}
		if got := scanOne(t, strings.Join(plain, "\n")).Fingerprint(); got != r.Fingerprint() {
			t.Errorf("%s: without the console's prefixes, fingerprint %q, want %q", f, got, r.Fingerprint())
		}
		if len(r.Stacks) == 0 || len(r.Stacks[0]) < 2 {
			t.Fatalf("%s: stacks %q", f, r.Stacks)
		}
		caller := r.Stacks[0][1]
		lookAlike := scanOne(t, strings.Replace(text, " "+caller, " other_"+caller, 1))
		if _, ok := Known(lookAlike); ok {
			t.Errorf("%s: with %s renamed, still known: %q", f, caller, lookAlike.Fingerprint())
		}
	}
}
