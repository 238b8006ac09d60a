// SPDX-License-Identifier: GPL-2.0

package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"nlmcast/stress/internal/verify"
)

// modeReport is the per-mode summary, printed as diagnostics and as one
// `# stress-json: ` line for machines. Checks is the verdict of the
// mode's own checks ("pass", "fail", "interrupted"); the TAP result adds
// the kernel's health, judged once the mode's namespaces are torn down.
type modeReport struct {
	Mode              string           `json:"mode"`
	Checks            string           `json:"checks"`
	Switch            string           `json:"switch"` // "0", "1", "flipping", "absent"
	DurationS         float64          `json:"duration_s"`
	Interrupted       bool             `json:"interrupted,omitempty"`
	Senders           []senderReport   `json:"senders"`
	Deliveries        map[string]int   `json:"verified_deliveries"` // per receiver kind
	DeliveriesPerS    float64          `json:"verified_deliveries_per_s"`
	SwitchWrites      int64            `json:"switch_writes"`
	SwitchWritesPerS  float64          `json:"switch_writes_per_s"`
	Churn             map[string]int64 `json:"churn_ops"`
	ChurnPerS         float64          `json:"churn_ops_per_s"`
	ChurnMsgsChecked  int64            `json:"churn_msgs_checked"`
	ChurnOverruns     int64            `json:"churn_overruns"`
	Overruns          map[string]int   `json:"enobufs"`                  // per stable receiver kind
	Covered           int              `json:"lost_with_enobufs"`        // fault modes
	Undelivered       int              `json:"lost_before_any_walk"`     // fault modes: losses excused as never sent
	Injected          int64            `json:"injected_failures"`        // fault modes: failslab's count
	CloneFailures     int64            `json:"broadcast_clone_failures"` // fault modes: ENOBUFS that only a failed clone gives
	Shortfalls        []string         `json:"shortfalls,omitempty"`     // minima not reached
	Kmemleak          int              `json:"kmemleak_suspects"`
	NamespacesCreated int64            `json:"namespaces_created"`
	IdleSubscribers   int              `json:"idle_subscribers"`
	Problems          int              `json:"problems"`

	// Fault modes: what proves the messages sent, or never sent (last:
	// .ci/run reads the fields from enobufs to kmemleak_suspects in order).
	Proofs *verify.Proofs `json:"sent_proofs,omitempty"`
	// fixed1 and switch: their notification rate against fixed0's from
	// the same run; switch: its writes against a sysctl like it.
	Pace *paceVerdict `json:"pace,omitempty"`
}

type senderReport struct {
	Name              string       `json:"name"`
	CPU               int          `json:"cpu"`
	Flips             *flipCounts  `json:"flips,omitempty"` // switch writes while each batch was in the kernel
	Faults            *faultCounts `json:"faults,omitempty"`
	Batches           int          `json:"batches"`
	Requests          int          `json:"requests"`
	Notifications     int          `json:"notifications"`
	UserMulticasts    int          `json:"usersock_multicasts"`
	BatchesPerS       float64      `json:"batches_per_s"`
	NotificationsPerS float64      `json:"notifications_per_s"`
}

func perSecond(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(int64(float64(n)/d.Seconds()*10)) / 10
}

func fillReport(r *modeReport, elapsed time.Duration, senders []*sender, c *churnCounts, writes int64) {
	r.DurationS = float64(elapsed.Milliseconds()) / 1000
	for _, s := range senders {
		sr := senderReport{
			Name: s.name, CPU: s.cpu, Batches: s.batches, Requests: s.requests,
			Notifications: len(s.transcript), UserMulticasts: len(s.userTranscript),
			BatchesPerS:       perSecond(int64(s.batches), elapsed),
			NotificationsPerS: perSecond(int64(len(s.transcript)), elapsed),
		}
		if s.writes != nil {
			sr.Flips = &s.flips
		}
		if s.faults {
			sr.Faults = &s.faultCounts
		}
		r.Senders = append(r.Senders, sr)
	}
	var total int64
	for _, v := range r.Deliveries {
		total += int64(v)
	}
	r.DeliveriesPerS = perSecond(total, elapsed)
	r.SwitchWrites, r.SwitchWritesPerS = writes, perSecond(writes, elapsed)
	r.Churn = map[string]int64{
		"socket_open_close": c.SocketOpenClose.Load(),
		"join":              c.Join.Load(),
		"leave":             c.Leave.Load(),
		"rebind":            c.Rebind.Load(),
		"all_nsid_set":      c.AllNSIDSet.Load(),
		"all_nsid_clear":    c.AllNSIDClear.Load(),
		"netns_create":      c.NetnsCreated.Load(),
		"nsid_map":          c.NSIDMapped.Load(),
	}
	var ops int64
	for _, v := range r.Churn {
		ops += v
	}
	r.ChurnPerS = perSecond(ops, elapsed)
	r.ChurnMsgsChecked, r.ChurnOverruns = c.MsgsChecked.Load(), c.Overruns.Load()
	r.NamespacesCreated = c.NetnsCreated.Load()
}

// lines renders the report for humans.
func (r *modeReport) lines() []string {
	var l []string
	l = append(l, fmt.Sprintf("%s: switch %s, %.1fs", r.Mode, r.Switch, r.DurationS))
	for _, s := range r.Senders {
		l = append(l, fmt.Sprintf("  sender %s (CPU %d): %d batches (%.1f/s), %d requests ACKed, %d notifications (%.1f/s), %d usersock multicasts",
			s.Name, s.CPU, s.Batches, s.BatchesPerS, s.Requests, s.Notifications, s.NotificationsPerS, s.UserMulticasts))
		if f := s.Flips; f != nil {
			l = append(l, fmt.Sprintf("    switch flips while a batch was in the kernel: %d of %d batches saw one or more (%.0f%%), per batch %s, at most %d",
				f.WithFlip, f.Batches, percent(f.WithFlip, f.Batches), joinCounts(f.Buckets), f.MaxPerBatch))
		}
		if f := s.Faults; f != nil {
			l = append(l, fmt.Sprintf("    injected failures: sendmsg repeated %d times, %d ACKs lost, %d requests failed, %d notifications of unknown outcome; echoes: %d read, %d ACKed without one, %d in batches with an ENOBUFS",
				f.SendRetries, f.ACKsLost, f.Failed, f.Unsure, f.Echoed, f.NotEchoed, f.EchoesUnknown))
		}
	}
	l = append(l, "  verified deliveries: "+joinCounts(r.Deliveries)+fmt.Sprintf(" (%.1f/s)", r.DeliveriesPerS))
	if r.Injected > 0 || r.Covered > 0 || r.Undelivered > 0 {
		l = append(l, fmt.Sprintf("  injected allocation failures: %d, of which hit the broadcast (ENOBUFS at %s): %d; ENOBUFS per receiver kind: %s; lost with an ENOBUFS to say so: %d, excused as never sent: %d; kmemleak suspects: %d",
			r.Injected, joinKinds(cloneOnlyKinds), r.CloneFailures, joinCounts(r.Overruns), r.Covered, r.Undelivered, r.Kmemleak))
	}
	if p := r.Proofs; p != nil {
		l = append(l, fmt.Sprintf("  proven sent: %d by their senders' echoes (%d of them got by no socket), %d by receipts; proven never sent (ACKed, no echo, no ENOBUFS at the sender): %d; losses excused as never sent: %d",
			p.ByEcho, p.ByEchoOnly, p.ByReceipts, p.NeverSent, r.Undelivered))
	}
	if r.Switch == "flipping" {
		l = append(l, fmt.Sprintf("  switch writes: %d verified (%.1f/s)", r.SwitchWrites, r.SwitchWritesPerS))
	}
	churn := map[string]int{}
	for k, v := range r.Churn {
		churn[k] = int(v)
	}
	l = append(l, "  churn: "+joinCounts(churn)+fmt.Sprintf(" (%.1f ops/s); %d churn messages checked, %d churn overruns (allowed)", r.ChurnPerS, r.ChurnMsgsChecked, r.ChurnOverruns))
	l = append(l, fmt.Sprintf("  namespaces created by churn: %d; idle subscribers: %d; problems: %d",
		r.NamespacesCreated, r.IdleSubscribers, r.Problems))
	return l
}

// joinKinds lists a set of receiver kinds in order.
func joinKinds[V any](kinds map[string]V) string {
	l := make([]string, 0, len(kinds))
	for k := range kinds {
		l = append(l, k)
	}
	sort.Strings(l)
	return strings.Join(l, ", ")
}

func percent(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func joinCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func (r *modeReport) json() string {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Sprintf(`{"error": %q}`, err.Error())
	}
	return string(b)
}
