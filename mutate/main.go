// SPDX-License-Identifier: GPL-2.0

// Command mutate measures the suite against first-order changes to the
// kernel's multicast code: it makes every mutant of a set of functions and
// macros (Mull's operators: negated conditions, swapped relational,
// logical, arithmetic, bitwise and shift operators, deleted calls,
// assignments and jumps, changed constants and return values), builds
// each incrementally, boots it with vmtest running the semantics and
// switch programs, and classifies it as killed (naming the failed case or
// the guest step that failed twice), crashed (a kernel report), hung,
// build failure, survived, equivalent (a survivor with a written argument,
// or the unmutated object) or error (the host failed; never counted).
// Survivors go on to the next tiers, each with its own baseline boot: the
// pattern and debug builds, the stress modes, the fault-injection build.
// One JSON record per mutant, stamped with the suite commit, kernel and
// config hash, and a table go to a results directory, which a later run
// (also on another machine) resumes.
//
// Usage:
//
//	go run ./mutate prepare -tarball T -patch P -src DIR -build DIR -config F...
//	go run ./mutate list -src DIR [-set NAME] [-summary]
//	go run ./mutate compile -src DIR -build DIR [-per-op N -seed N]
//	go run ./mutate run -src DIR -build DIR -out DIR [-seed N -n N | -ids ID,...] [flags]
//	go run ./mutate argue -out DIR -config BUILD/.config
//	go run ./mutate score -out DIR [-with FOLLOW-UP-DIR]...
//
// The source file is mutated only while a build runs, and put back on
// every way out: normal end, error, SIGINT, SIGTERM, SIGHUP; a run killed
// outright leaves a journal that the next run restores from first.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	var code int
	switch os.Args[1] {
	case "prepare":
		code = cmdPrepare(os.Args[2:])
	case "list":
		code = cmdList(os.Args[2:])
	case "run":
		code = cmdRun(os.Args[2:])
	case "argue":
		code = cmdArgue(os.Args[2:])
	case "score":
		code = cmdScore(os.Args[2:])
	case "compile":
		code = cmdCompile(os.Args[2:])
	default:
		usage()
		code = 2
	}
	os.Exit(code)
}

func usage() {
	fmt.Fprintln(os.Stderr, `usage: go run ./mutate prepare|list|compile|run|argue|score [flags]   (-h after each for its flags)
  prepare  extract a kernel source tarball, apply patches, git init, configure and build bzImage
  list     print the mutants of a function set (-summary: their number per function and operator)
  compile  compile a few mutants of each operator into their object file, booting nothing
  run      build, boot and classify mutants, writing records to a results directory
  argue    apply the equivalence arguments to a results directory's survivors
  score    a campaign's figures and open survivors over its follow-up runs`)
}
