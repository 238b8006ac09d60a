// SPDX-License-Identifier: GPL-2.0

// Command netlinkfuncs makes selftests/kmsg/netlink_functions.txt, the
// table of the functions whose frames the kernel watch refuses in a
// known-report entry, from the kernel sources: every function defined
// (static and inline ones included) in net/netlink, net/core/rtnetlink.c,
// net/core/net_namespace.c, the headers whose inlines are their
// interfaces, and the C files the series' patch changes, in the pristine
// 6.1 and 6.12 trees and in the same trees with the series applied.
//
//	NLMC_KSRC_6_1=/work/ksrc/6.1 NLMC_KSRC_6_12=/work/ksrc/6.12 go generate ./selftests/kmsg
//
// The series' patches are NLMC_SERIES_6_1 and NLMC_SERIES_6_12, by
// default ../shared/kernels/0001-netlink-per-netns-route-mc-index{,-6.12}.patch
// beside the checkout. The trees are only read: the patch is applied in
// memory.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	out := flag.String("o", "netlink_functions.txt", "the table to write")
	flag.Parse()
	text, err := generate()
	if err == nil {
		err = os.WriteFile(*out, []byte(text), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "netlinkfuncs:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "netlinkfuncs: %s: %d lines\n", *out, strings.Count(text, "\n"))
}

// inputs are a kernel's tree and patch, from the environment; missing
// names the variables that are not set (or name nothing there).
func inputs(k kernel) (tree, patch string, missing []string) {
	tree = os.Getenv(k.srcEnv)
	if tree == "" {
		missing = append(missing, k.srcEnv+" (a pristine Linux "+k.version+" source tree)")
	}
	patch = os.Getenv(k.seriesEnv)
	if patch == "" {
		patch = besideCheckout(filepath.Join("shared", "kernels", k.patchName))
	}
	if patch == "" {
		missing = append(missing, k.seriesEnv+" (the series' patch, "+k.patchName+"; also looked for in ../shared/kernels beside the checkout)")
	}
	return tree, patch, missing
}

// besideCheckout is rel in the directory that holds the checkout (the
// module's root, found from the working directory up), if it is there.
func besideCheckout(rel string) string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(filepath.Dir(dir), rel)
			if _, err := os.Stat(p); err == nil {
				return p
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// generate makes the table from every kernel's inputs.
func generate() (string, error) {
	t := table{}
	var sources []string
	for _, k := range kernels {
		source, err := addKernel(t, k)
		if err != nil {
			return "", err
		}
		sources = append(sources, source)
	}
	return t.write(header(sources)), nil
}

// addKernel adds k's functions to t from its inputs, and returns the
// header's line naming them.
func addKernel(t table, k kernel) (string, error) {
	tree, patch, missing := inputs(k)
	if len(missing) > 0 {
		return "", fmt.Errorf("set %s", strings.Join(missing, " and "))
	}
	rel, err := scanKernel(t, k, tree, patch)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s: Linux %s, and with %s", k.version, rel, k.patchName), nil
}

func header(sources []string) string {
	var b strings.Builder
	b.WriteString(`# The functions whose frames the kernel watch refuses in a known-report
# entry (selftests/kmsg/netlinkfuncs.go). Made from the kernel sources by
# selftests/kmsg/internal/netlinkfuncs (go generate ./selftests/kmsg); do not edit.
# Every function defined, static and inline ones too, in:
`)
	b.WriteString("#   " + strings.Join(refusedFiles, " ") + "\n")
	b.WriteString("# and the C files the series' patch changes, in:\n")
	for _, s := range sources {
		b.WriteString("#   " + s + "\n")
	}
	b.WriteString(`# One line a function and file: name, file, kernels ("6.1": the pristine
# and the patched tree both define it there; "6.1P": only the patched one;
# "6.1U": only the pristine one).
`)
	return b.String()
}
