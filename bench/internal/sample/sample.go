// SPDX-License-Identifier: GPL-2.0

// Package sample is the bench's raw measurement record: one JSON object per
// sample, written to samples.jsonl and, from inside a VM, printed as a TAP
// diagnostic line ("# sample: {...}") that travels to the host with the
// rest of the TAP. The host finds the lines again whatever number of "# "
// prefixes the runners in between have added.
package sample

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"

	"nlmcast/bench/internal/tapjson"
)

// Sample is one timed work unit.
type Sample struct {
	Kernel string `json:"kernel"` // uname -r and -v of the measured kernel
	Image  string `json:"image,omitempty"`
	State  string `json:"state"` // U, P0 or P1
	Boot   int    `json:"boot"`
	Round  int    `json:"round"`
	Sample int    `json:"sample"` // 0 is the round's warm-up
	Warmup bool   `json:"warmup,omitempty"`
	Scene  string `json:"scene"`
	N      int    `json:"n"` // foreign (or local, for C2) candidates
	D      int    `json:"d"` // sockets per foreign namespace, 0: one namespace
	Icount bool   `json:"icount,omitempty"`
	// Times in nanoseconds of the guest clock: under QEMU -icount
	// shift=0 one nanosecond is one guest instruction.
	WallNS   int64 `json:"wall_ns"`
	ThreadNS int64 `json:"thread_ns"` // CLOCK_THREAD_CPUTIME_ID of the sender(s)
	UserNS   int64 `json:"user_ns"`   // getrusage(RUSAGE_THREAD) user time
	SysNS    int64 `json:"sys_ns"`    // getrusage(RUSAGE_THREAD) system time
	Ops      int   `json:"ops"`       // requests (or option changes) in the unit
	// CPUs is how many CPUs the bench could run on (its affinity mask),
	// Arch its GOARCH; 0 and "": not recorded (samples of an older bench).
	CPUs int    `json:"cpus,omitempty"`
	Arch string `json:"arch,omitempty"`
	// Failed says why the run of the scene that took this sample did not
	// pass (its result line, or the check that failed): such samples are
	// kept as measured but left out of the analysis. "" for a scene
	// that passed.
	Failed string `json:"failed,omitempty"`
}

// NotPassed is the Failed text of a scene whose result was not a plain
// ok: what the result says ("not ok", "SKIP") and why, when known.
func NotPassed(what, why string) string {
	if why == "" {
		return what
	}
	return what + ": " + why
}

// NoResult is the Failed text of a scene whose run ended without a result
// line (the guest was killed, the program died).
const NoResult = "no result line: the run ended during the scene"

// Prefix starts a sample's TAP diagnostic line, after the "# ".
const Prefix = "sample: "

// Line is s as a TAP diagnostic line without the leading "# ".
func Line(s Sample) string { return tapjson.Line(Prefix, s) }

// parseLine returns the sample in a TAP line, if it holds one.
func parseLine(line string) (Sample, bool, error) { return tapjson.Parse[Sample](line, Prefix) }

// TAP is what one run's TAP stream holds for the bench.
type TAP struct {
	Samples []Sample
	// Results maps each scene with a result line to "" (ok) or why it
	// did not pass (NotPassed).
	Results map[string]string
	// Malformed are the sample lines that hold no sample (a guest killed
	// in the middle of a line): each is left out alone.
	Malformed []string
}

// resultLine is a TAP result: "ok 3 NAME", "not ok 3 NAME # why time=12ms",
// "ok 3 NAME # SKIP why time=12ms".
var resultLine = regexp.MustCompile(`^(not )?ok [0-9]+ (\S+)(?: # (.*))?$`)

var timeDirective = regexp.MustCompile(` ?time=[0-9]+ms$`)

// ReadTAP collects the samples and scene results of program (its TAP
// result names are program.SCENE) in a TAP stream, at any nesting depth.
// The last diagnostic a scene printed ("SCENE: file.go:12: ...") stands for
// the reason of a "not ok" whose line gives none (a failed check). Only a
// read error is an error.
func ReadTAP(r io.Reader, program string) (TAP, error) {
	t := TAP{Results: map[string]string{}}
	lastDiag := map[string]string{}
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			t.line(strings.TrimRight(line, "\r\n"), program, lastDiag)
		}
		if err == io.EOF {
			return t, nil
		}
		if err != nil {
			return t, err
		}
	}
}

func (t *TAP) line(line, program string, lastDiag map[string]string) {
	s, ok, err := parseLine(line)
	switch {
	case err != nil:
		t.Malformed = append(t.Malformed, line)
		return
	case ok:
		t.Samples = append(t.Samples, s)
		return
	}
	rest := strings.TrimSpace(line)
	diag := false
	for strings.HasPrefix(rest, "#") {
		rest, diag = strings.TrimSpace(rest[1:]), true
	}
	m := resultLine.FindStringSubmatch(rest)
	if m == nil || !strings.HasPrefix(m[2], program+".") {
		if diag {
			if scene, msg, ok := strings.Cut(rest, ": "); ok {
				lastDiag[scene] = msg
			}
		}
		return
	}
	scene := strings.TrimPrefix(m[2], program+".")
	why := timeDirective.ReplaceAllString(m[3], "")
	switch {
	case m[1] != "":
		if why == "" {
			why = lastDiag[scene]
		}
		t.Results[scene] = NotPassed("not ok", why)
	case why == "":
		t.Results[scene] = ""
	default:
		what, why, _ := strings.Cut(why, " ")
		t.Results[scene] = NotPassed(what, why)
	}
}

// Marked returns the samples, those of a scene that did not pass (or has
// no result line) marked Failed.
func (t TAP) Marked() []Sample {
	out := make([]Sample, len(t.Samples))
	for i, s := range t.Samples {
		if s.Failed == "" {
			why, ok := t.Results[s.Scene]
			if !ok {
				why = NoResult
			}
			s.Failed = why
		}
		out[i] = s
	}
	return out
}

// WriteJSONL writes one sample per line.
func WriteJSONL(w io.Writer, samples []Sample) error { return tapjson.WriteJSONL(w, samples) }

// ReadJSONL reads samples.jsonl.
func ReadJSONL(r io.Reader) ([]Sample, error) {
	out, err := tapjson.ReadJSONL[Sample](r)
	if err != nil {
		return out, fmt.Errorf("samples %w", err)
	}
	return out, nil
}
