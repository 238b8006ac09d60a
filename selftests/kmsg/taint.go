// SPDX-License-Identifier: GPL-2.0

package kmsg

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// taintFlags are the kernel's taint bits in bit order, with the letter that
// print_tainted() shows for a set bit (kernel/panic.c, taint_flags[]).
var taintFlags = []struct {
	letter byte
	what   string
}{
	{'P', "proprietary module"},
	{'F', "module force loaded"},
	{'S', "CPU out of specification"},
	{'R', "module force unloaded"},
	{'M', "machine check"},
	{'B', "bad page"},
	{'U', "user request"},
	{'D', "kernel died"},
	{'A', "ACPI table overridden"},
	{'W', "warning"},
	{'C', "staging driver"},
	{'I', "firmware workaround"},
	{'O', "out-of-tree module"},
	{'E', "unsigned module"},
	{'L', "soft lockup"},
	{'K', "live patched"},
	{'X', "auxiliary"},
	{'T', "struct randomization"},
	{'N', "test module"},
	{'J', "fwctl"},
}

// BitName names a taint bit as "W (warning)", or "bit 23" for a bit this
// package does not know.
func BitName(bit int) string {
	if bit >= 0 && bit < len(taintFlags) {
		f := taintFlags[bit]
		return fmt.Sprintf("%c (%s)", f.letter, f.what)
	}
	return "bit " + strconv.Itoa(bit)
}

// Letters renders a mask as the letters of its set bits, e.g. "OE"; "" for
// an untainted kernel.
func Letters(mask uint64) string {
	var b strings.Builder
	for bit := 0; bit < 64; bit++ {
		if mask&(1<<bit) == 0 {
			continue
		}
		if bit < len(taintFlags) {
			b.WriteByte(taintFlags[bit].letter)
		} else {
			fmt.Fprintf(&b, "[%d]", bit)
		}
	}
	return b.String()
}

// lettersOr is Letters, or "untainted" for 0.
func lettersOr(mask uint64) string {
	if mask == 0 {
		return "untainted"
	}
	return Letters(mask)
}

// NewBits lists the bits set in now but not in before, lowest first.
func NewBits(before, now uint64) []int {
	var bits []int
	for bit := 0; bit < 64; bit++ {
		if now&^before&(1<<bit) != 0 {
			bits = append(bits, bit)
		}
	}
	return bits
}

// ReadTaint reads the kernel's taint mask.
func ReadTaint() (uint64, error) {
	data, err := os.ReadFile(TaintedPath)
	if err != nil {
		return 0, err
	}
	return ParseTaint(string(data))
}

// ParseTaint parses the contents of /proc/sys/kernel/tainted.
func ParseTaint(s string) (uint64, error) {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a taint mask", TaintedPath, strings.TrimSpace(s))
	}
	return v, nil
}

// TaintReports is one "taint" Report per bit set in now but not in before,
// as Poll returns them.
func TaintReports(before, now uint64) []Report {
	var out []Report
	for _, bit := range NewBits(before, now) {
		out = append(out, Report{Kind: "taint", Lines: []string{
			"taint: " + BitName(bit),
			fmt.Sprintf("%s: %d (%s), was %d (%s)", TaintedPath, now, lettersOr(now), before, lettersOr(before)),
		}})
	}
	return out
}
