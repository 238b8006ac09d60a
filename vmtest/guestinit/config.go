// SPDX-License-Identifier: GPL-2.0

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"nlmcast/vmtest/internal/protocol"
)

const defaultProgramTimeout = protocol.DefaultProgramTimeout

// config is what the host asked for, through the kernel command line and the
// initramfs.
type config struct {
	args     []string            // for every program
	progArgs map[string][]string // for one program, after args
	timeout  time.Duration
	netns    bool // each program in a network namespace of its own
}

// readConfig never fails: a bad setting is reported as a warning and replaced
// by its default, so the suites still run.
func readConfig() (config, []error) {
	var warnings []error
	cfg := config{timeout: defaultProgramTimeout}

	cmdline, err := os.ReadFile("/proc/cmdline")
	if err != nil {
		warnings = append(warnings, fmt.Errorf("read kernel command line: %w", err))
	} else {
		if cfg.timeout, err = programTimeout(string(cmdline)); err != nil {
			warnings = append(warnings, err)
		}
		cfg.netns = flagParam(string(cmdline), protocol.NetnsParam)
	}

	cfg.args, err = readSuiteArgs(protocol.ArgsFile)
	if err != nil {
		warnings = append(warnings, err)
	}
	cfg.progArgs, err = readProgArgs(protocol.ProgArgsDir)
	if err != nil {
		warnings = append(warnings, err)
	}
	return cfg, warnings
}

// flagParam reports whether the last KEY=VALUE for key on the command line
// turns it on (1, y, yes, on, true).
func flagParam(cmdline, key string) bool {
	value, _ := protocol.LastParam(cmdline, key)
	switch strings.ToLower(value) {
	case "1", "y", "yes", "on", "true":
		return true
	}
	return false
}

// readProgArgs reads the per-program arguments: one file per program in dir.
func readProgArgs(dir string) (map[string][]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read per-program arguments: %w", err)
	}
	args := map[string][]string{}
	for _, e := range entries {
		a, err := readSuiteArgs(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		args[e.Name()] = a
	}
	return args, nil
}

// programTimeout returns the last nlmc.timeout=SECONDS on the command line,
// as the kernel's own parameters go, or the default.
func programTimeout(cmdline string) (time.Duration, error) {
	value, ok := protocol.LastParam(cmdline, protocol.TimeoutParam)
	if !ok {
		return defaultProgramTimeout, nil
	}
	secs, err := strconv.Atoi(value)
	if err != nil || secs <= 0 {
		return defaultProgramTimeout, fmt.Errorf("%s=%q is not a positive number of seconds; using %v",
			protocol.TimeoutParam, value, defaultProgramTimeout)
	}
	return time.Duration(secs) * time.Second, nil
}

// readSuiteArgs reads the arguments for every suite; no file means none.
func readSuiteArgs(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read suite arguments: %w", err)
	}
	return protocol.DecodeArgs(data), nil
}
