// SPDX-License-Identifier: GPL-2.0

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"nlmcast/mutate/internal/cfunc"
)

// compileResult is one mutant compiled alone: its object built or the
// compiler's first error.
type compileResult struct {
	m     cfunc.Mutant
	err   string // the first compiler error; "" when it compiled
	same  bool   // compiled to the unmutated object
	fatal error
}

// compileSample compiles up to perOp mutants of each operator (drawn
// with seed) into the object of their file, the source put back after
// each; it ends by compiling the unmutated source again.
func compileSample(ctx context.Context, t kernelTree, g *guard, ms []cfunc.Mutant, perOp int, seed int64, log io.Writer) ([]compileResult, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	file := ms[0].File
	srcFile := filepath.Join(t.src, file)
	pristine, err := os.ReadFile(srcFile)
	if err != nil {
		return nil, err
	}
	obj := objectName(file)
	if errs, err := t.make(ctx, log, obj); err != nil || len(errs) > 0 {
		return nil, fmt.Errorf("the unmutated %s does not build: %v %v", obj, err, errs)
	}
	pristineObj, err := t.objectSum(file)
	if err != nil {
		return nil, err
	}
	byOp := map[string][]cfunc.Mutant{}
	for _, m := range ms {
		byOp[m.Op] = append(byOp[m.Op], m)
	}
	r := rand.New(rand.NewPCG(uint64(seed), 1))
	var out []compileResult
	for _, op := range cfunc.Operators {
		cand := byOp[op]
		for _, i := range r.Perm(len(cand))[:min(perOp, len(cand))] {
			m := cand[i]
			mutated, err := m.Apply(pristine)
			if err != nil {
				return out, err
			}
			if err := g.Mutate(srcFile, mutated); err != nil {
				return out, err
			}
			errs, err := t.make(ctx, log, obj)
			if rerr := g.Restore(); rerr != nil {
				return out, rerr
			}
			if err != nil {
				return out, err
			}
			res := compileResult{m: m}
			if len(errs) > 0 {
				res.err = errs[0]
			} else if sum, err := t.objectSum(file); err == nil && sum == pristineObj {
				res.same = true
			}
			out = append(out, res)
		}
	}
	_, err = t.make(ctx, log, obj)
	return out, err
}

// writeCompileTable prints, per operator, how many of the mutants tried
// compiled (and how many of those to the unmutated object), and each
// failure's first error.
func writeCompileTable(w io.Writer, kernel string, rs []compileResult) {
	type tally struct{ tried, compiled, same int }
	by := map[string]*tally{}
	var fails []string
	for _, r := range rs {
		tl := by[r.m.Op]
		if tl == nil {
			tl = &tally{}
			by[r.m.Op] = tl
		}
		tl.tried++
		if r.err == "" {
			tl.compiled++
			if r.same {
				tl.same++
			}
		} else {
			fails = append(fails, fmt.Sprintf("  %s (%q -> %q): %s", r.m.ID, r.m.Orig, r.m.Repl, r.err))
		}
	}
	fmt.Fprintf(w, "| operator (%s) | tried | compiled | of those, the unmutated object |\n|---|---|---|---|\n", kernel)
	for _, op := range cfunc.Operators {
		if tl := by[op]; tl != nil {
			fmt.Fprintf(w, "| %s | %d | %d | %d |\n", op, tl.tried, tl.compiled, tl.same)
		}
	}
	if len(fails) > 0 {
		fmt.Fprintf(w, "\nbuild failures:\n%s\n", strings.Join(fails, "\n"))
	}
}

func cmdCompile(args []string) int {
	fs := flag.NewFlagSet("mutate compile", flag.ContinueOnError)
	var t kernelTree
	fs.StringVar(&t.src, "src", "", "kernel source tree")
	fs.StringVar(&t.build, "build", "", "its build directory, built once already")
	fs.IntVar(&t.jobs, "j", 2, "make -j")
	set := fs.String("set", defaultSet, "function set: "+strings.Join(setNames(), ", "))
	perOp := fs.Int("per-op", 3, "mutants per operator")
	seed := fs.Int64("seed", 1, "which mutants of each operator")
	ops := fs.String("ops", "", "comma-separated operators (default: every one)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if t.src == "" || t.build == "" {
		fmt.Fprintln(os.Stderr, "mutate compile: -src and -build are required")
		return 2
	}
	ms, err := setMutants(t.src, *set)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mutate compile: %v\n", err)
		return 1
	}
	if want := splitList(*ops); len(want) > 0 {
		var keep []cfunc.Mutant
		for _, m := range ms {
			for _, o := range want {
				if m.Op == o {
					keep = append(keep, m)
				}
			}
		}
		ms = keep
	}
	g := newGuard(filepath.Join(t.build, ".mutate"))
	ctx, exitCode := restoreOnSignal(g)
	if f, err := g.Recover(); err != nil {
		fmt.Fprintf(os.Stderr, "mutate compile: recover: %v\n", err)
		return exitCode(1)
	} else if f != "" {
		fmt.Fprintf(os.Stderr, "mutate compile: restored %s, left mutated by a run that was killed\n", f)
	}
	rs, err := compileSample(ctx, t, g, ms, *perOp, *seed, io.Discard)
	writeCompileTable(os.Stdout, t.version(), rs)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mutate compile: %v\n", err)
		return exitCode(1)
	}
	return exitCode(0)
}
