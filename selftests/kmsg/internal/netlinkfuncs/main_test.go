// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

const sampleC = `// SPDX-License-Identifier: GPL-2.0
#include <linux/netlink.h>
#define BROKEN_MACRO(x) { if (x) {
/* static int in_comment(void) { */
static const char *s = "int in_string(void) {";
struct netlink_sock {
	int portid;
};
static const struct nla_policy policy[2] = {
	[1] = { .type = NLA_U32 },
};
static DEFINE_MUTEX(lock);
int prototype_only(int a);
static inline int nlk_inline(struct sock *sk)
{
	return sk ? 1 : 0;
}

static void netlink_lock_table(void) __acquires(nl_table_lock)
{
	char c = '{';
}

struct sock *__netlink_lookup(struct netlink_table *table, u32 portid,
			      struct net *net)
{
	struct { int a; } anon = { 1 };
	return NULL;
}
DEFINE_BPF_ITER_FUNC(netlink, struct bpf_iter_meta *meta, struct netlink_sock *sk)

static int netlink_prog_seq_show(struct bpf_prog *prog, void *v)
{
	return 0;
}
#ifdef CONFIG_PROC_FS
static int __net_init netlink_net_init(struct net *net)
{
	return 0;
}
#else
static int __net_init netlink_net_init(struct net *net) { return 0; }
#endif
static int (*handler)(int) = NULL;
`

// Every function defined at file scope, static and inline ones, with an
// attribute after the parameters, after a macro call without ';', is
// found once per definition; a prototype, a struct, an initializer, a
// macro, and braces in comments, strings, characters and #define lines
// are not definitions.
func TestFunctionDefinitions(t *testing.T) {
	got, err := functionDefinitions(sampleC)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"nlk_inline", "netlink_lock_table", "__netlink_lookup", "netlink_prog_seq_show", "netlink_net_init", "netlink_net_init"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("functionDefinitions = %q\nwant %q", got, want)
	}
}

// Braces that do not balance (which the #if branches of a file could
// give) are an error that names the line, not a wrong table.
func TestFunctionDefinitionsUnbalanced(t *testing.T) {
	for src, want := range map[string]string{
		"int f(void)\n{\n}\n}\n": "line 4: '}' closes nothing",
		"#ifdef A\nint f(void)\n{\n#else\nint f(void)\n{\n#endif\n}\n": "1 '{' never closed",
	} {
		if _, err := functionDefinitions(src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", src, err, want)
		}
	}
}

const samplePatch = `From 0 Mon Sep 17 00:00:00 2001
Subject: [PATCH] a series

---
 a.c | 6 +++++-

diff --git a/net/netlink/a.c b/net/netlink/a.c
--- a/net/netlink/a.c
+++ b/net/netlink/a.c
@@ -2,3 +2,7 @@ int one(void)
 {
-	return 1;
+	return two();
 }
+static int two(void)
+{
+	return 2;
+}
-- 
2.39.5
`

// The series' hunks are applied where their old lines are, also when
// the tree has moved them (a stable release away), and only there.
func TestPatchApply(t *testing.T) {
	files, err := parsePatch(samplePatch)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].path != "net/netlink/a.c" || len(files[0].hunks) != 1 {
		t.Fatalf("parsePatch = %+v", files)
	}
	const want = "int one(void)\n{\n\treturn two();\n}\nstatic int two(void)\n{\n\treturn 2;\n}\n"
	for _, prefix := range []string{"", "/* moved */\n\n"} {
		got, err := files[0].apply(prefix + "int one(void)\n{\n\treturn 1;\n}\n")
		if err != nil || got != prefix+want {
			t.Errorf("apply = %q, %v; want %q", got, err, prefix+want)
		}
	}
	if got, err := files[0].apply("int one(void)\n{\n\treturn 3;\n}\n"); err == nil {
		t.Errorf("applied to a tree without its old lines: %q", got)
	}
	if _, err := parsePatch(strings.Replace(samplePatch, "+}\n-- ", "-- ", 1)); err == nil {
		t.Errorf("a hunk one line short was read")
	}
}

// The committed table is what the generator makes from the kernel
// sources: for each kernel whose tree is given, its part of the table
// (the functions, files and labels of that version) is compared.
func TestCommittedTableIsGenerated(t *testing.T) {
	committed, err := os.ReadFile(filepath.Join("..", "..", "netlink_functions.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kernels {
		t.Run(k.version, func(t *testing.T) {
			if _, _, missing := inputs(k); len(missing) > 0 {
				t.Skipf("no Linux %s to compare the table with: set %s", k.version, strings.Join(missing, " and "))
			}
			made := table{}
			source, err := addKernel(made, k)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(committed), "#   "+source+"\n") {
				t.Errorf("netlink_functions.txt was not made from %q: regenerate it (go generate ./selftests/kmsg)", source)
			}
			want, got := rowsOf(made.write(""), k.version), rowsOf(string(committed), k.version)
			if missing, extra := difference(want, got), difference(got, want); len(missing)+len(extra) > 0 {
				t.Errorf("netlink_functions.txt differs from Linux %s's sources: regenerate it (go generate ./selftests/kmsg)\nmissing (%d): %s\nnot in the sources (%d): %s",
					k.version, len(missing), first(missing, 20), len(extra), first(extra, 20))
			}
		})
	}
}

// rowsOf is a table's rows for one version: "name file label", one per
// label of that version.
func rowsOf(text, version string) map[string]bool {
	rows := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		f := strings.Split(l, "\t")
		if strings.HasPrefix(l, "#") || len(f) != 3 {
			continue
		}
		for _, label := range strings.Fields(f[2]) {
			if strings.TrimRight(label, "PU") == version {
				rows[f[0]+" "+f[1]+" "+label] = true
			}
		}
	}
	return rows
}

func difference(a, b map[string]bool) []string {
	var out []string
	for r := range a {
		if !b[r] {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

func first(rows []string, n int) string {
	if len(rows) > n {
		return strings.Join(rows[:n], "; ") + "; ..."
	}
	return strings.Join(rows, "; ")
}

// A function the series adds is labelled P, one it removes U, one both
// trees define the bare version, in the kernels' order.
func TestMergeLabels(t *testing.T) {
	for in, want := range map[string]string{
		"6.1U 6.1P 6.12U 6.12P": "6.1 6.12",
		"6.12P 6.1P":            "6.1P 6.12P",
		"6.1U":                  "6.1U",
		"6.12U 6.12P 6.1P":      "6.1P 6.12",
	} {
		if got := strings.Join(mergeLabels(strings.Fields(in)), " "); got != want {
			t.Errorf("mergeLabels(%s) = %s, want %s", in, got, want)
		}
	}
}
