// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// kernel is one kernel line the table covers: a pristine source tree and
// the series' patch for it.
type kernel struct {
	version   string // "6.1": the tree's VERSION.PATCHLEVEL
	srcEnv    string // the variable that names the tree
	seriesEnv string // the variable that names the patch
	patchName string // the patch's name in ../shared/kernels
}

var kernels = []kernel{
	{"6.1", "NLMC_KSRC_6_1", "NLMC_SERIES_6_1", "0001-netlink-per-netns-route-mc-index.patch"},
	{"6.12", "NLMC_KSRC_6_12", "NLMC_SERIES_6_12", "0001-netlink-per-netns-route-mc-index-6.12.patch"},
}

// refusedFiles are the files whose functions the table lists, besides
// the C and header files the series' patch changes: netlink's core and
// generic netlink (all of net/netlink), rtnetlink, the network
// namespace's life, and the headers whose inline functions are their
// interfaces (nlmsg_*, nla_*, genlmsg_*, rtnl_*, get_net/put_net): an
// inline that the compiler does not inline is a frame of its own name.
var refusedFiles = []string{
	"net/netlink/*.c",
	"net/netlink/*.h",
	"net/core/rtnetlink.c",
	"net/core/net_namespace.c",
	"include/linux/netlink.h",
	"include/net/netlink.h",
	"include/net/genetlink.h",
	"include/linux/rtnetlink.h",
	"include/net/rtnetlink.h",
	"include/net/net_namespace.h",
}

// table is function -> file -> the kernels ("6.1", "6.12P", ...) that
// define it there.
type table map[string]map[string][]string

func (t table) add(name, file, label string) {
	if t[name] == nil {
		t[name] = map[string][]string{}
	}
	for _, l := range t[name][file] {
		if l == label {
			return
		}
	}
	t[name][file] = append(t[name][file], label)
}

// release is a tree's "6.1.192", from its Makefile.
func release(tree string) (string, error) {
	data, err := os.ReadFile(filepath.Join(tree, "Makefile"))
	if err != nil {
		return "", err
	}
	get := func(key string) string {
		m := regexp.MustCompile(`(?m)^` + key + ` = (\d+)$`).FindStringSubmatch(string(data))
		if m == nil {
			return ""
		}
		return m[1]
	}
	v, p, s := get("VERSION"), get("PATCHLEVEL"), get("SUBLEVEL")
	if v == "" || p == "" || s == "" {
		return "", fmt.Errorf("%s/Makefile has no VERSION, PATCHLEVEL and SUBLEVEL", tree)
	}
	return v + "." + p + "." + s, nil
}

// scanKernel adds one kernel's functions to t: those of the pristine tree
// with label k.version+"U", those of the tree with the series applied
// with k.version+"P" (write merges a function both define into the bare
// version). It returns the tree's release, for the table's header.
func scanKernel(t table, k kernel, tree, patchFile string) (string, error) {
	rel, err := release(tree)
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(rel, k.version+".") {
		return "", fmt.Errorf("%s is Linux %s, not %s", tree, rel, k.version)
	}
	patchText, err := os.ReadFile(patchFile)
	if err != nil {
		return "", err
	}
	series, err := parsePatch(string(patchText))
	if err != nil {
		return "", fmt.Errorf("%s: %v", patchFile, err)
	}
	files := map[string]bool{}
	for _, pattern := range refusedFiles {
		matches, err := filepath.Glob(filepath.Join(tree, pattern))
		if err != nil {
			return "", err
		}
		if len(matches) == 0 {
			return "", fmt.Errorf("%s: no %s", tree, pattern)
		}
		for _, m := range matches {
			rel, _ := filepath.Rel(tree, m)
			files[rel] = true
		}
	}
	patched := map[string]filePatch{}
	for _, f := range series {
		if isCSource(f.path) {
			files[f.path] = true
			patched[f.path] = f
		}
	}
	for file := range files {
		src := ""
		if p, ok := patched[file]; !ok || !p.isNew {
			data, err := os.ReadFile(filepath.Join(tree, file))
			if err != nil {
				return "", err
			}
			src = string(data)
			names, err := functionDefinitions(src)
			if err != nil {
				return "", fmt.Errorf("%s/%s: %v", tree, file, err)
			}
			for _, n := range names {
				t.add(n, file, k.version+"U")
			}
		}
		if p, ok := patched[file]; ok {
			if src, err = p.apply(src); err != nil {
				return "", fmt.Errorf("%s on %s: %v", patchFile, tree, err)
			}
		}
		names, err := functionDefinitions(src)
		if err != nil {
			return "", fmt.Errorf("%s/%s with %s: %v", tree, file, patchFile, err)
		}
		for _, n := range names {
			t.add(n, file, k.version+"P")
		}
	}
	return rel, nil
}

func isCSource(path string) bool {
	return strings.HasSuffix(path, ".c") || strings.HasSuffix(path, ".h")
}

// write renders t: one line a function and file, "name\tfile\tkernels",
// sorted by name then file. The kernels are each version whose pristine
// and patched trees both define the function there ("6.1"), or only one
// of them ("6.1P": the series adds it; "6.1U": the series removes it).
func (t table) write(header string) string {
	var b strings.Builder
	b.WriteString(header)
	names := make([]string, 0, len(t))
	for n := range t {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		files := make([]string, 0, len(t[n]))
		for f := range t[n] {
			files = append(files, f)
		}
		sort.Strings(files)
		for _, f := range files {
			fmt.Fprintf(&b, "%s\t%s\t%s\n", n, f, strings.Join(mergeLabels(t[n][f]), " "))
		}
	}
	return b.String()
}

// mergeLabels turns {"6.1U", "6.1P", "6.12P"} into {"6.1", "6.12P"}, in
// the kernels' order.
func mergeLabels(labels []string) []string {
	has := map[string]bool{}
	for _, l := range labels {
		has[l] = true
	}
	var out []string
	for _, k := range kernels {
		u, p := has[k.version+"U"], has[k.version+"P"]
		switch {
		case u && p:
			out = append(out, k.version)
		case u:
			out = append(out, k.version+"U")
		case p:
			out = append(out, k.version+"P")
		}
	}
	return out
}
