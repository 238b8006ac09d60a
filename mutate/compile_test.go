// SPDX-License-Identifier: GPL-2.0

package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"nlmcast/mutate/internal/cfunc"
)

// compile builds each mutant's object alone: a compiler error is the
// mutant's, a mutant that compiles to the unmutated object says so, and
// the source is the original afterwards.
func TestCompileSample(t *testing.T) {
	dir := t.TempDir()
	src, build := filepath.Join(dir, "src"), filepath.Join(dir, "build")
	mk := fakeMakefile + `x.o:
	@mkdir -p $(O)
	@grep -q 'use(b)' x.c || { echo "x.c:7:2: error: 'b' set but not used" >&2; exit 2; }
	@sed '/if (0)/{N;d;}' x.c >$(O)/x.o
`
	for path, text := range map[string]string{filepath.Join(src, "x.c"): fakeSource, filepath.Join(src, "Makefile"): mk} {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := cfunc.Mutants("x.c", []byte(fakeSource), []string{"f"})
	if err != nil {
		t.Fatal(err)
	}
	var dels []cfunc.Mutant
	for _, m := range ms {
		if m.Op == "del-call" {
			dels = append(dels, m)
		}
	}
	tree := kernelTree{src: src, build: build, jobs: 1}
	rs, err := compileSample(context.Background(), tree, newGuard(filepath.Join(build, ".mutate")), dels, 10, 1, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	writeCompileTable(&b, "0.0-fake", rs)
	for _, want := range []string{"| del-call | 2 | 1 | 1 |", "f+6:del-call:1 (\"use(b);\" -> \";\"): x.c:7:2: error: 'b' set but not used"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if got, _ := os.ReadFile(filepath.Join(src, "x.c")); string(got) != fakeSource {
		t.Errorf("source not restored:\n%s", got)
	}
}
