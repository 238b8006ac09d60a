// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// listPrograms returns the executable regular files in dir in lexical order,
// the order the kselftest runner uses.
func listPrograms(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return nil, fmt.Errorf("list test programs: %w", err)
	}
	var programs []string
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			return nil, fmt.Errorf("list test programs: %w", err)
		}
		if info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0 {
			programs = append(programs, filepath.Join(dir, e.Name()))
		}
	}
	return programs, nil
}
