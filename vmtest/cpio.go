// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"io"
	"io/fs"
	"strings"
)

// File type bits of a cpio mode, as in <sys/stat.h>.
const (
	cpioTypeDir     = 0o040000
	cpioTypeRegular = 0o100000
	cpioTypeCharDev = 0o020000
	cpioTypeSymlink = 0o120000
)

// cpioTrailer names the entry that ends every cpio archive.
const cpioTrailer = "TRAILER!!!"

// cpioWriter writes a cpio archive in the "newc" format (cpio -H newc), the
// only one the kernel's initramfs unpacker reads. Entries need no host
// privileges: device nodes are just headers, and every entry is owned by
// root.
type cpioWriter struct {
	w       io.Writer
	offset  int64
	nextIno uint32
}

func newCPIOWriter(w io.Writer) *cpioWriter {
	return &cpioWriter{w: w, nextIno: 1}
}

// cpioHeader holds the fields of a newc header that vary between entries.
type cpioHeader struct {
	name      string
	mode      uint32
	nlink     uint32
	size      int64
	rdevMajor uint32
	rdevMinor uint32
}

// WriteDir adds a directory. Parents must come before what they contain.
func (c *cpioWriter) WriteDir(name string, perm fs.FileMode) error {
	return c.writeHeader(cpioHeader{name: name, mode: cpioTypeDir | permBits(perm), nlink: 2})
}

// WriteCharDevice adds a character device node.
func (c *cpioWriter) WriteCharDevice(name string, perm fs.FileMode, major, minor uint32) error {
	return c.writeHeader(cpioHeader{name: name, mode: cpioTypeCharDev | permBits(perm), nlink: 1, rdevMajor: major, rdevMinor: minor})
}

// WriteSymlink adds a symbolic link to target (its data, in newc).
func (c *cpioWriter) WriteSymlink(name, target string) error {
	if target == "" {
		return fmt.Errorf("cpio entry %q: empty symlink target", name)
	}
	if err := c.writeHeader(cpioHeader{name: name, mode: cpioTypeSymlink | 0o777, nlink: 1, size: int64(len(target))}); err != nil {
		return err
	}
	if _, err := io.WriteString(c, target); err != nil {
		return fmt.Errorf("cpio entry %q: write target: %w", name, err)
	}
	return c.pad()
}

// WriteFile adds a regular file of exactly size bytes read from r.
func (c *cpioWriter) WriteFile(name string, perm fs.FileMode, size int64, r io.Reader) error {
	if size < 0 || size > 0xffffffff {
		return fmt.Errorf("cpio entry %q: size %d does not fit the newc format", name, size)
	}
	if err := c.writeHeader(cpioHeader{name: name, mode: cpioTypeRegular | permBits(perm), nlink: 1, size: size}); err != nil {
		return err
	}
	n, err := io.Copy(c, io.LimitReader(r, size))
	if err != nil {
		return fmt.Errorf("cpio entry %q: copy data: %w", name, err)
	}
	if n != size {
		return fmt.Errorf("cpio entry %q: got %d bytes of data, want %d", name, n, size)
	}
	return c.pad()
}

// Close writes the trailer. It does not close the underlying writer.
func (c *cpioWriter) Close() error {
	return c.writeHeader(cpioHeader{name: cpioTrailer, nlink: 1})
}

func (c *cpioWriter) writeHeader(h cpioHeader) error {
	name := strings.TrimPrefix(h.name, "/") // archive paths are relative to the root
	if name == "" || strings.ContainsRune(name, 0) {
		return fmt.Errorf("cpio entry name %q: must be a non-empty path without NUL", h.name)
	}
	ino := c.nextIno
	c.nextIno++
	// Thirteen 8-digit hex fields: ino, mode, uid, gid, nlink, mtime,
	// filesize, devmajor, devminor, rdevmajor, rdevminor, namesize, check.
	// uid, gid and mtime stay 0 so the archive does not depend on the host.
	header := fmt.Sprintf("070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
		ino, h.mode, 0, 0, h.nlink, 0, h.size, 0, 0, h.rdevMajor, h.rdevMinor, len(name)+1, 0)
	if _, err := io.WriteString(c, header+name+"\x00"); err != nil {
		return fmt.Errorf("cpio entry %q: write header: %w", h.name, err)
	}
	return c.pad()
}

// Write counts what passes through, so entries can be padded.
func (c *cpioWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.offset += int64(n)
	return n, err
}

// pad aligns the next header or data to 4 bytes, as newc requires.
func (c *cpioWriter) pad() error {
	var zeros [3]byte
	if _, err := c.Write(zeros[:(4-c.offset%4)%4]); err != nil {
		return fmt.Errorf("cpio: write padding: %w", err)
	}
	return nil
}

func permBits(perm fs.FileMode) uint32 {
	bits := uint32(perm.Perm())
	if perm&fs.ModeSetuid != 0 {
		bits |= 0o4000
	}
	if perm&fs.ModeSetgid != 0 {
		bits |= 0o2000
	}
	if perm&fs.ModeSticky != 0 {
		bits |= 0o1000
	}
	return bits
}
