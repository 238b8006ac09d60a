// SPDX-License-Identifier: GPL-2.0

// Package verify judges what the stress program's receivers got against
// what its senders' acknowledged requests imply. It is pure logic: messages
// in, readable problems out.
//
// A stable receiver must hold, for every sender it can see, exactly the
// sender's transcript restricted to the receiver's groups, in the same
// order, each message tagged with the nsid under which the receiver's
// namespace knows the sender (or with no nsid for a local sender). A churn
// socket's membership changes all the time, so it is judged message by
// message: no group it never joined, no namespace it cannot see.
//
// Where the kernel's allocations are made to fail (Faults), a receiver may
// miss a message, but only as the kernel says it does: a failed clone in
// do_one_broadcast() overruns the receiver (netlink_overrun(): ENOBUFS at
// its next recvmsg, and every delivery dropped until its queue is read
// empty), and a failed nlmsg_new() reaches every subscriber of the group
// in the sender's namespace through netlink_set_err() (ENOBUFS too) and
// no one elsewhere. So every missing message must be covered by an
// ENOBUFS in the stream, at a place and time where the failure could have
// come from, or be one that was never sent and that this receiver cannot
// be told about; no duplicate, no reordering, no wrong nsid ever. A
// message is proven sent when some socket got it, or when its sender read
// its echo (NLM_F_ECHO: nlmsg_notify() unicasts the skb it has just
// multicast back to the requester, after the walk).
package verify

import (
	"fmt"
	"sort"
	"strings"
)

// Msg is one notification as a sender predicts it and a receiver sees it.
type Msg struct {
	Type   uint16
	Seq    uint32
	Pid    uint32
	Group  uint32 // from NETLINK_PKTINFO
	Detail string // payload summary (address, route, ifindex)
}

func (m Msg) String() string {
	return fmt.Sprintf("type %d seq %d pid %d group %d [%s]", m.Type, m.Seq, m.Pid, m.Group, m.Detail)
}

// Tag is the nsid control message a copy carries: none for a local
// sender, the id of the source namespace for a foreign one.
type Tag struct {
	HasNSID bool
	NSID    int32
}

// Local is the tag of a copy from the receiver's own namespace.
var Local = Tag{}

// NSID is the tag of a copy from a peer the receiver's namespace calls id.
func NSID(id int32) Tag { return Tag{HasNSID: true, NSID: id} }

func (t Tag) String() string {
	if !t.HasNSID {
		return "no nsid"
	}
	return fmt.Sprintf("nsid %d", t.NSID)
}

// Event says what an entry of a receiver's stream is.
type Event uint8

const (
	Message Event = iota // a message, with its tag
	Overrun              // recvmsg failed with ENOBUFS
	// Drained is a recvmsg that found the queue empty: everything read
	// after it was queued after it, and it ended any overrun (the kernel
	// clears NETLINK_S_CONGESTED when it finds the queue empty).
	Drained
)

// Got is one entry of a receiver's stream: a message it read, with its
// tag, or an Overrun or Drained event. At is the recvmsg() call that read
// it (every message of one datagram has the same).
type Got struct {
	Msg
	Tag   Tag
	Event Event
	At    Span
}

// Span is when something happened on the run's clock, a counter that every
// thread reads in one order: after From, before To. The zero Span says
// nothing: it bounds nothing.
type Span struct{ From, To int64 }

func (s Span) known() bool { return s != Span{} }

// Receiver is what a stable receiver is entitled to.
type Receiver struct {
	Name   string
	Groups []uint32
	// Sees maps a sender's index to the tag its messages carry here.
	// A sender missing from Sees is invisible: nothing of it may arrive.
	Sees map[int]Tag
	// SetErrMisses says netlink_set_err() does not reach the receiver
	// for its senders' messages (a NETLINK_ROUTE socket in another
	// namespace than theirs): under Faults, a message no receiver got
	// (its nlmsg_new() failed) may be missing here with no ENOBUFS.
	SetErrMisses bool
}

// Faults is what a run whose allocations are made to fail knows beyond
// the senders' transcripts.
type Faults struct {
	// Delivered holds, for every message of a sender some receiver got,
	// the most copies of it one receiver got from that sender (a message
	// can repeat: RTM_NEWSTATS of lo, in every sender's namespace alike).
	// Copies that no receiver got may never have been sent (their
	// nlmsg_new() failed). CountDelivered fills it.
	Delivered map[FromSender]int
	// Unsure holds the messages of requests whose outcome the sender
	// cannot know (the ACK was lost, the request failed, or its effect
	// depends on such a request): when no receiver got one, it is owed
	// to no one; when one did, it is owed as any other.
	Unsure map[Msg]bool
	// Sent holds, per sender, when each message of its transcript was
	// broadcast (the sendmsg() of its request: rtnetlink notifies inside
	// it), aligned with the transcript. A sender without it, or a zero
	// Span, leaves the time of a loss unbounded.
	Sent map[int][]Span
	// Echoes holds what each sender's own socket showed of the messages
	// the kernel echoes to it (Echoed or NotEchoed); a message missing
	// from it is EchoUnknown.
	Echoes map[FromSender]Echo
}

// Echo is what a sender's own socket shows of one notification it asked
// the kernel to echo (NLM_F_ECHO). nlmsg_notify() takes a reference on
// the skb it multicasts and, once the walk is done, unicasts that same
// skb to the requester (nlmsg_unicast(): no allocation that can fail), so
// an echo is read only if nlmsg_new() succeeded and the walk ran; the
// unicast is lost only to the sender's own overrun, which its socket
// reports as an ENOBUFS.
type Echo uint8

const (
	// EchoUnknown: the kernel echoes no such message (no request's
	// nlmsghdr reaches its rtnl_notify()), or an ENOBUFS on the sender's
	// socket may have cost the echo.
	EchoUnknown Echo = iota
	// Echoed: the sender read the echo, before its request's ACK: the
	// walk ran for the message.
	Echoed
	// NotEchoed: the request's ACK was read, with no echo before it and
	// no ENOBUFS on the sender's socket: nlmsg_new() failed (or the
	// request notified nothing), the message was never sent.
	NotEchoed
)

// sentByEcho says the sender's echo proves m was sent.
func (f *Faults) sentByEcho(sender int, m Msg) bool {
	return f.Echoes[FromSender{sender, m}] == Echoed
}

// Proofs counts the messages of the senders' transcripts proven sent, and
// proven never sent.
type Proofs struct {
	ByEcho       int `json:"echo"`           // the sender read the echo
	ByReceipts   int `json:"receipts"`       // some socket got it (copies alike: as many as one socket got)
	ByEchoOnly   int `json:"echo_only"`      // echoed, and no socket got it
	NeverSent    int `json:"not_echoed"`     // ACKed with no echo and no ENOBUFS on the sender: never sent
	Inconsistent int `json:"not_echoed_got"` // of those, messages some socket got nonetheless
}

// Proofs counts, over transcripts (transcripts[i] is sender i's), the
// messages proven sent by their echo and by receipts, and the messages
// their senders' echoes say were never sent. Such a message was never
// multicast either (the echo is the multicast skb itself): a socket that
// got it contradicts nlmsg_notify(), and is a problem.
func (f *Faults) Proofs(names []string, transcripts [][]Msg) (Proofs, []string) {
	var p Proofs
	var problems []string
	for s, tr := range transcripts {
		count := map[Msg]int{}
		for _, m := range tr {
			count[m]++
		}
		for m, n := range count {
			k := FromSender{s, m}
			got := min(n, f.Delivered[k])
			p.ByReceipts += got
			switch f.Echoes[k] {
			case Echoed:
				p.ByEcho++
				if got == 0 {
					p.ByEchoOnly++
				}
			case NotEchoed:
				p.NeverSent++
				if got == 0 {
					continue
				}
				if p.Inconsistent++; p.Inconsistent <= maxShown {
					problems = append(problems, fmt.Sprintf("sender %s: %s was received by a socket, though its request was ACKed with no echo before the ACK and no ENOBUFS on the sender's socket: "+
						"nlmsg_notify() multicasts and echoes the same skb, so the echo was lost without an error", name(names, s), m))
				}
			}
		}
	}
	if p.Inconsistent > maxShown {
		problems = append(problems, fmt.Sprintf("%d messages received though their senders' echoes say they were never sent, in all", p.Inconsistent))
	}
	return p, problems
}

// FromSender is a message of one sender.
type FromSender struct {
	Sender int
	Msg    Msg
}

// CountDelivered adds to f.Delivered what receiver r got: per sender it
// can see (told apart by their tags), the copies of each message.
func (f *Faults) CountDelivered(r Receiver, got []Got) {
	byTag := map[Tag]int{}
	for s, tag := range r.Sees {
		byTag[tag] = s
	}
	copies := map[FromSender]int{}
	for _, g := range got {
		if s, ok := byTag[g.Tag]; ok && g.Event == Message {
			copies[FromSender{s, g.Msg}]++
		}
	}
	for k, n := range copies {
		f.Delivered[k] = max(f.Delivered[k], n)
	}
}

// Report is the verdict on one receiver.
type Report struct {
	Verified    int      // messages that matched their expected place
	Overruns    int      // ENOBUFS in its stream
	Covered     int      // Faults: missing messages an ENOBUFS accounts for
	Undelivered int      // Faults: missing messages excused as never sent
	Problems    []string // empty when the receiver is exact
}

// maxShown bounds the examples of one kind of problem per sender.
const maxShown = 3

// Check compares got with what r is entitled to from transcripts
// (transcripts[i] is sender i's notifications, in the order its
// acknowledged requests caused them; names[i] names sender i). Without
// faults (nil) the receiver must be exact and never overrun; with them,
// missing messages must be accounted for (see the package comment).
func Check(r Receiver, names []string, transcripts [][]Msg, got []Got, faults *Faults) Report {
	var rep Report
	groups := map[uint32]bool{}
	for _, g := range r.Groups {
		groups[g] = true
	}
	byTag := map[Tag]int{}
	for s, tag := range r.Sees {
		if other, dup := byTag[tag]; dup {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s: senders %s and %s both carry %s here: the run cannot tell them apart", r.Name, names[other], names[s], tag))
		}
		byTag[tag] = s
	}
	perSender := map[int][]Msg{}
	at := map[int][]int{} // stream positions of perSender's messages
	invisible, wrongGroup := 0, 0
	for i, g := range got {
		switch g.Event {
		case Overrun:
			rep.Overruns++
			if faults == nil {
				rep.Problems = append(rep.Problems, fmt.Sprintf("%s: ENOBUFS at #%d: its queue overran and the kernel dropped notifications, "+
					"though no allocation was made to fail: its drainer did not keep up, so it cannot be judged", r.Name, i))
			}
			continue
		case Drained:
			continue
		}
		s, ok := byTag[g.Tag]
		if !ok {
			if invisible < maxShown {
				rep.Problems = append(rep.Problems, fmt.Sprintf("%s: message #%d from a namespace it cannot see (%s): %s", r.Name, i, g.Tag, g.Msg))
			}
			invisible++
			continue
		}
		if !groups[g.Group] {
			if wrongGroup < maxShown {
				rep.Problems = append(rep.Problems, fmt.Sprintf("%s: message #%d on group %d, which it never joined: %s", r.Name, i, g.Group, g.Msg))
			}
			wrongGroup++
			continue
		}
		perSender[s] = append(perSender[s], g.Msg)
		at[s] = append(at[s], i)
	}
	if invisible > maxShown {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%s: %d messages from namespaces it cannot see in all", r.Name, invisible))
	}
	if wrongGroup > maxShown {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%s: %d messages on groups it never joined in all", r.Name, wrongGroup))
	}
	senders := make([]int, 0, len(r.Sees))
	for s := range r.Sees {
		senders = append(senders, s)
	}
	sort.Ints(senders)
	for _, s := range senders {
		want, idx := filterAt(transcripts[s], groups)
		where := fmt.Sprintf("%s, from sender %s (%s)", r.Name, names[s], r.Sees[s])
		if faults == nil {
			n, problems := compare(where, want, perSender[s])
			rep.Verified += n
			rep.Problems = append(rep.Problems, problems...)
			continue
		}
		silent := r.SetErrMisses && r.Sees[s].HasNSID
		sent := make([]Span, len(want))
		if all := faults.Sent[s]; all != nil {
			for k, i := range idx {
				if i < len(all) {
					sent[k] = all[i]
				}
			}
		}
		f := compareFaulty(where, s, want, sent, perSender[s], at[s], got, faults, silent)
		rep.Verified += f.Verified
		rep.Covered += f.Covered
		rep.Undelivered += f.Undelivered
		rep.Problems = append(rep.Problems, f.Problems...)
	}
	return rep
}

// compareFaulty checks one sender's messages at a receiver whose
// deliveries may fail: got (read at stream positions pos of stream) must
// be want with some messages left out, in order, with no duplicate; and
// each message left out must be covered by an ENOBUFS in its window, or
// be one no receiver got and whose echo its sender did not read (unsure,
// or silent: netlink_set_err() does not reach this receiver).
//
// The window of a missing message m: the failure that lost it came after
// the message before it was queued, and that message was queued after the
// last Drained before it was read; the ENOBUFS is read at the first
// recvmsg after the failure, so before the message after m is read. A
// message that occurs more than once in want (RTM_NEWSTATS of the same
// device) cannot say which of its copies it is: matched to the earliest
// place it fits, a copy is never placed later than it truly is, and the
// copies left over are the latest. So the window starts at the last
// message before m that occurs once in want (an anchor: a request's seq,
// an address), and ends at the first message matched after m: it holds
// the true window.
//
// An ENOBUFS also covers only the losses of its own overrun, in time
// (sent[j] is when want[j] was broadcast). netlink_overrun() sets sk_err
// and NETLINK_S_CONGESTED; every delivery is then dropped
// (netlink_broadcast_deliver() refuses a congested socket) until a
// recvmsg() leaves the queue empty (netlink_rcv_wake() clears the bit),
// and the next recvmsg() returns the error first (sock_error() before
// the queue). So the overrun an ENOBUFS at #e reports began after the
// recvmsg() of #e-1 began, and ended, at the latest, when the first
// empty read after #e returned; netlink_set_err()'s ENOBUFS (a failed
// nlmsg_new()) lies inside that too. A loss broadcast wholly outside it
// is not this ENOBUFS's, however close in the stream.
func compareFaulty(where string, sender int, want []Msg, sent []Span, got []Msg, pos []int, stream []Got, f *Faults, silent bool) Report {
	var rep Report
	add := func(format string, a ...any) {
		rep.Problems = append(rep.Problems, where+": "+fmt.Sprintf(format, a...))
	}
	count := map[Msg]int{}
	for _, m := range want {
		count[m]++
	}
	// Match got to want in order, each message to its earliest place
	// after the previous match.
	readAt := make([]int, len(want)) // stream position of want[j]'s copy, or -1
	for j := range readAt {
		readAt[j] = -1
	}
	next, bad := 0, 0
	for i, m := range got {
		j := next
		for j < len(want) && want[j] != m {
			j++
		}
		if j == len(want) {
			if bad < maxShown {
				kind := "never sent"
				if count[m] > 0 {
					kind = "a duplicate, or out of order"
				}
				add("message #%d is %s: %s", pos[i], kind, m)
			}
			bad++
			continue
		}
		readAt[j] = pos[i]
		next = j + 1
	}
	if bad > maxShown {
		add("%d messages duplicated, out of order or never sent in all", bad)
	}
	lastDrainedBefore := func(p int) int {
		for k := p - 1; k >= 0; k-- {
			if stream[k].Event == Drained {
				return k
			}
		}
		return -1
	}
	// covers says the ENOBUFS at e can report a loss broadcast in span.
	covers := func(e int, span Span) bool {
		if !span.known() {
			return true
		}
		if e > 0 && stream[e-1].At.known() && span.To <= stream[e-1].At.From {
			return false // broadcast before the read before the ENOBUFS began
		}
		for k := e + 1; k < len(stream); k++ {
			if stream[k].Event == Drained {
				return !stream[k].At.known() || span.From < stream[k].At.To
			}
		}
		return true
	}
	overrunIn := func(lo, hi int, span Span) bool {
		for k := lo + 1; k < hi; k++ {
			if stream[k].Event == Overrun && covers(k, span) {
				return true
			}
		}
		return false
	}
	// First what an ENOBUFS accounts for; then, of what is left, the
	// copies no receiver got may be excused, as many as there are: an
	// excuse spent on a copy its ENOBUFS covers would be missing for one
	// that was never sent.
	var left []int
	for j := range want {
		if readAt[j] >= 0 {
			rep.Verified++
			continue
		}
		lo, hi := -1, len(stream)
		for k := j - 1; k >= 0; k-- {
			if readAt[k] >= 0 && count[want[k]] == 1 {
				lo = lastDrainedBefore(readAt[k])
				break
			}
		}
		for k := j + 1; k < len(want); k++ {
			if readAt[k] >= 0 {
				hi = readAt[k]
				break
			}
		}
		if overrunIn(lo, hi, sent[j]) {
			rep.Covered++
			continue
		}
		left = append(left, j, lo, hi)
	}
	uncovered := 0
	excused := map[Msg]int{}
	for i := 0; i < len(left); i += 3 {
		j, lo, hi := left[i], left[i+1], left[i+2]
		m := want[j]
		echoed := f.sentByEcho(sender, m)
		if !echoed && (f.Unsure[m] || silent) && excused[m] < count[m]-f.Delivered[FromSender{sender, m}] {
			excused[m]++
			rep.Undelivered++
			continue
		}
		if uncovered < maxShown {
			copies := ""
			if echoed {
				copies = fmt.Sprintf("; its sender read its echo: it was sent (the most one receiver got %d)", f.Delivered[FromSender{sender, m}])
			} else if count[m] > 1 || f.Unsure[m] {
				copies = fmt.Sprintf("; %d copies of it owed, %d excused, the most one receiver got %d, unsure %v", count[m], excused[m], f.Delivered[FromSender{sender, m}], f.Unsure[m])
			}
			when := ""
			if sent[j].known() {
				when = fmt.Sprintf(", broadcast at %d-%d, while an overrun reported there lasted", sent[j].From, sent[j].To)
			}
			add("lost without an ENOBUFS to account for it (none between #%d and #%d%s): %s (expected #%d)%s; the stream there: %s",
				lo, hi, when, m, j, copies, around(stream, lo, hi))
		}
		uncovered++
	}
	if uncovered > maxShown {
		add("%d messages lost without an ENOBUFS in all", uncovered)
	}
	return rep
}

// filterAt returns the messages of t on the given groups and their
// indexes in t.
func filterAt(t []Msg, groups map[uint32]bool) ([]Msg, []int) {
	var out []Msg
	var idx []int
	for i, m := range t {
		if groups[m.Group] {
			out = append(out, m)
			idx = append(idx, i)
		}
	}
	return out, idx
}

// filter returns the messages of t on the given groups.
func filter(t []Msg, groups map[uint32]bool) []Msg {
	var out []Msg
	for _, m := range t {
		if groups[m.Group] {
			out = append(out, m)
		}
	}
	return out
}

// compare checks that got is exactly want, in order. It returns how many
// messages matched (want's length when all is well) and, otherwise, a
// diagnosis: duplicates, losses, messages nobody sent, and the first place
// where the order differs.
func compare(where string, want, got []Msg) (int, []string) {
	if equal(want, got) {
		return len(want), nil
	}
	var problems []string
	add := func(f string, a ...any) { problems = append(problems, where+": "+fmt.Sprintf(f, a...)) }
	add("expected %d messages, received %d", len(want), len(got))

	wantCount := map[Msg]int{}
	for _, m := range want {
		wantCount[m]++
	}
	gotCount := map[Msg]int{}
	firstAt := map[Msg]int{}
	for i, m := range got {
		if gotCount[m] == 0 {
			firstAt[m] = i
		}
		gotCount[m]++
	}
	var dups, lost, foreign []string
	seen := map[Msg]bool{}
	for i, m := range got {
		if seen[m] {
			continue
		}
		seen[m] = true
		switch w, g := wantCount[m], gotCount[m]; {
		case w == 0:
			foreign = append(foreign, fmt.Sprintf("#%d %s (received %d times)", i, m, g))
		case g > w:
			dups = append(dups, fmt.Sprintf("%s received %d times, sent %d times (first at #%d)", m, g, w, firstAt[m]))
		}
	}
	seen = map[Msg]bool{}
	for i, m := range want {
		if seen[m] {
			continue
		}
		seen[m] = true
		if w, g := wantCount[m], gotCount[m]; g < w {
			lost = append(lost, fmt.Sprintf("%s sent %d times (first expected at #%d), received %d times", m, w, i, g))
		}
	}
	report := func(kind string, list []string) {
		for i, s := range list {
			if i == maxShown {
				add("%d %s in all", len(list), kind)
				break
			}
			add("%s: %s", kind, s)
		}
	}
	report("duplicate", dups)
	report("lost", lost)
	report("never sent", foreign)
	if i := firstDifference(want, got); i >= 0 {
		w, g := "nothing", "nothing"
		if i < len(want) {
			w = want[i].String()
		}
		if i < len(got) {
			g = got[i].String()
		}
		kind := "first difference"
		if len(dups) == 0 && len(lost) == 0 && len(foreign) == 0 {
			kind = "reordered: first difference"
		}
		add("%s at #%d: expected %s, received %s", kind, i, w, g)
	}
	return matchedPrefix(want, got), problems
}

func equal(a, b []Msg) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func firstDifference(a, b []Msg) int {
	for i := 0; i < len(a) || i < len(b); i++ {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	return -1
}

func matchedPrefix(a, b []Msg) int {
	i := firstDifference(a, b)
	if i < 0 {
		return len(a)
	}
	return i
}

// around renders the stream from a little before lo to a little after
// hi, for the reader of a loss.
func around(stream []Got, lo, hi int) string {
	from, to := max(lo-2, 0), min(hi+3, len(stream))
	if to-from > 24 {
		to = from + 24
	}
	var parts []string
	for k := from; k < to; k++ {
		switch g := stream[k]; g.Event {
		case Overrun:
			parts = append(parts, fmt.Sprintf("#%d ENOBUFS", k))
		case Drained:
			parts = append(parts, fmt.Sprintf("#%d empty", k))
		default:
			parts = append(parts, fmt.Sprintf("#%d %s (%s)", k, g.Msg, g.Tag))
		}
	}
	return strings.Join(parts, "; ")
}

// Churn is what a churn socket may receive. Its membership and options
// change under it, so the rules are upper bounds: every group it ever
// joined, the nsids its namespace ever had for senders (only while
// LISTEN_ALL_NSID was ever set), and the sender in its own namespace.
type Churn struct {
	Name        string
	EverJoined  map[uint32]bool
	EverAllNSID bool
	LocalSender int           // index of the sender in its namespace, or -1
	Mapped      map[int32]int // nsid -> sender index, in its namespace
}

// Source tells which sender sent a message, if the message says so (seq
// numbers and addresses are allotted per sender); ok is false for a
// message that carries no sender mark (e.g. seq 0 statistics).
type Source func(m Msg) (sender int, ok bool)

// CheckChurn judges one message a churn socket received; it returns "" if
// the message is allowed.
func CheckChurn(c Churn, g Got, source Source, names []string) string {
	if !c.EverJoined[g.Group] {
		return fmt.Sprintf("%s: message on group %d, which it never joined: %s (%s)", c.Name, g.Group, g.Msg, g.Tag)
	}
	// The nsid cmsg is added at recvmsg() time, and only while the
	// socket has LISTEN_ALL_NSID: a copy from a mapped sender that was
	// queued before the option was cleared arrives without one. Without
	// an nsid, the message may thus come from the local sender or, if the
	// option was ever set, from any sender its namespace maps.
	allowed := map[int]bool{}
	if g.Tag.HasNSID {
		if !c.EverAllNSID {
			return fmt.Sprintf("%s: message with %s, but NETLINK_LISTEN_ALL_NSID was never set: %s", c.Name, g.Tag, g.Msg)
		}
		s, ok := c.Mapped[g.Tag.NSID]
		if !ok {
			return fmt.Sprintf("%s: message with %s, an id its namespace never gave a sender: %s", c.Name, g.Tag, g.Msg)
		}
		allowed[s] = true
	} else {
		if c.LocalSender >= 0 {
			allowed[c.LocalSender] = true
		}
		if c.EverAllNSID {
			for _, s := range c.Mapped {
				allowed[s] = true
			}
		}
		if len(allowed) == 0 {
			return fmt.Sprintf("%s: message without nsid, but no sender is local and none is visible through LISTEN_ALL_NSID: %s", c.Name, g.Msg)
		}
	}
	if s, ok := source(g.Msg); ok && !allowed[s] {
		return fmt.Sprintf("%s: message of sender %s, which it cannot see (%s; it may see %s): %s", c.Name, name(names, s), g.Tag, list(names, allowed), g.Msg)
	}
	return ""
}

func list(names []string, set map[int]bool) string {
	var l []string
	for s := range set {
		l = append(l, name(names, s))
	}
	sort.Strings(l)
	return strings.Join(l, ", ")
}

func name(names []string, i int) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("#%d", i)
}

// Join lists problems as one text block.
func Join(problems []string) string { return strings.Join(problems, "\n") }
