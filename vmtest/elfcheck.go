// SPDX-License-Identifier: GPL-2.0

package main

import (
	"debug/elf"
	"fmt"
	"strings"
)

// checkGuestBinary makes sure path can run in the guest, which has an
// x86-64 kernel and no shared libraries: it must be a static x86-64 ELF.
// Catching this on the host beats a guest "exec format error" or
// "no such file or directory" for a missing dynamic loader.
func checkGuestBinary(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: not an ELF executable: %w", path, err)
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 {
		return fmt.Errorf("%s: built for %v, but the guest is x86-64 (GOARCH=amd64)", path, f.Machine)
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return fmt.Errorf("%s: ELF type %v is not an executable", path, f.Type)
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		interp := make([]byte, p.Filesz)
		if _, err := p.ReadAt(interp, 0); err != nil {
			return fmt.Errorf("%s: read its program interpreter: %w", path, err)
		}
		return fmt.Errorf("%s: dynamically linked (needs %s), but the guest has no shared libraries: build it with CGO_ENABLED=0",
			path, strings.TrimRight(string(interp), "\x00"))
	}
	return nil
}
