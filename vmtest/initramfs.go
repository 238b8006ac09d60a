// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"nlmcast/vmtest/internal/protocol"
)

// initramfsContents is what goes into the guest's root filesystem.
type initramfsContents struct {
	init      string              // host path of the guest init, packed as /init
	bins      []string            // host paths of the test programs, packed into /bin
	suiteArgs []string            // written to protocol.ArgsFile
	progArgs  map[string][]string // written to protocol.ProgArgsDir/NAME
	ksftDir   string              // an installed kselftest copy, with its runner as the program
	busybox   string              // the runner's shell and tools
}

// guestDirs are created empty; the init mounts /proc, /sys, /dev and /tmp.
var guestDirs = []struct {
	name string
	perm fs.FileMode
}{
	{"bin", 0o755},
	{"dev", 0o755},
	{"etc", 0o755},
	{strings.TrimPrefix(protocol.ProgArgsDir, "/"), 0o755},
	{"proc", 0o555},
	{"sys", 0o555},
	{"tmp", 0o777 | fs.ModeSticky},
}

// writeInitramfs writes a newc cpio archive to path, uncompressed: the
// kernel then copies it out of memory instead of inflating it, which
// under TCG took longer than the boot itself (0.4 s for the two suites'
// 10 MB), and needs no decompressor built in.
func writeInitramfs(path string, c initramfsContents) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create initramfs: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("write initramfs: %w", cerr)
		}
	}()
	buf := bufio.NewWriter(f)
	if err := writeRootfs(newCPIOWriter(buf), c); err != nil {
		return err
	}
	if err := buf.Flush(); err != nil {
		return fmt.Errorf("write initramfs: %w", err)
	}
	return nil
}

func writeRootfs(cw *cpioWriter, c initramfsContents) error {
	for _, d := range guestDirs {
		if err := cw.WriteDir(d.name, d.perm); err != nil {
			return err
		}
	}
	// The kernel opens /dev/console for the init's stdin, stdout and stderr
	// before /init runs, so before devtmpfs can provide it.
	if err := cw.WriteCharDevice("dev/console", 0o600, 5, 1); err != nil {
		return err
	}
	if err := addHostFile(cw, "init", c.init); err != nil {
		return err
	}
	for _, bin := range c.bins {
		if err := addHostFile(cw, "bin/"+filepath.Base(bin), bin); err != nil {
			return err
		}
	}
	if c.ksftDir != "" {
		if err := addKselftest(cw, c.ksftDir, c.busybox); err != nil {
			return err
		}
	}
	args, err := protocol.EncodeArgs(c.suiteArgs)
	if err != nil {
		return err
	}
	if err := cw.WriteFile(protocol.ArgsFile, 0o644, int64(len(args)), bytes.NewReader(args)); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(c.progArgs)) {
		args, err := protocol.EncodeArgs(c.progArgs[name])
		if err != nil {
			return err
		}
		if err := cw.WriteFile(path.Join(protocol.ProgArgsDir, name), 0o644, int64(len(args)), bytes.NewReader(args)); err != nil {
			return err
		}
	}
	return cw.Close()
}

// addHostFile packs the host file src as an executable at name.
func addHostFile(cw *cpioWriter, name, src string) error {
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("pack %s into the initramfs: %w", src, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("pack %s into the initramfs: %w", src, err)
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("pack %s into the initramfs: not a regular file", src)
	}
	if err := cw.WriteFile(name, 0o755, info.Size(), f); err != nil {
		return fmt.Errorf("pack %s into the initramfs: %w", src, err)
	}
	return nil
}
