// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"nlmcast/selftests/kmsg"
)

// health watches the kernel log and the taint mask from the program's
// start. A background poll keeps /dev/kmsg from overwriting records during
// a long mode; take hands over what was found since the last take, so each
// report fails the mode during which it was logged.
type health struct {
	mu      sync.Mutex
	w       *kmsg.Watcher
	found   []string
	notes   []string // kmsg.Sift's lines on the reports, known and new
	missed  uint64
	stop    chan struct{}
	stopped sync.WaitGroup
}

// openHealth starts watching; when the kernel log cannot be read it says
// why, once, and the program goes on without the watch.
func openHealth() (*health, string) {
	w, err := kmsg.Open()
	if err != nil {
		return nil, fmt.Sprintf("kernel health: not watched: %v", err)
	}
	h := &health{w: w, stop: make(chan struct{})}
	h.stopped.Add(1)
	go func() {
		defer h.stopped.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-t.C:
				h.poll()
			}
		}
	}()
	return h, ""
}

func (h *health) poll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range kmsg.Sift(h.w.Poll(), func(format string, args ...any) { h.notes = append(h.notes, fmt.Sprintf(format, args...)) }) {
		h.found = append(h.found, render(r))
	}
}

// render is a report's title line and its first lines, for the diagnostics.
func render(r kmsg.Report) string {
	var b strings.Builder
	b.WriteString(r.String())
	for i, l := range r.Lines {
		if i == 8 {
			fmt.Fprintf(&b, "\n  ... (%d more lines)", len(r.Lines)-i)
			break
		}
		b.WriteString("\n  " + l)
	}
	return b.String()
}

// take polls once more and returns the reports found since the last take,
// and a note: on the reports (known ones, new ones' fingerprints), and
// when the watch lost records or stopped working.
func (h *health) take() (reports []string, note string) {
	h.poll()
	h.mu.Lock()
	defer h.mu.Unlock()
	reports, h.found = h.found, nil
	notes := h.notes
	h.notes = nil
	switch m := h.w.Missed(); {
	case h.w.Err() != nil:
		notes = append(notes, fmt.Sprintf("kernel health: the watch stopped: %v", h.w.Err()))
	case m > h.missed:
		notes = append(notes, fmt.Sprintf("kernel health: %d kernel log records were overwritten before they were read; a report among them went unseen", m-h.missed))
		h.missed = m
	}
	return reports, strings.Join(notes, "\n")
}

func (h *health) close() {
	close(h.stop)
	h.stopped.Wait()
	h.w.Close()
}
