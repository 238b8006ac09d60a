// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const (
	// modulePath is this repository's Go module; the init is built from it.
	modulePath       = "nlmcast"
	guestInitPackage = modulePath + "/vmtest/guestinit"
)

// buildGuestInit compiles the guest init into dir as a static binary for
// goarch and returns its path.
func buildGuestInit(ctx context.Context, dir, goarch string) (string, error) {
	root, err := findModuleRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "init")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, guestInitPackage)
	cmd.Dir = root
	// Static, with no dependency on the host's libc or architecture.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build guest init (%s) in %s: %w\n%s", guestInitPackage, root, err, output.Bytes())
	}
	return out, nil
}

// findModuleRoot finds the directory of this module's go.mod at or above the
// working directory.
func findModuleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the %s module: %w", modulePath, err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if declaresModule(filepath.Join(dir, "go.mod"), modulePath) {
			return dir, nil
		}
		if dir == filepath.Dir(dir) {
			return "", fmt.Errorf("no go.mod of module %s at or above %s: run vmtest inside the repository, or pass -init", modulePath, wd)
		}
	}
}

// declaresModule reports whether the go.mod at path declares module name.
func declaresModule(path, name string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module"); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`) == name
		}
	}
	return false
}
