// SPDX-License-Identifier: GPL-2.0

package kmsg

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// A report's fingerprint names the bug, not the occasion: the same bug
// hit again, on another boot, CPU or task, has the same fingerprint. It is
// the report's kind, what kind of bug the sanitizers and lockdep say it
// is, what makes the report specific, and the first frames of its stack
// (of both stacks for a KCSAN race), function names only, as netdev's CI
// fingerprints crashes. What makes it specific: the file:line a WARNING,
// a BUG or UBSAN names (without it, a listed WARNING would hide every
// other WARN on the same path; it names the WARN statement, and so its
// condition, which the kernel does not print); the lock classes a lockdep report names;
// and for a KCSAN race the type and size of each access. KCSAN does not
// name the raced variable: its address differs on every boot, and the
// offset of the access in its function changes with any change to that
// function's code, so the access type and size, with the function the
// access is in, are what is stable and tells one variable from another
// in that function. Left out are addresses, offsets, module names, the
// compiler's clone suffixes (".constprop.0", ".isra.0", ".cold"), CPU,
// PID and task names, the frames of the reporting machinery (dump_stack,
// __warn, kasan_report, ...), frames the unwinder marks unreliable ("? "),
// and what an interrupt interrupted.

// FingerprintFrames is how many frames of a stack a fingerprint names.
const FingerprintFrames = 5

// Fingerprint is the report's fingerprint, e.g.
//
//	WARNING at net/netlink/af_netlink.c:1500: do_one_broadcast:netlink_broadcast:rtnetlink_send
//	KASAN slab-use-after-free: netlink_broadcast_filtered:rtnl_notify
//	KCSAN data-race: netlink_insert:netlink_bind (write 4) / netlink_update_listeners:netlink_setsockopt (read 4)
//	lockdep possible circular locking dependency detected [&nlk->cb_mutex, rtnl_mutex]: netlink_dump:netlink_recvmsg
//	taint W
//
// The two stacks of a KCSAN race are in alphabetical order: which of
// the two accesses the kernel prints first depends on which CPU set the
// watchpoint. A report whose stack was not logged (or not kept) says
// "(no stack)" instead of frames.
func (r Report) Fingerprint() string {
	if r.Kind == "taint" {
		return taintFingerprint(r)
	}
	title := r.title()
	head := r.Kind
	if s := subject(r.Kind, title); s != "" {
		head += " " + s
	}
	if loc := location(r.Kind, title); loc != "" {
		head += " at " + loc
	}
	if r.Kind == "lockdep" {
		locks := r.Locks
		if locks == nil {
			locks = readLocks(r.Lines)
		}
		if len(locks) > 0 {
			head += " [" + strings.Join(locks, ", ") + "]"
		}
	}
	stacks, accesses := r.Stacks, r.Accesses
	if stacks == nil {
		var sr stackReader
		sr, stacks = readStacks(r.Lines)
		accesses = sr.accesses
	}
	var parts []string
	for i, st := range stacks {
		if len(st) > FingerprintFrames {
			st = st[:FingerprintFrames]
		}
		if len(st) == 0 {
			continue
		}
		part := strings.Join(st, ":")
		if r.Kind == "KCSAN" && len(accesses) == len(stacks) && accesses[i] != "" {
			part += " (" + accesses[i] + ")"
		}
		parts = append(parts, part)
	}
	if r.Kind == "KCSAN" {
		// The two accesses of a race; further stacks are none of KCSAN's.
		if len(parts) > 2 {
			parts = parts[:2]
		}
		sort.Strings(parts)
	} else if len(parts) > 1 {
		// Where the report was raised; KASAN's allocation and free
		// stacks come after. (lockdep's dependency chain has no
		// "Call Trace:" and is not read.)
		parts = parts[:1]
	}
	if len(parts) == 0 {
		// A report with no stack trace at all, such as a WARN written to
		// /dev/kmsg: the title's function, if it names one, is all there is.
		if f := titleFrame(title); f != "" {
			return head + ": " + f
		}
		return head + ": (no stack)"
	}
	return head + ": " + strings.Join(parts, " / ")
}

// fileLine is a source location in a title: "net/netlink/af_netlink.c:1500".
var fileLine = regexp.MustCompile(`(?:^|[\s(\[])((?:[\w.+-]+/)*[\w.+-]+\.[chS]:\d+)`)

// location is the file:line the title of a WARNING, a BUG or a UBSAN
// report names, or "".
func location(kind, title string) string {
	switch kind {
	case "WARNING", "BUG", "UBSAN":
		if m := fileLine.FindStringSubmatch(title); m != nil {
			return m[1]
		}
	}
	return ""
}

// taintFingerprint is "taint W", or "taint bit 23" for a bit without a
// letter, from a Report made by TaintReports.
func taintFingerprint(r Report) string {
	if len(r.Lines) == 0 {
		return "taint"
	}
	name := strings.TrimPrefix(r.Lines[0], "taint: ")
	if letter, _, ok := strings.Cut(name, " ("); ok {
		return "taint " + letter
	}
	return "taint " + name
}

// subject is what kind of bug the title says, for the kinds whose titles
// say it without addresses or file:line: "data-race" for KCSAN,
// "slab-use-after-free" for KASAN, "shift-out-of-bounds" for UBSAN, the
// lockdep splat's name, "underflow" for a refcount_t, "list_del
// corruption", and a BUG's own words. Empty for the others: their titles
// hold only CPU, PID and file:line, which the frames name better.
func subject(kind, title string) string {
	switch kind {
	case "KCSAN", "KASAN", "UBSAN":
		_, rest, ok := strings.Cut(title, kind+": ")
		if !ok {
			return ""
		}
		return cutAny(rest, " in ")
	case "lockdep", "BUG":
		s := strings.TrimPrefix(strings.TrimPrefix(title, "WARNING: "), "BUG: ")
		return cutAny(s, " at ", ",", ":", "!", " (", " - ")
	case "refcount":
		return cutAny(strings.TrimPrefix(title, "refcount_t: "), ";", ".")
	case "list corruption":
		return cutAny(title, ".", ",", ":")
	case "alive socket":
		if m := aliveSocket.FindStringSubmatch(title); m != nil {
			return m[1]
		}
	}
	return ""
}

// cutAny is s up to the first of seps found, trimmed.
func cutAny(s string, seps ...string) string {
	end := len(s)
	for _, sep := range seps {
		if i := strings.Index(s, sep); i >= 0 && i < end {
			end = i
		}
	}
	return strings.TrimSpace(s[:end])
}

// frameIn finds a function with an offset in a line: "... at f.c:1 fn+0x1/0x2".
var frameIn = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.$]*)\+0x[0-9a-f]+/0x[0-9a-f]+`)

func titleFrame(title string) string {
	m := frameIn.FindAllStringSubmatch(title, -1)
	if len(m) == 0 {
		return ""
	}
	if name := cleanName(m[len(m)-1][1]); !generic(name) {
		return name
	}
	return ""
}

var (
	// frameLine is one frame of a stack trace, as the kernel prints it
	// (trimmed): "fn+0x1b5/0x3c0", with "? " when the unwinder is not sure,
	// "[<ffffffff8123>] " in kmemleak's ("[<(____ptrval____)>] " while
	// the kernel cannot hash pointers yet), and " [module]" (with a build id)
	// or " (P)" after it in some kernels.
	frameLine = regexp.MustCompile(`^(?:\[<(?:[0-9a-f]+|\(____ptrval____\))>\] )?(\? )?([A-Za-z_][A-Za-z0-9_.$]*)\+0x[0-9a-f]+/0x[0-9a-f]+(?: \[[^\]]+\])?(?: \([A-Z]\))?$`)
	// ripLine is x86's faulting frame: "RIP: 0010:do_one_broadcast+0x3c2/0x3e0"
	// (a user-space "RIP: 0033:0x7f..." has no function).
	ripLine = regexp.MustCompile(`^RIP: [0-9a-f]{4}:([A-Za-z_][A-Za-z0-9_.$]*)\+0x[0-9a-f]+/0x[0-9a-f]+$`)
	// stackHeader starts a stack: x86's and arm64's call trace, KCSAN's
	// accesses ("write to 0x... of 8 bytes by task 93 on cpu 1:", "race at
	// unknown origin, with read to ..."), KASAN's allocation and free
	// stacks, kmemleak's backtrace.
	stackHeader = regexp.MustCompile(`^(Call [Tt]race:|.* to 0x[0-9a-f]+ of \d+ bytes by (task \d+|interrupt) on cpu \d+:|(Allocated|Freed) by task \d+:|.*potentially related work creation:|backtrace( \(crc [0-9a-f]+\))?:)$`)
	// cloneSuffix is what the compiler appends to a function it cloned
	// or split, which depends on the build, not on the bug.
	cloneSuffix = regexp.MustCompile(`(\.(constprop|isra|part|cold|llvm|lto_priv|localalias|[0-9]+))+$`)
)

// cleanName is a function name without the compiler's clone suffixes.
func cleanName(name string) string { return cloneSuffix.ReplaceAllString(name, "") }

// genericFrames are the reporting machinery's, the same in every report
// of a kind (the dump itself, WARN and BUG, KASAN, lockdep, might_sleep,
// refcount_t and list checks, UBSAN, the allocator under kmemleak, and the
// slab allocator's entry points, which head every allocation stack a
// kmemleak or KASAN report prints): they say nothing about the bug; who
// allocated does.
var genericFrames = map[string]bool{}

func init() {
	for _, name := range strings.Fields(`
		dump_stack dump_stack_lvl __dump_stack show_stack show_trace_log_lvl panic die
		do_trap do_error_trap __warn warn_slowpath_fmt warn_slowpath_null report_bug
		handle_bug exc_invalid_op
		print_report print_address_description end_report check_memory_region
		print_circular_bug check_noncircular check_prev_add check_prevs_add validate_chain
		__lock_acquire lock_acquire lock_release __lock_release lock_is_held_type
		print_usage_bug mark_lock mark_lock_irq mark_usage lockdep_rcu_suspicious
		__might_resched __might_sleep ___might_sleep
		refcount_warn_saturate __list_add_valid __list_del_entry_valid
		__list_add_valid_or_report __list_del_entry_valid_or_report
		ubsan_epilogue slab_post_alloc_hook
		kmem_cache_alloc kmem_cache_alloc_node kmem_cache_alloc_lru __kmem_cache_alloc_node
		__kmalloc __kmalloc_node __kmalloc_node_track_caller __kmalloc_track_caller
		kmalloc_trace kmalloc_node_trace kmalloc_reserve slab_alloc_node`) {
		genericFrames[name] = true
	}
}

// genericPrefixes name whole families of such frames.
var genericPrefixes = []string{"asm_exc_", "kasan_", "__kasan_", "__asan_", "kcsan_", "__kcsan_", "__tsan_", "__ubsan_handle_", "kmemleak_"}

func generic(name string) bool {
	if genericFrames[name] {
		return true
	}
	for _, p := range genericPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// interruptEntry says whether a frame is where a hardware interrupt
// entered the kernel: the frames below it are whatever it interrupted.
func interruptEntry(name string) bool {
	return strings.HasPrefix(name, "sysvec_") || strings.HasPrefix(name, "asm_sysvec_") ||
		name == "common_interrupt" || name == "asm_common_interrupt"
}

// stackReader collects the stacks of one report, line by line.
type stackReader struct {
	stacks   [][]string
	accesses []string // a KCSAN access per stack, when any stack is one
	cur      int      // the stack being read, or -1
	ripOnly  bool     // the current stack is a RIP line's, its call trace still to come
	ended    bool     // the current stack reached an interrupt's entry
}

func newStackReader() stackReader { return stackReader{cur: -1} }

func (s *stackReader) line(msg string) {
	t := strings.TrimSpace(msg)
	switch {
	case t == "":
		s.cur = -1
	case stackHeader.MatchString(t):
		if strings.HasPrefix(t, "Call ") && s.cur >= 0 && s.ripOnly {
			s.ripOnly = false // the RIP's callers
			return
		}
		s.start()
		if m := kcsanAccess.FindStringSubmatch(t); m != nil {
			for len(s.accesses) < s.cur {
				s.accesses = append(s.accesses, "")
			}
			s.accesses = append(s.accesses, m[1]+" "+m[2])
		}
	case ripLine.MatchString(t):
		name := cleanName(ripLine.FindStringSubmatch(t)[1])
		if s.cur < 0 {
			s.start()
			s.ripOnly = true
		}
		s.add(name)
	case t == "</IRQ>":
		s.ended = true
	case s.cur >= 0:
		if m := frameLine.FindStringSubmatch(t); m != nil && m[1] == "" {
			s.add(cleanName(m[2]))
		}
	}
}

func (s *stackReader) start() {
	s.stacks = append(s.stacks, []string{})
	s.cur, s.ripOnly, s.ended = len(s.stacks)-1, false, false
}

func (s *stackReader) add(name string) {
	if s.ended || generic(name) {
		return
	}
	s.stacks[s.cur] = append(s.stacks[s.cur], name)
	if interruptEntry(name) {
		s.ended = true
	}
}

// kcsanAccess is a KCSAN access header's type and size: "read (marked) to
// 0x... of 8 bytes by task 93 on cpu 1:" gives "read (marked)" and "8".
var kcsanAccess = regexp.MustCompile(`^(?:race at unknown origin, with )?(.+?) to 0x[0-9a-f]+ of (\d+) bytes by `)

// readStacks reads the stacks in a report's lines.
func readStacks(lines []string) (stackReader, [][]string) {
	s := newStackReader()
	for _, l := range lines {
		s.line(l)
	}
	return s, s.stacks
}

// lockReader collects the lock classes a lockdep report names before its
// "other info that might help us debug this:" (the scenario and the
// locks held then depend on the occasion): the lock being taken first,
// then the one held, as lockdep prints them, " ffff888003e5a0b8
// (&nlk->cb_mutex){+.+.}-{3:3}, at: netlink_dump+0x2e/0x4a0".
type lockReader struct {
	classes []string
	done    bool
}

// maxLockClasses is how many classes a fingerprint names: the lock taken
// and the lock held, which say which dependency it is.
const maxLockClasses = 2

// lockClass finds a class: after an optional address, "(name){usage}".
var lockClass = regexp.MustCompile(`^(?:-> #\d+ |#\d+: )?(?:[0-9a-f]{8,16} )?\((.+?)\)\{[-+.?0-9A-Za-z]*\}`)

func (l *lockReader) line(msg string) {
	t := strings.TrimSpace(msg)
	if l.done || len(l.classes) == maxLockClasses {
		return
	}
	if strings.HasPrefix(t, "other info that might help") || t == "stack backtrace:" || stackHeader.MatchString(t) {
		l.done = true
		return
	}
	if m := rcuUsage.FindStringSubmatch(t); m != nil && len(l.classes) == 0 {
		l.classes, l.done = []string{m[1]}, true
		return
	}
	m := lockClass.FindStringSubmatch(t)
	if m == nil {
		return
	}
	for _, c := range l.classes {
		if c == m[1] {
			return
		}
	}
	l.classes = append(l.classes, m[1])
}

// rcuUsage is where a suspicious RCU usage was: "net/netlink/af_netlink.c:1521
// suspicious rcu_dereference_check() usage!". It names no lock class; its
// file:line is what makes it specific.
var rcuUsage = regexp.MustCompile(`^((?:[\w.+-]+/)*[\w.+-]+\.[chS]:\d+) suspicious `)

func readLocks(lines []string) []string {
	var l lockReader
	for _, m := range lines {
		l.line(m)
	}
	return l.classes
}

// NetlinkFingerprint says why a fingerprint would match reports raised in
// the code the series changes or that carries its notifications, or "": a
// known-report entry that does would hide a new report there. That code
// is the files of netlink_functions.txt, made from the kernel sources:
// net/netlink, net/core/rtnetlink.c, net/core/net_namespace.c, the
// headers whose inlines are their interfaces, and the series' files. A
// fingerprint matches when it names a file:line in one of them, or one of
// netlink's lock classes, or when a frame it names is a function one of
// them defines (a name the table has; clone suffixes are already gone
// from a fingerprint). For a KCSAN race only the top two frames of each
// access's stack count: the function that made the access, which names
// the raced variable, and its caller (where an inlined helper was called
// from); below them is the path that led there, and every delivery to a
// socket passes through netlink's (__netlink_sendskb under pollwake). For
// every other kind, the check fired in a helper on what its callers gave
// it (skb_put on __nlmsg_put's length, refcount_dec on put_net's count),
// so every frame of the fingerprint counts.
func NetlinkFingerprint(fp string) string {
	if m := fileLine.FindStringSubmatch(fp); m != nil {
		if file, _, _ := strings.Cut(m[1], ":"); strings.HasPrefix(file, "net/netlink/") || netlinkFiles[file] {
			return "it names " + m[1]
		}
	}
	head, frames, ok := strings.Cut(fp, ": ")
	if !ok {
		return ""
	}
	if _, classes, ok := strings.Cut(head, " ["); ok {
		for _, c := range strings.Split(strings.TrimSuffix(classes, "]"), ", ") {
			if netlinkLock(c) {
				return "it names netlink's lock " + c
			}
		}
	}
	depth := FingerprintFrames
	if strings.HasPrefix(head, "KCSAN") {
		depth = 2
	}
	for _, stack := range strings.Split(frames, " / ") {
		stack, _, _ = strings.Cut(stack, " (")
		names := strings.Split(stack, ":")
		for i := 0; i < len(names) && i < depth; i++ {
			if file := netlinkFile(names[i]); file != "" {
				return fmt.Sprintf("its stack has %s (%s) at frame %d", names[i], file, i+1)
			}
		}
	}
	return ""
}

// netlinkLock says whether a lock class is net/netlink's: nl_table_lock,
// &nlk->cb_mutex, &nlk->groups's, a netlink_* key. Lock classes are
// named by lockdep after the lock's variable or field, not after a
// function, so the function table cannot say.
func netlinkLock(class string) bool {
	return strings.Contains(class, "netlink") || strings.Contains(class, "nlk") ||
		strings.HasPrefix(class, "nl_") || strings.Contains(class, "->nl_")
}
