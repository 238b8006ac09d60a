// SPDX-License-Identifier: GPL-2.0

package protocol

import (
	"slices"
	"testing"
	"time"
)

func TestExitLineRoundTrip(t *testing.T) {
	for _, status := range []int{0, 1, 4, 127} {
		got, ok := ParseExitLine(ExitLine(status))
		if !ok || got != status {
			t.Errorf("ParseExitLine(ExitLine(%d)) = %d, %v", status, got, ok)
		}
	}
}

func TestParseExitLineRejects(t *testing.T) {
	for _, line := range []string{"", "exit=0", InitStarted, MarkerPrefix + "exit=", MarkerPrefix + "exit=x", "# " + ExitLine(0)} {
		if n, ok := ParseExitLine(line); ok {
			t.Errorf("ParseExitLine(%q) = %d, true; want not ok", line, n)
		}
	}
}

func TestArgsRoundTrip(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"-v"},
		{"--filter", "route mc", "", "it's \"quoted\""},
	} {
		data, err := EncodeArgs(args)
		if err != nil {
			t.Fatalf("EncodeArgs(%q): %v", args, err)
		}
		if got := DecodeArgs(data); !slices.Equal(got, args) {
			t.Errorf("DecodeArgs(EncodeArgs(%q)) = %q", args, got)
		}
	}
}

func TestEncodeArgsRejectsNewline(t *testing.T) {
	if _, err := EncodeArgs([]string{"a\nb"}); err == nil {
		t.Error("EncodeArgs accepted an argument with a newline")
	}
}

func TestTaintLineRoundTrip(t *testing.T) {
	for _, m := range [][2]uint64{{0, 0}, {0, 512}, {12288, 12864}, {1 << 63, ^uint64(0)}} {
		b, a, ok := ParseTaintLine(TaintLine(m[0], m[1]))
		if !ok || b != m[0] || a != m[1] {
			t.Errorf("ParseTaintLine(TaintLine(%d, %d)) = %d, %d, %v", m[0], m[1], b, a, ok)
		}
	}
	for _, line := range []string{"", "taint=0,1", MarkerPrefix + "taint=", MarkerPrefix + "taint=1", MarkerPrefix + "taint=x,1", "# " + TaintLine(0, 1)} {
		if _, _, ok := ParseTaintLine(line); ok {
			t.Errorf("ParseTaintLine(%q) accepted", line)
		}
	}
}

func TestLastParam(t *testing.T) {
	for _, tt := range []struct {
		cmdline, want string
		ok            bool
	}{
		{"console=ttyS0 quiet", "", false},
		{"nlmc.netns=1 console=ttyS0", "1", true},
		{"nlmc.netns=1 nlmc.netns=0", "0", true},
		{"nlmc.netnsx=1", "", false},
		{"nlmc.netns=", "", true},
	} {
		if got, ok := LastParam(tt.cmdline, "nlmc.netns"); got != tt.want || ok != tt.ok {
			t.Errorf("LastParam(%q) = %q, %v; want %q, %v", tt.cmdline, got, ok, tt.want, tt.ok)
		}
	}
}

func TestKmemleakLineRoundTrip(t *testing.T) {
	line := KmemleakLine("netlink_mcast_semantics", 2, 7140*time.Millisecond)
	if line != "nlmc-vmtest: kmemleak: 2 suspected leaks after netlink_mcast_semantics (scanned in 7.1s)" {
		t.Errorf("KmemleakLine = %q", line)
	}
	program, n, ok := ParseKmemleakLine(line)
	if !ok || program != "netlink_mcast_semantics" || n != 2 {
		t.Errorf("ParseKmemleakLine(%q) = %q, %d, %v", line, program, n, ok)
	}
	for _, bad := range []string{
		"nlmc-vmtest: kmemleak: x suspected leaks after a",
		"nlmc-vmtest: kmemleak: -1 suspected leaks after a",
		"nlmc-vmtest: kmemleak: 1 suspected leaks after ",
		"nlmc-vmtest: no leak check for a: kmemleak: scan: operation not permitted",
	} {
		if _, _, ok := ParseKmemleakLine(bad); ok {
			t.Errorf("ParseKmemleakLine(%q) accepted it", bad)
		}
	}
}

func TestNetnsLeftLineRoundTrip(t *testing.T) {
	line := NetnsLeftLine("netlink_mcast_semantics", 120*time.Second)
	if line != MarkerPrefix+"netns: namespaces still there 120s after netlink_mcast_semantics" {
		t.Errorf("NetnsLeftLine = %q", line)
	}
	if p, ok := ParseNetnsLeftLine(line); !ok || p != "netlink_mcast_semantics" {
		t.Errorf("ParseNetnsLeftLine(%q) = %q, %v", line, p, ok)
	}
	for _, bad := range []string{"", "# " + line, MarkerPrefix + "netns: namespaces still there 120s after ", KmemleakLine("x", 1, time.Second)} {
		if p, ok := ParseNetnsLeftLine(bad); ok {
			t.Errorf("ParseNetnsLeftLine(%q) = %q, true; want not ok", bad, p)
		}
	}
}
