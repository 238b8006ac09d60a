// SPDX-License-Identifier: GPL-2.0

package main

import (
	"slices"
	"testing"
)

func TestSplitArgs(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   ", nil},
		{"-v", []string{"-v"}},
		{"  -v  --list\t-x ", []string{"-v", "--list", "-x"}},
		{`--name 'two words'`, []string{"--name", "two words"}},
		{`--name "two words"`, []string{"--name", "two words"}},
		{`a\ b`, []string{"a b"}},
		{`''`, []string{""}},
		{`x"y z"w`, []string{"xy zw"}},
		{`"a \"q\" \\ \n"`, []string{`a "q" \ \n`}},
		{`'no \escape'`, []string{`no \escape`}},
	}
	for _, tt := range tests {
		got, err := splitArgs(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("splitArgs(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestSplitArgsRejectsUnterminated(t *testing.T) {
	for _, in := range []string{`'open`, `"open`, `trailing\`} {
		if got, err := splitArgs(in); err == nil {
			t.Errorf("splitArgs(%q) = %q, want an error", in, got)
		}
	}
}
