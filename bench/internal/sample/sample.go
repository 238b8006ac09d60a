// SPDX-License-Identifier: GPL-2.0

// Package sample is the bench's raw measurement record: one JSON object per
// sample, written to samples.jsonl and, from inside a VM, printed as a TAP
// diagnostic line ("# sample: {...}") that travels to the host with the
// rest of the TAP. The host finds the lines again whatever number of "# "
// prefixes the runners in between have added.
package sample

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
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
}

// Prefix starts a sample's TAP diagnostic line, after the "# ".
const Prefix = "sample: "

// Line is s as a TAP diagnostic line without the leading "# ".
func Line(s Sample) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // only plain fields
	}
	return Prefix + string(b)
}

// ParseLine returns the sample in a TAP line, if it holds one.
func ParseLine(line string) (Sample, bool, error) {
	rest := strings.TrimSpace(line)
	for strings.HasPrefix(rest, "#") {
		rest = strings.TrimSpace(rest[1:])
	}
	js, ok := strings.CutPrefix(rest, Prefix)
	if !ok {
		return Sample{}, false, nil
	}
	var s Sample
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		return Sample{}, true, fmt.Errorf("bad sample line %q: %w", line, err)
	}
	return s, true, nil
}

// ReadTAP collects the samples in a TAP stream.
func ReadTAP(r io.Reader) ([]Sample, error) {
	var out []Sample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		s, ok, err := ParseLine(sc.Text())
		if err != nil {
			return out, err
		}
		if ok {
			out = append(out, s)
		}
	}
	return out, sc.Err()
}

// WriteJSONL writes one sample per line.
func WriteJSONL(w io.Writer, samples []Sample) error {
	enc := json.NewEncoder(w)
	for _, s := range samples {
		if err := enc.Encode(s); err != nil {
			return err
		}
	}
	return nil
}

// ReadJSONL reads samples.jsonl.
func ReadJSONL(r io.Reader) ([]Sample, error) {
	var out []Sample
	dec := json.NewDecoder(r)
	for {
		var s Sample
		err := dec.Decode(&s)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("samples line %d: %w", len(out)+1, err)
		}
		out = append(out, s)
	}
}
