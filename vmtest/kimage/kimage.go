// SPDX-License-Identifier: GPL-2.0

// Package kimage tells which architecture a kernel image is for, from the
// image's own boot header, and whether a program can run on it: the guest
// of a vmtest run has no shared libraries and no binfmt emulation, so a
// program must be a static ELF of the kernel's architecture.
//
// Two kinds of image are known: an x86 bzImage (the boot protocol's "HdrS"
// at offset 0x202) and an arm64 Image (the magic "ARM\x64" at offset 0x38
// of its header, Documentation/arm64/booting.rst), also gzip-compressed
// (Image.gz), which QEMU's -kernel unpacks itself.
package kimage

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Arch is an architecture a kernel image can be for.
type Arch struct {
	Name    string      // as kernel people say it: "x86-64", "arm64"
	GOARCH  string      // what Go builds for it
	Machine elf.Machine // e_machine of its programs
}

// The architectures vmtest boots.
var (
	X86_64 = Arch{Name: "x86-64", GOARCH: "amd64", Machine: elf.EM_X86_64}
	ARM64  = Arch{Name: "arm64", GOARCH: "arm64", Machine: elf.EM_AARCH64}
)

// Offsets and magics of the two boot headers.
const (
	bzImageMagicOffset = 0x202
	bzImageMagic       = "HdrS"
	arm64MagicOffset   = 0x38
	arm64Magic         = "ARM\x64"
	headerLen          = bzImageMagicOffset + len(bzImageMagic)
)

// Detect reads the boot header of the kernel image at path.
func Detect(path string) (Arch, error) {
	f, err := os.Open(path)
	if err != nil {
		return Arch{}, err
	}
	defer f.Close()
	head := make([]byte, headerLen)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return Arch{}, fmt.Errorf("%s: read the boot header: %w", path, err)
	}
	head = head[:n]
	if bytes.HasPrefix(head, []byte{0x1f, 0x8b}) {
		// Image.gz: the header is the start of the compressed stream.
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return Arch{}, err
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			return Arch{}, fmt.Errorf("%s: gzip header: %w", path, err)
		}
		inner := make([]byte, arm64MagicOffset+len(arm64Magic))
		if _, err := io.ReadFull(zr, inner); err != nil {
			return Arch{}, fmt.Errorf("%s: gzip-compressed, but too short for a boot header: %w", path, err)
		}
		if a, ok := fromHeader(inner); ok && a == ARM64 {
			return a, nil
		}
		return Arch{}, fmt.Errorf("%s: gzip-compressed, but not an arm64 Image.gz (no %q at offset %#x after decompression)", path, arm64Magic, arm64MagicOffset)
	}
	if a, ok := fromHeader(head); ok {
		return a, nil
	}
	if bytes.HasPrefix(head, []byte(elf.ELFMAG)) {
		return Arch{}, fmt.Errorf("%s: an ELF file (vmlinux?), not a boot image: boot arch/x86/boot/bzImage or arch/arm64/boot/Image", path)
	}
	return Arch{}, fmt.Errorf("%s: not a kernel image vmtest knows: neither an x86 bzImage (%q at offset %#x) nor an arm64 Image (%q at offset %#x)",
		path, bzImageMagic, bzImageMagicOffset, arm64Magic, arm64MagicOffset)
}

// fromHeader recognises the first bytes of an uncompressed image.
func fromHeader(head []byte) (Arch, bool) {
	has := func(off int, magic string) bool {
		return len(head) >= off+len(magic) && string(head[off:off+len(magic)]) == magic
	}
	switch {
	case has(arm64MagicOffset, arm64Magic):
		return ARM64, true
	case has(bzImageMagicOffset, bzImageMagic):
		return X86_64, true
	}
	return Arch{}, false
}

// archOfMachine names an ELF machine the way Arch does.
func archOfMachine(m elf.Machine) string {
	for _, a := range []Arch{X86_64, ARM64} {
		if a.Machine == m {
			return a.Name
		}
	}
	return m.String()
}

// CheckProgram makes sure the program at path can run on a kernel of arch
// a (the image kernel, named in the message) with no shared libraries: a
// static ELF executable for that machine. Catching this on the host beats
// a guest's "exec format error", or "no such file or directory" for a
// missing dynamic loader.
func CheckProgram(path string, a Arch, kernel string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: not an ELF executable: %w", path, err)
	}
	defer f.Close()
	if f.Machine != a.Machine {
		return fmt.Errorf("%s is an %s ELF, the kernel %s is %s: build it with GOARCH=%s",
			path, archOfMachine(f.Machine), filepath.Base(kernel), a.Name, a.GOARCH)
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
