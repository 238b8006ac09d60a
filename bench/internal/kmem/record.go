// SPDX-License-Identifier: GPL-2.0

package kmem

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

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

// WriteDir writes records and their table to the results directory dir,
// or with records == nil re-reads dir's records and rewrites the table.
// It returns the table.
func WriteDir(dir string, records []Record) (string, error) {
	path := filepath.Join(dir, RecordsFile)
	if records == nil {
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		records, err = ReadJSONL(f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
	} else {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		var b bytes.Buffer
		if err := WriteJSONL(&b, records); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			return "", err
		}
	}
	table := Table(records)
	return table, os.WriteFile(filepath.Join(dir, TableFile), []byte(table), 0o644)
}
