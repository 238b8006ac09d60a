// SPDX-License-Identifier: GPL-2.0

// Package tapjson carries records as JSON through TAP: one record is a
// diagnostic line "# PREFIX{json}", which reaches the host with the rest of
// a program's TAP through any number of runners, each of which may add a
// "# " of its own; on the host the records are kept one per line (JSON
// Lines). The bench's samples and memory records both travel this way.
package tapjson

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Line is v as a TAP diagnostic line without the leading "# ".
func Line(prefix string, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // records hold only plain fields
	}
	return prefix + string(b)
}

// Parse returns the record in a TAP line, if it holds one after any number
// of "#" prefixes.
func Parse[T any](line, prefix string) (T, bool, error) {
	var v T
	rest := strings.TrimSpace(line)
	for strings.HasPrefix(rest, "#") {
		rest = strings.TrimSpace(rest[1:])
	}
	js, ok := strings.CutPrefix(rest, prefix)
	if !ok {
		return v, false, nil
	}
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		return v, true, fmt.Errorf("bad record line %q: %w", line, err)
	}
	return v, true, nil
}

// ReadTAP collects the records in a TAP stream.
func ReadTAP[T any](r io.Reader, prefix string) ([]T, error) {
	var out []T
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		v, ok, err := Parse[T](sc.Text(), prefix)
		if err != nil {
			return out, err
		}
		if ok {
			out = append(out, v)
		}
	}
	return out, sc.Err()
}

// WriteJSONL writes one record per line.
func WriteJSONL[T any](w io.Writer, records []T) error {
	enc := json.NewEncoder(w)
	for _, v := range records {
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	return nil
}

// ReadJSONL reads records written by WriteJSONL.
func ReadJSONL[T any](r io.Reader) ([]T, error) {
	var out []T
	dec := json.NewDecoder(r)
	for {
		var v T
		err := dec.Decode(&v)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("line %d: %w", len(out)+1, err)
		}
		out = append(out, v)
	}
}

// ReadFile reads the records a WriteFile wrote to path.
func ReadFile[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out, err := ReadJSONL[T](f)
	if err != nil {
		return out, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// WriteFile writes records to path, one per line, making its directory.
func WriteFile[T any](path string, records []T) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var b bytes.Buffer
	if err := WriteJSONL(&b, records); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
