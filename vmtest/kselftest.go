// SPDX-License-Identifier: GPL-2.0

package main

import (
	"debug/elf"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"nlmcast/vmtest/kimage"
)

// With -kselftest DIR the guest runs the kernel's own kselftest runner over
// an installed copy (make -C tools/testing/selftests ... install): DIR is
// packed as /kselftest_install, and the guest's one program is a script
// that runs its run_kselftest.sh with the -args. The runner is a shell
// script and the initramfs has no shell of its own, so -busybox brings one:
// a static busybox for the image's architecture, as /usr/bin/busybox, with
// /bin/sh pointing at it and every applet linked into /bin before the runner
// starts (links, which the init does not take for programs). Nothing is put
// in /usr/bin but busybox itself: the 6.1 runner uses /usr/bin/timeout
// --foreground when it exists, an option busybox's timeout does not have;
// without it the runner runs each test without a time limit of its own, and
// the init's per-program limit bounds the whole runner.
const (
	ksftGuestDir    = "kselftest_install" // in the guest's root
	busyboxGuest    = "usr/bin/busybox"
	ksftProgramName = "run_kselftest.sh" // the guest's one program, in /bin
)

// ksftRunnerScript is that program.
const ksftRunnerScript = `#!/bin/sh
# Written by vmtest -kselftest: the kernel's kselftest runner over the
# installed copy in /` + ksftGuestDir + `, busybox's applets as its tools.
export PATH=/bin
/` + busyboxGuest + ` --install -s /bin || exit 1
cd /` + ksftGuestDir + ` && exec ./run_kselftest.sh "$@"
`

// checkKselftestDir makes sure dir is an installed kselftest copy whose
// programs can run on a kernel of arch: it has the runner, and every ELF
// in it is a static one of that machine (a copy installed for the host
// fails here, naming the program, rather than in the guest).
func checkKselftestDir(dir string, arch kimage.Arch, kernel string) error {
	for _, f := range []string{"run_kselftest.sh", "kselftest/runner.sh"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return fmt.Errorf("-kselftest %s: not an installed kselftest copy (make -C tools/testing/selftests TARGETS=... install): %w", dir, err)
		}
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || !isELF(p) {
			return err
		}
		return kimage.CheckProgram(p, arch, kernel)
	})
}

func isELF(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	magic := make([]byte, len(elf.ELFMAG))
	n, _ := f.Read(magic)
	return n == len(magic) && string(magic) == elf.ELFMAG
}

// addKselftest packs busybox, the /bin/sh link, the installed copy and the
// script that runs it.
func addKselftest(cw *cpioWriter, dir, busybox string) error {
	for _, d := range []string{"usr", "usr/bin"} {
		if err := cw.WriteDir(d, 0o755); err != nil {
			return err
		}
	}
	if err := addHostFile(cw, busyboxGuest, busybox); err != nil {
		return err
	}
	if err := cw.WriteSymlink("bin/sh", "/"+busyboxGuest); err != nil {
		return err
	}
	if err := addTree(cw, ksftGuestDir, dir); err != nil {
		return err
	}
	return cw.WriteFile("bin/"+ksftProgramName, 0o755, int64(len(ksftRunnerScript)), strings.NewReader(ksftRunnerScript))
}

// addTree packs the host directory src at name: directories, regular files
// with their permission bits, and symbolic links as links.
func addTree(cw *cpioWriter, name, src string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		at := path.Join(name, filepath.ToSlash(rel))
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return cw.WriteDir(at, info.Mode())
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return cw.WriteSymlink(at, target)
		case d.Type().IsRegular():
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return cw.WriteFile(at, info.Mode(), info.Size(), f)
		}
		return fmt.Errorf("pack %s into the initramfs: neither a file, a directory nor a link", p)
	})
}
