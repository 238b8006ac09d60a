// SPDX-License-Identifier: GPL-2.0

package sample

import (
	"bytes"
	"strings"
	"testing"
)

func TestTAPRoundTrip(t *testing.T) {
	want := Sample{Kernel: "6.1.192", State: "P1", Boot: 2, Round: 1, Sample: 3, Scene: "T1-n900-d0",
		N: 900, WallNS: 123456, ThreadNS: 120000, UserNS: 4000, SysNS: 116000, Ops: 2640}
	// The bench prints "# sample: ..."; vmtest's guest runner indents it
	// with one more "# ".
	tap := "TAP version 13\n# " + Line(want) + "\n# # " + Line(want) + "\nok 1 T1-n900-d0\n# sample: {broken\n"
	got, err := ReadTAP(strings.NewReader(tap))
	if err == nil {
		t.Error("a broken sample line was accepted")
	}
	if len(got) != 2 || got[0] != want || got[1] != want {
		t.Fatalf("got %+v, want two copies of %+v", got, want)
	}
	var b bytes.Buffer
	if err := WriteJSONL(&b, got); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSONL(&b)
	if err != nil || len(back) != 2 || back[1] != want {
		t.Errorf("JSONL round trip: %+v, %v", back, err)
	}
}
