// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// kernelTree is a kernel source tree and one build directory for it (the
// same directory for an in-tree build).
type kernelTree struct {
	src, build string
	jobs       int
}

func (t kernelTree) makeArgs(targets ...string) []string {
	args := []string{"-C", t.src, "ARCH=x86_64", "LOCALVERSION=", fmt.Sprintf("-j%d", t.jobs)}
	if abs(t.build) != abs(t.src) {
		args = append(args, "O="+t.build)
	}
	return append(args, targets...)
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return filepath.Clean(a)
}

func (t kernelTree) image() string { return filepath.Join(t.build, "arch/x86/boot/bzImage") }

// version is the tree's kernel version (make kernelversion), with no
// "make[1]: Entering directory" lines: run from a make (make test), the
// child inherits MAKELEVEL and would print them, so it is told not to.
func (t kernelTree) version() string {
	out, err := exec.Command("make", "-s", "--no-print-directory", "-C", t.src, "kernelversion").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// commit is the source tree's git HEAD, if it is a git tree.
func (t kernelTree) commit() string {
	out, err := exec.Command("git", "-C", t.src, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

var compileError = regexp.MustCompile(`(?m)^.*: (error|fatal error): .*$`)

// buildImage runs an incremental make bzImage. The compiler's error lines
// are returned when it fails.
func (t kernelTree) buildImage(ctx context.Context, log io.Writer) (errs []string, err error) {
	return t.make(ctx, log, "bzImage")
}

// make builds target incrementally; the compiler's error lines are
// returned when it fails.
func (t kernelTree) make(ctx context.Context, log io.Writer, target string) (errs []string, err error) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "make", t.makeArgs(target)...)
	cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, log), io.MultiWriter(&out, log)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		for _, l := range compileError.FindAllString(out.String(), 20) {
			errs = append(errs, strings.TrimSpace(l))
		}
		if len(errs) == 0 {
			tail := out.String()
			if len(tail) > 2000 {
				tail = tail[len(tail)-2000:]
			}
			return nil, fmt.Errorf("make %s failed without a compiler error: %v\n%s", target, err, tail)
		}
		return errs, nil
	}
	return nil, nil
}

// objectName is the object file kbuild makes of file, a .c file of the
// tree, relative to the build directory.
func objectName(file string) string { return strings.TrimSuffix(file, ".c") + ".o" }

// object is file's object in the build directory.
func (t kernelTree) object(file string) string { return filepath.Join(t.build, objectName(file)) }

// objectSum is the sha256 of file's object file as the last build left it.
func (t kernelTree) objectSum(file string) (string, error) {
	b, err := os.ReadFile(t.object(file))
	if err != nil {
		return "", fmt.Errorf("the object of %s: %w", file, err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b)), nil
}

// journal is what the guard writes next to a mutated file's original
// before it mutates it, so that a run killed with SIGKILL (which no handler
// sees) is undone by the next run: the file's path and its original.
type journal struct {
	File string `json:"file"` // absolute
	Orig string `json:"orig"` // absolute path of the saved original
}

// guard mutates one file at a time and puts it back on every way out:
// Restore, the signal handler, and the next run's Recover.
type guard struct {
	dir string // where the journal and the saved original live

	mu      sync.Mutex
	file    string
	orig    []byte
	mutated bool
}

func newGuard(dir string) *guard { return &guard{dir: dir} }

func (g *guard) journalPath() string { return filepath.Join(g.dir, "mutate-journal.json") }

// Mutate writes content to file, first saving its original.
func (g *guard) Mutate(file string, content []byte) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mutated {
		return fmt.Errorf("guard: %s is mutated still", g.file)
	}
	orig, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(g.dir, 0o755); err != nil {
		return err
	}
	origPath := filepath.Join(g.dir, "mutate-original")
	if err := writeSync(origPath, orig); err != nil {
		return err
	}
	j, _ := json.Marshal(journal{File: abs(file), Orig: origPath})
	if err := writeSync(g.journalPath(), j); err != nil {
		return err
	}
	g.file, g.orig, g.mutated = file, orig, true
	return os.WriteFile(file, content, 0o644)
}

// Restore puts the original back. It is safe to call when nothing is
// mutated, and from the signal handler.
func (g *guard) Restore() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.mutated {
		return nil
	}
	if err := writeSync(g.file, g.orig); err != nil {
		return fmt.Errorf("restore %s: %w", g.file, err)
	}
	g.mutated = false
	return os.Remove(g.journalPath())
}

// Recover undoes what a run that was killed outright left: it returns the
// file it restored, or "".
func (g *guard) Recover() (string, error) {
	b, err := os.ReadFile(g.journalPath())
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	var j journal
	if err := json.Unmarshal(b, &j); err != nil {
		return "", fmt.Errorf("%s: %w", g.journalPath(), err)
	}
	orig, err := os.ReadFile(j.Orig)
	if err != nil {
		return "", err
	}
	if err := writeSync(j.File, orig); err != nil {
		return "", err
	}
	return j.File, os.Remove(g.journalPath())
}

func writeSync(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// prepareTree extracts a kernel source tarball into dir, applies the
// patches, makes it a git tree (so that git diff shows any leftover
// change), configures build with tinyconfig and the fragments, and builds
// bzImage once: what a campaign on a new machine starts with.
func prepareTree(tarball string, patches []string, t kernelTree, fragments []string, log io.Writer) error {
	start := time.Now()
	run := func(dir string, name string, args ...string) error {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = log, log
		fmt.Fprintf(log, "mutate: prepare: %s %s\n", name, strings.Join(args, " "))
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
		}
		return nil
	}
	if _, err := os.Stat(filepath.Join(t.src, "Makefile")); err != nil {
		if err := os.MkdirAll(t.src, 0o755); err != nil {
			return err
		}
		if err := run(t.src, "tar", "-xf", tarball, "--strip-components=1"); err != nil {
			return err
		}
		for _, p := range patches {
			if err := run(t.src, "patch", "-p1", "-i", abs(p)); err != nil {
				return err
			}
		}
		// Debian's tarball ignores every top-level path ("/*"): without
		// dropping that rule the first commit would be empty.
		gi := filepath.Join(t.src, ".gitignore")
		if b, err := os.ReadFile(gi); err == nil {
			var keep []string
			for _, l := range strings.Split(string(b), "\n") {
				if l != "/*" {
					keep = append(keep, l)
				}
			}
			if err := os.WriteFile(gi, []byte(strings.Join(keep, "\n")), 0o644); err != nil {
				return err
			}
		}
		if err := run(t.src, "git", "init", "-q"); err != nil {
			return err
		}
		if err := run(t.src, "git", "add", "-A"); err != nil {
			return err
		}
		if err := run(t.src, "git", "-c", "user.name=mutate", "-c", "user.email=mutate@localhost", "commit", "-q", "-m", "base: "+filepath.Base(tarball)+" "+strings.Join(patches, " ")); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(t.build, 0o755); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(t.build, ".config")); err != nil {
		if err := run(t.src, "make", t.makeArgs("tinyconfig")...); err != nil {
			return err
		}
		if len(fragments) > 0 {
			args := append([]string{"-m", "-O", t.build, filepath.Join(t.build, ".config")}, absAll(fragments)...)
			if err := run(t.src, "scripts/kconfig/merge_config.sh", args...); err != nil {
				return err
			}
		}
		if err := run(t.src, "make", t.makeArgs("olddefconfig")...); err != nil {
			return err
		}
	}
	if err := run(t.src, "make", t.makeArgs("bzImage")...); err != nil {
		return err
	}
	fmt.Fprintf(log, "mutate: prepare: %s built in %v\n", t.image(), time.Since(start).Round(time.Second))
	return nil
}

func absAll(ps []string) []string {
	var out []string
	for _, p := range ps {
		out = append(out, abs(p))
	}
	return out
}
