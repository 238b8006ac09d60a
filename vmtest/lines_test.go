// SPDX-License-Identifier: GPL-2.0

package main

import (
	"slices"
	"strings"
	"testing"
)

func TestCleanLine(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"ok 1 plain\n", "ok 1 plain"},
		{"ok 1 crlf\r\n", "ok 1 crlf"},
		{"\x1bc\x1b[?7lSeaBIOS (version 1.16)\r\n", "SeaBIOS (version 1.16)"},
		{"\x1b[1;31mred\x1b[0m text", "red text"},
		{"\x1b(Bcharset", "charset"},
		{"\x1b]0;title\x07after", "after"},
		{"\x1b]0;title\x1b\\after", "after"},
		{"# tab\tkept\x00\x08", "# tab\tkept"},
		{"trailing escape \x1b", "trailing escape "},
		{"unfinished \x1b[12", "unfinished "},
		{"", ""},
	}
	for _, tt := range tests {
		if got := cleanLine([]byte(tt.raw)); got != tt.want {
			t.Errorf("cleanLine(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

func TestReadLinesKeepsUnterminatedLastLine(t *testing.T) {
	var got []string
	err := readLines(strings.NewReader("a\r\n\nb\x1bc\nlast"), func(line string) { got = append(got, line) })
	want := []string{"a", "", "b", "last"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("readLines = %q, %v; want %q", got, err, want)
	}
}
