// SPDX-License-Identifier: GPL-2.0

package kmem

import (
	"io"
	"os"
	"path/filepath"

	"nlmcast/bench/internal/sample"
	"nlmcast/bench/internal/tapjson"
)

// Record is one round of a memory scene: the counters' change while N
// objects were created and held, in totals (not per object).
type Record struct {
	Kernel  string `json:"kernel"`  // uname -r and -v
	Machine string `json:"machine"` // uname -m
	Image   string `json:"image,omitempty"`
	State   string `json:"state"` // U, P0 or P1
	Boot    int    `json:"boot"`
	Round   int    `json:"round"`
	Scene   string `json:"scene"`
	Object  string `json:"object"` // ObjectRouteSocket or ObjectNetns
	N       int    `json:"n"`      // objects created
	Method  string `json:"method"` // MethodShrink or MethodPlain
	// SettleMS is how long the two readings waited for the counters to
	// stop moving (RCU-deferred frees, namespace teardown).
	SettleMS    int64        `json:"settle_ms"`
	ObjectBytes int64        `json:"object_bytes"`
	SlabBytes   int64        `json:"slab_bytes"`
	MemFree     int64        `json:"memfree_bytes"` // change of MemFree (negative: used)
	Caches      []CacheDelta `json:"caches"`
	// Failed says why the run of the scene that took this record did
	// not pass; such records are kept but left out of the table. ""
	// for a scene that passed.
	Failed string `json:"failed,omitempty"`
}

// Prefix starts a record's TAP diagnostic line, after the "# ".
const Prefix = "memory: "

// Line is r as a TAP diagnostic line without the leading "# ".
func Line(r Record) string { return tapjson.Line(Prefix, r) }

// ReadTAP collects the records in a TAP stream.
func ReadTAP(rd io.Reader) ([]Record, error) { return tapjson.ReadTAP[Record](rd, Prefix) }

// WriteJSONL writes one record per line (memory.jsonl).
func WriteJSONL(w io.Writer, records []Record) error { return tapjson.WriteJSONL(w, records) }

// ReadJSONL reads memory.jsonl.
func ReadJSONL(rd io.Reader) ([]Record, error) { return tapjson.ReadJSONL[Record](rd) }

// NewRecord fills a record's measured fields from d.
func NewRecord(d Delta) Record {
	return Record{ObjectBytes: d.ObjectBytes, SlabBytes: d.SlabBytes, MemFree: d.MemFree, Caches: d.Caches}
}

// File names in a results directory.
const (
	RecordsFile = "memory.jsonl"
	TableFile   = "memory.txt"
)

// WriteDir writes records (memory.jsonl) and their table to the results
// directory dir, and returns the table.
func WriteDir(dir string, records []Record) (string, error) {
	if err := tapjson.WriteFile(filepath.Join(dir, RecordsFile), records); err != nil {
		return "", err
	}
	table := Table(records)
	return table, os.WriteFile(filepath.Join(dir, TableFile), []byte(table), 0o644)
}

// ReadDir reads the memory records of results directory dir.
func ReadDir(dir string) ([]Record, error) {
	return tapjson.ReadFile[Record](filepath.Join(dir, RecordsFile))
}

// Reanalyze is the table of results directory dir's memory records; it
// writes nothing.
func Reanalyze(dir string) (string, error) {
	records, err := ReadDir(dir)
	if err != nil {
		return "", err
	}
	return Table(records), nil
}

// Mark returns records, each of a scene that did not pass (or has no
// verdict) marked with why, as the samples are: verdicts maps a scene to
// "" (passed) or the reason. A nil map marks nothing.
func Mark(records []Record, verdicts map[string]string) []Record {
	if verdicts == nil {
		return records
	}
	for i := range records {
		why, ok := verdicts[records[i].Scene]
		if !ok {
			why = sample.NoResult
		}
		records[i].Failed = why
	}
	return records
}
