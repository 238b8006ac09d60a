// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
)

// equivalence is the argument that a mutant cannot change what the kernel
// does: the line it changes, as the tree has it, and why.
type equivalence struct {
	id    string
	code  string   // the original line, trimmed
	unset []string // config options the argument needs off (not =y, not =m)
	// kernels are the versions the argument holds on ("6.1": 6.1.x),
	// where it rests on code elsewhere that other versions change; none:
	// any version whose line is the quoted one.
	kernels []string
	// builds are the builds the argument was made for: "tiny" (tinyconfig
	// and the suite's fragments: mutate prepare, the shared images) and
	// "defconfig" (x86_64_defconfig, virtme-ng's fragment and the suite's
	// config: what NIPA and .ci/run boot).
	builds []string
	reason string
}

// buildKinds are the builds an argument may name. The tiny builds have no
// CONFIG_MODULES, every defconfig build has it: an argument made for one
// kind is never applied on the other.
var buildKinds = []string{"tiny", "defconfig"}

// buildKind names the kind of build a configuration is.
func buildKind(config map[string]bool) string {
	if config["CONFIG_MODULES"] {
		return "defconfig"
	}
	return "tiny"
}

// readEquivalences reads the arguments file: blocks of
//
//	id: FUNC+LINE:OP:N
//	code: the original line, as in the tree
//	unset: CONFIG_A CONFIG_B (optional)
//	kernel: 6.1 (optional: the versions it holds on)
//	builds: tiny defconfig (the builds it was made for: one or both)
//	reason: why the change cannot be seen (more lines indented)
//
// separated by blank lines; '#' lines are comments. An argument counts
// only for a mutant whose line is still the quoted one, and, when it has
// an unset: line, only in a build whose .config has none of those options
// (an argument that rests on code the build leaves out), and, with a
// kernel: line, only on those kernel versions (an argument that rests on
// other code that later versions change).
func readEquivalences(path string) (map[string][]equivalence, error) {
	out := map[string][]equivalence{}
	if path == "" {
		return out, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cur equivalence
	lineNo := 0
	flush := func() error {
		if cur.id == "" && cur.code == "" && cur.reason == "" && cur.unset == nil && cur.kernels == nil && cur.builds == nil {
			return nil
		}
		if cur.id == "" || cur.code == "" || cur.reason == "" || len(cur.builds) == 0 {
			return fmt.Errorf("%s:%d: an entry needs id, code, builds and reason", path, lineNo)
		}
		// One ID can name different lines in different trees (a
		// function's line N on 6.1 and on 6.12): one argument per line.
		for _, e := range out[cur.id] {
			if e.code == cur.code {
				return fmt.Errorf("%s:%d: a second argument for %s on the same line %q", path, lineNo, cur.id, cur.code)
			}
		}
		out[cur.id] = append(out[cur.id], cur)
		cur = equivalence{}
		return nil
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lineNo++
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "#"):
		case strings.TrimSpace(l) == "":
			if err := flush(); err != nil {
				return nil, err
			}
		case strings.HasPrefix(l, "id:"):
			cur.id = strings.TrimSpace(strings.TrimPrefix(l, "id:"))
		case strings.HasPrefix(l, "code:"):
			cur.code = strings.TrimSpace(strings.TrimPrefix(l, "code:"))
		case strings.HasPrefix(l, "unset:"):
			cur.unset = strings.Fields(strings.TrimPrefix(l, "unset:"))
			for _, o := range cur.unset {
				if !strings.HasPrefix(o, "CONFIG_") {
					return nil, fmt.Errorf("%s:%d: unset: %q is not a CONFIG_ option", path, lineNo, o)
				}
			}
		case strings.HasPrefix(l, "builds:"):
			cur.builds = strings.Fields(strings.TrimPrefix(l, "builds:"))
			for _, b := range cur.builds {
				if !slices.Contains(buildKinds, b) {
					return nil, fmt.Errorf("%s:%d: builds: %q is none of %s", path, lineNo, b, strings.Join(buildKinds, ", "))
				}
			}
		case strings.HasPrefix(l, "kernel:"):
			cur.kernels = strings.Fields(strings.TrimPrefix(l, "kernel:"))
		case strings.HasPrefix(l, "reason:"):
			cur.reason = strings.TrimSpace(strings.TrimPrefix(l, "reason:"))
		case (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")) && cur.reason != "":
			cur.reason += " " + strings.TrimSpace(l)
		default:
			return nil, fmt.Errorf("%s:%d: unexpected line %q", path, lineNo, l)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, flush()
}

// configSet returns the options of a .config that are built in or modular.
func configSet(dotConfig string) (map[string]bool, error) {
	b, err := os.ReadFile(dotConfig)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if name, val, ok := strings.Cut(l, "="); ok && strings.HasPrefix(name, "CONFIG_") && (val == "y" || val == "m") {
			set[name] = true
		}
	}
	return set, nil
}

// equivalenceFor returns the argument of es for the mutant's source line
// code in a build with config of kernel version kernel, or why none
// applies.
func equivalenceFor(es []equivalence, code string, config map[string]bool, kernel string) (_ equivalence, why string, ok bool) {
	var whys []string
	for _, e := range es {
		why, ok := e.applies(code, config, kernel)
		if ok {
			return e, "", true
		}
		whys = append(whys, why)
	}
	return equivalence{}, strings.Join(whys, "; "), false
}

// applies says whether e's argument holds for mutant source line code in a
// build with config of kernel version kernel, and if not, why.
func (e equivalence) applies(code string, config map[string]bool, kernel string) (why string, ok bool) {
	if e.code != code {
		return fmt.Sprintf("the equivalence argument quotes %q, the tree has %q", e.code, code), false
	}
	if kind := buildKind(config); !slices.Contains(e.builds, kind) {
		return fmt.Sprintf("the equivalence argument was made for the %s build, this is a %s build", strings.Join(e.builds, " and "), kind), false
	}
	for _, o := range e.unset {
		if config[o] {
			return fmt.Sprintf("the equivalence argument needs %s off, the build has it", o), false
		}
	}
	if len(e.kernels) > 0 && !slices.ContainsFunc(e.kernels, func(v string) bool {
		return kernel == v || strings.HasPrefix(kernel, v+".")
	}) {
		return fmt.Sprintf("the equivalence argument holds on kernel %s, the tree is %s", strings.Join(e.kernels, ", "), kernel), false
	}
	return "", true
}

// argue makes rec, a survivor, equivalent when one of equiv's arguments
// for its ID holds for its source line, the build's config and kernel
// version; why says why none did ("" when it has none, or it is no
// survivor).
func (rec *record) argue(equiv map[string][]equivalence, config map[string]bool, kernel string) (applied bool, why string) {
	es, ok := equiv[rec.ID]
	if rec.Status != statusSurvived || !ok {
		return false, ""
	}
	e, why, ok := equivalenceFor(es, rec.Source, config, kernel)
	if !ok {
		return false, why
	}
	rec.Status, rec.Equivalence = statusEquivalent, e.reason
	return true, ""
}
