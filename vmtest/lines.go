// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bufio"
	"errors"
	"io"
	"strings"
)

// readLines calls fn with every line of r, cleaned by cleanLine; a last line
// without a newline counts too. It returns at EOF or on a read error.
func readLines(r io.Reader, fn func(line string)) error {
	br := bufio.NewReader(r)
	for {
		raw, err := br.ReadBytes('\n')
		if len(raw) > 0 {
			fn(cleanLine(raw))
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// cleanLine drops the line ending, carriage returns, terminal escape
// sequences (SeaBIOS clears the screen with "ESC c" and turns off line
// wrapping with "ESC[?7l") and other control characters except tabs.
func cleanLine(raw []byte) string {
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == 0x1b:
			i = skipEscape(raw, i)
		case c == '\t' || c >= 0x20 && c != 0x7f:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// skipEscape returns the index of the last byte of the escape sequence that
// starts at raw[esc].
func skipEscape(raw []byte, esc int) int {
	i := esc + 1
	if i >= len(raw) {
		return esc
	}
	switch raw[i] {
	case '[': // CSI: parameter and intermediate bytes, then a final byte
		for i++; i < len(raw); i++ {
			if raw[i] >= 0x40 && raw[i] <= 0x7e {
				return i
			}
		}
		return len(raw) - 1
	case ']': // OSC: up to BEL or ESC \
		for i++; i < len(raw); i++ {
			if raw[i] == 0x07 {
				return i
			}
			if raw[i] == 0x1b && i+1 < len(raw) && raw[i+1] == '\\' {
				return i + 1
			}
		}
		return len(raw) - 1
	default: // intermediate bytes, then a final byte, as in "ESC c" or "ESC ( B"
		for ; i < len(raw) && raw[i] >= 0x20 && raw[i] <= 0x2f; i++ {
		}
		return min(i, len(raw)-1)
	}
}
