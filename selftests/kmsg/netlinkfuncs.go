// SPDX-License-Identifier: GPL-2.0

package kmsg

import (
	_ "embed" // the table of refused functions
	"strings"
)

//go:generate go run ./internal/netlinkfuncs -o netlink_functions.txt

// netlinkFunctionsTable is every function defined in the files whose
// reports a known-report entry must not hide: net/netlink (the series'
// af_netlink.c and af_netlink.h, genetlink.c, ...), net/core/rtnetlink.c,
// net/core/net_namespace.c and the headers whose inline functions are
// their interfaces (include/net/netlink.h's nlmsg_* and nla_*, ...), in
// 6.1 and 6.12, each with and without the series: "name\tfile\tkernels",
// made from the kernel sources by internal/netlinkfuncs.
//
//go:embed netlink_functions.txt
var netlinkFunctionsTable string

// netlinkFunctions is the table read: function -> the files that define
// it; netlinkFiles is those files.
var netlinkFunctions, netlinkFiles = readFunctionTable(netlinkFunctionsTable)

func readFunctionTable(text string) (funcs map[string][]string, files map[string]bool) {
	funcs, files = map[string][]string{}, map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		f := strings.Split(l, "\t")
		if strings.HasPrefix(l, "#") || len(f) != 3 {
			continue
		}
		funcs[f[0]] = append(funcs[f[0]], f[1])
		files[f[1]] = true
	}
	return funcs, files
}

// netlinkFile is the file that defines the function a frame names
// (without offset, module or clone suffix), among the table's files, or
// "". A name that two of them define gives both.
func netlinkFile(frame string) string {
	return strings.Join(netlinkFunctions[cleanName(frame)], ", ")
}
