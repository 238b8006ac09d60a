// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// buildConfigs are the four builds the arguments are checked against:
// testdata/configs/KIND-VERSION.config, the options each sets.
func buildConfigs(t *testing.T) map[[2]string]map[string]bool {
	t.Helper()
	out := map[[2]string]map[string]bool{}
	for _, kind := range buildKinds {
		for _, v := range []string{"6.1", "6.12"} {
			c, err := configSet(filepath.Join("testdata", "configs", kind+"-"+v+".config"))
			if err != nil {
				t.Fatal(err)
			}
			if got := buildKind(c); got != kind {
				t.Fatalf("%s-%s.config is a %s build by its options", kind, v, got)
			}
			out[[2]string{kind, v}] = c
		}
	}
	return out
}

// Every argument names the builds it was made for, and on each of them
// (for each kernel version it holds on) its unset: options are off, so
// that it applies there; on a build it does not name, it never applies.
func TestEquivalenceArgumentsHoldOnTheBuildsTheyName(t *testing.T) {
	configs := buildConfigs(t)
	eq, err := readEquivalences("equivalent.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for id, es := range eq {
		for _, e := range es {
			n++
			versions := e.kernels
			if len(versions) == 0 {
				versions = []string{"6.1", "6.12"}
			}
			for _, kind := range buildKinds {
				for _, v := range versions {
					c, ok := configs[[2]string{kind, v}]
					if !ok {
						continue
					}
					why, applies := e.applies(e.code, c, v+".0")
					if claimed := slices.Contains(e.builds, kind); claimed != applies {
						t.Errorf("%s (%q): builds: %s, on the %s %s build: applies %v (%s)", id, e.code, strings.Join(e.builds, " "), v, kind, applies, why)
					}
				}
			}
		}
	}
	if n < 50 {
		t.Errorf("only %d arguments read", n)
	}
}

// The check fires: an argument for the tiny build alone is not applied
// on a defconfig build, and one naming defconfig whose unset: option
// defconfig sets is caught.
func TestEquivalenceBuildsCheckFires(t *testing.T) {
	configs := buildConfigs(t)
	tinyOnly := equivalence{id: "x+1:del-call:1", code: "x();", builds: []string{"tiny"}, reason: "r"}
	if why, ok := tinyOnly.applies("x();", configs[[2]string{"defconfig", "6.1"}], "6.1.192"); ok || !strings.Contains(why, "made for the tiny build") {
		t.Errorf("a tiny-only argument on defconfig: applies %v (%s)", ok, why)
	}
	if _, ok := tinyOnly.applies("x();", configs[[2]string{"tiny", "6.1"}], "6.1.192"); !ok {
		t.Error("a tiny-only argument does not apply on the tiny build")
	}
	wrong := equivalence{id: "x+1:del-call:1", code: "x();", unset: []string{"CONFIG_NETFILTER"}, builds: []string{"tiny", "defconfig"}, reason: "r"}
	if _, ok := wrong.applies("x();", configs[[2]string{"defconfig", "6.1"}], "6.1.192"); ok {
		t.Error(fmt.Sprintf("an argument needing CONFIG_NETFILTER off applies on defconfig, which sets it: the test above would not catch %+v", wrong))
	}
}
