// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// KernelVersion is the running kernel's major.minor, from uname(2).
type KernelVersion struct{ Major, Minor int }

func (v KernelVersion) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// AtLeast reports whether v is major.minor or later.
func (v KernelVersion) AtLeast(major, minor int) bool {
	return v.Major > major || (v.Major == major && v.Minor >= minor)
}

var kernel struct {
	once sync.Once
	v    KernelVersion
	err  error
}

// Kernel returns the running kernel's version. Expectations that the
// kernel changed in a known release are chosen with it; a release string
// it cannot parse fails the case that asks, rather than letting it guess.
func Kernel(t T) KernelVersion {
	t.Helper()
	kernel.once.Do(func() {
		var u unix.Utsname
		if err := unix.Uname(&u); err != nil {
			kernel.err = fmt.Errorf("uname: %w", err)
			return
		}
		kernel.v, kernel.err = parseKernelRelease(unix.ByteSliceToString(u.Release[:]))
	})
	if kernel.err != nil {
		t.Fatalf("%v", kernel.err)
	}
	return kernel.v
}

// parseKernelRelease reads major.minor from a uname release string such
// as "6.18.44-1-amd64" or "6.1.0".
func parseKernelRelease(release string) (KernelVersion, error) {
	fields := strings.SplitN(release, ".", 3)
	if len(fields) < 2 {
		return KernelVersion{}, fmt.Errorf("kernel release %q: want major.minor", release)
	}
	major, err1 := strconv.Atoi(fields[0])
	digits := strings.IndexFunc(fields[1], func(r rune) bool { return r < '0' || r > '9' })
	if digits < 0 {
		digits = len(fields[1])
	}
	minor, err2 := strconv.Atoi(fields[1][:digits])
	if err1 != nil || err2 != nil {
		return KernelVersion{}, fmt.Errorf("kernel release %q: want major.minor", release)
	}
	return KernelVersion{major, minor}, nil
}
