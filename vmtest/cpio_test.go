// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"testing"
)

// cpioEntry is one entry as read back by readNewc.
type cpioEntry struct {
	name             string
	ino, mode, nlink uint32
	rdevMajor        uint32
	rdevMinor        uint32
	data             string
}

// readNewc parses a newc archive strictly, checking the magic, the field
// encoding and the 4-byte alignment, and stops at the trailer.
func readNewc(t *testing.T, archive []byte) []cpioEntry {
	t.Helper()
	var entries []cpioEntry
	off := 0
	field := func(i int) uint32 {
		s := string(archive[off+6+8*i : off+6+8*i+8])
		v, err := strconv.ParseUint(s, 16, 32)
		if err != nil {
			t.Fatalf("offset %d field %d: %q is not hex", off, i, s)
		}
		return uint32(v)
	}
	for {
		if off%4 != 0 {
			t.Fatalf("header at offset %d is not 4-byte aligned", off)
		}
		if off+110 > len(archive) {
			t.Fatalf("archive ends inside a header at offset %d", off)
		}
		if magic := string(archive[off : off+6]); magic != "070701" {
			t.Fatalf("offset %d: magic %q", off, magic)
		}
		e := cpioEntry{ino: field(0), mode: field(1), nlink: field(4), rdevMajor: field(9), rdevMinor: field(10)}
		size, nameSize := int(field(6)), int(field(11))
		if uid, gid, check := field(2), field(3), field(12); uid != 0 || gid != 0 || check != 0 {
			t.Errorf("offset %d: uid %d gid %d check %d, want 0", off, uid, gid, check)
		}
		nameEnd := off + 110 + nameSize
		if archive[nameEnd-1] != 0 {
			t.Fatalf("offset %d: name is not NUL-terminated", off)
		}
		e.name = string(archive[off+110 : nameEnd-1])
		dataStart := (nameEnd + 3) &^ 3
		e.data = string(archive[dataStart : dataStart+size])
		off = (dataStart + size + 3) &^ 3
		if e.name == cpioTrailer {
			if off != len(archive) {
				t.Errorf("%d bytes after the trailer", len(archive)-off)
			}
			return entries
		}
		entries = append(entries, e)
	}
}

func TestCPIOWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	cw := newCPIOWriter(&buf)
	steps := []error{
		cw.WriteDir("/bin", 0o755),
		cw.WriteDir("tmp", 0o777|fs.ModeSticky),
		cw.WriteCharDevice("dev/console", 0o600, 5, 1),
		cw.WriteFile("init", 0o755, 5, strings.NewReader("hello")),
		cw.WriteFile("bin/a", 0o755, 0, strings.NewReader("")),
		cw.WriteFile("etc/args", 0o644, 8, strings.NewReader("12345678")),
		cw.WriteSymlink("bin/sh", "/usr/bin/busybox"),
		cw.Close(),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if buf.Len()%4 != 0 {
		t.Errorf("archive length %d is not a multiple of 4", buf.Len())
	}

	got := readNewc(t, buf.Bytes())
	want := []cpioEntry{
		{name: "bin", ino: 1, mode: 0o040755, nlink: 2},
		{name: "tmp", ino: 2, mode: 0o041777, nlink: 2},
		{name: "dev/console", ino: 3, mode: 0o020600, nlink: 1, rdevMajor: 5, rdevMinor: 1},
		{name: "init", ino: 4, mode: 0o100755, nlink: 1, data: "hello"},
		{name: "bin/a", ino: 5, mode: 0o100755, nlink: 1},
		{name: "etc/args", ino: 6, mode: 0o100644, nlink: 1, data: "12345678"},
		{name: "bin/sh", ino: 7, mode: 0o120777, nlink: 1, data: "/usr/bin/busybox"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("entries:\n got %+v\nwant %+v", got, want)
	}
}

func TestCPIOWriterHeaderLayout(t *testing.T) {
	var buf bytes.Buffer
	cw := newCPIOWriter(&buf)
	if err := cw.WriteFile("ab", 0o644, 1, strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}
	// 110-byte header, "ab\0" pads to 116, one data byte pads to 120.
	want := "070701" + "00000001" + "000081a4" + "00000000" + "00000000" + "00000001" + "00000000" +
		"00000001" + "00000000" + "00000000" + "00000000" + "00000000" + "00000003" + "00000000" +
		"ab\x00\x00\x00\x00" + "x\x00\x00\x00"
	if got := buf.String(); got != want {
		t.Errorf("bytes:\n got %q\nwant %q", got, want)
	}
}

func TestCPIOWriterRejectsShortData(t *testing.T) {
	cw := newCPIOWriter(io.Discard)
	if err := cw.WriteFile("f", 0o644, 10, strings.NewReader("short")); err == nil {
		t.Error("WriteFile accepted 5 bytes for a 10-byte entry")
	}
}

func TestCPIOWriterRejectsEmptyName(t *testing.T) {
	cw := newCPIOWriter(io.Discard)
	if err := cw.WriteDir("/", 0o755); err == nil {
		t.Error("WriteDir accepted the root itself as a name")
	}
}
