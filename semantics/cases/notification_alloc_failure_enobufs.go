// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/faultlock"
	"nlmcast/selftests/netns"
	"nlmcast/selftests/nlsock"
	"nlmcast/selftests/rtnl"
)

// notificationAllocFailureENOBUFS: when the kernel cannot build a
// notification, every subscriber of its group in the source netns is told
// so instead: its next recvmsg() fails with ENOBUFS, once, and a poll() on
// it wakes up with POLLERR. A NETLINK_NO_ENOBUFS subscriber is not told,
// nor is any subscriber in another netns, a LISTEN_ALL_NSID one that maps
// the source (a recipient of its notifications) included. The subscribers
// of other groups get the request's other notifications as usual, the
// request itself succeeds, and the error is no overrun: no drop is
// counted. A subscriber bound to portid 1 is told like any other:
// rtnl_set_sk_err() excludes no portid (it passes 0, which no user socket
// can have).
//
// Kernel: __inet_insert_ifa() -> rtmsg_ifa(): nlmsg_new(GFP_KERNEL) fails
// -> rtnl_set_sk_err(net, RTNLGRP_IPV4_IFADDR, -ENOBUFS) ->
// netlink_set_err(net->rtnl, 0, group, code) -> do_one_set_err() on every
// socket of NETLINK_ROUTE's mc_list: not the kernel socket, only
// sock_net() equal to the source's, only members of the group, none with
// NETLINK_F_RECV_NO_ENOBUFS; WRITE_ONCE(sk->sk_err, ENOBUFS) and
// sk_error_report() -> sock_def_error_report() ->
// wake_up_interruptible_poll(EPOLLERR). datagram_poll() reports EPOLLERR
// while sk_err is set; recvmsg() returns it once (sock_error() clears it).
// The same in 6.1 and 6.12; the series does not touch netlink_set_err().
//
// The failure is made with fault injection (CONFIG_FAULT_INJECTION,
// CONFIG_FAILSLAB, CONFIG_FAULT_INJECTION_DEBUG_FS; production kernels
// have none, and the case SKIPs there): /proc/thread-self/fail-nth set to
// N fails the N-th fault-injectable allocation of that thread, with
// failslab counting GFP_KERNEL allocations (ignore-gfp-wait N) of every
// cache (cache-filter N). Which N is nlmsg_new()'s depends on the build,
// so the case sends the same RTM_NEWADDR with N = 1, 2, ... and a probe
// subscriber tells what each did: a notification (the failure hit
// something else), nothing (the request failed, or never got to
// rtmsg_ifa()), or ENOBUFS: rtmsg_ifa()'s allocation, the first of the
// request's allocations whose failure reaches the group (every broadcast
// clone comes after it). Meanwhile a second subscriber has a thread asleep
// in ppoll() on it: the wake-up is the only thing that tells a reported
// error from an error nobody is woken for.
func notificationAllocFailureENOBUFS(t selftests.T) {
	openFailNth(t)
	s, o := selftests.NewNS(t, "S"), selftests.NewNS(t, "O")
	id := o.Map(s, 7).ID
	group := selftests.Join(unix.RTNLGRP_IPV4_IFADDR)
	polled := s.Socket("polled", group)
	probe := s.Socket("probe", group)
	quiet := s.Socket("no_enobufs", selftests.With(unix.NETLINK_NO_ENOBUFS), group)
	routes := s.Socket("routes", selftests.Join(unix.RTNLGRP_IPV4_ROUTE))
	foreign := o.Socket("foreign", group)
	allNSID := o.Socket("all_nsid", selftests.With(unix.NETLINK_LISTEN_ALL_NSID), group)
	portid1 := s.Socket("portid1", selftests.Portid(1), group)
	everyone := []*selftests.Sock{polled, probe, quiet, routes, foreign, allNSID, portid1}

	// Without injection the address reaches every member of the group in
	// S and the LISTEN_ALL_NSID one in O (what the injected run must then
	// withhold from them), the plain one in O nothing.
	add := s.AddAddr()
	for _, k := range []*selftests.Sock{polled, probe, quiet, portid1} {
		k.Expect(add.NewAddr())
	}
	routes.Expect(add.NewRoute())
	allNSID.Expect(add.NewAddr().NSID(id))
	foreign.Expect()
	del := s.DelAddr(add)
	for _, k := range []*selftests.Sock{polled, probe, quiet, portid1} {
		k.Expect(del.DelAddr())
	}
	routes.Expect(del.DelRoute())
	allNSID.Expect(del.DelAddr().NSID(id))
	foreign.Expect()

	req := newAddrRequester(t, s, add.Prefix)
	var p *poller
	var dropsBefore uint64
	a, tried := failNthSearch{
		request: "RTM_NEWADDR", alloc: "rtmsg_ifa()'s", probe: probe, want: unix.ENOBUFS,
		send: func(n int) attempt {
			p = startPoller(t, polled)
			dropsBefore = drops(t, s, probe)
			return req.send(t, n)
		},
		// Back to no address, every queue empty.
		tidy: func(n int) {
			p.stop(t)
			if _, err := s.Ctl.Do(rtnl.DelAddr(rtnl.LoopbackIndex, add.Prefix)); err != nil && !errors.Is(err, unix.EADDRNOTAVAIL) {
				t.Fatalf("after fail-nth %d: %v", n, err)
			}
		},
		clean: everyone,
	}.run(t)
	groupTold(t, a, p, dropsBefore, everyone, req.event(), tried)
}

// maxFailNth bounds the search, which ends long before, at the first N
// that does not fire: on a tiny 6.1 with KASAN and kmemleak (an object of
// kmemleak's own after each allocation), rtmsg_ifa()'s allocation is the
// 7th (the request's skb and its data, inet_alloc_ifa(), each followed by
// kmemleak's).
const maxFailNth = 500

// groupTold checks everything once the probe got ENOBUFS: the request
// succeeded, the poller woke with POLLERR, the polled socket's error is
// there once, nobody else was told, the other group's notification came.
func groupTold(t selftests.T, a attempt, p *poller, dropsBefore uint64, everyone []*selftests.Sock, ev selftests.AddrEvent, tried []string) {
	polled, probe, quiet, routes, foreign, allNSID, portid1 := everyone[0], everyone[1], everyone[2], everyone[3], everyone[4], everyone[5], everyone[6]
	if a.sendErr != nil || a.recvErr != nil || a.ackErrno != 0 {
		t.Errorf("RTM_NEWADDR %s with fail-nth %d: %s; want an ACK with errno 0: the address is added though its notification failed", ev.Prefix, a.n, a)
	}
	if r, woken := p.wait(t, pollerDeadline); !woken {
		t.Errorf("%s: the thread in ppoll() on it was not woken within %v of the error (ppoll then returned %s when stopped): the error was set without sk_error_report()",
			polled, pollerDeadline, r)
	} else if r.err != nil || r.sock&unix.POLLERR == 0 || r.sock&unix.POLLIN != 0 || r.stop != 0 {
		t.Errorf("%s: ppoll() returned %s; want POLLERR alone on the socket (an error, no message) and nothing on the stop eventfd", polled, r)
	} else if selftests.Verbose() {
		t.Logf("%s: the thread in ppoll() on it woke with %s", polled, r)
	}
	got, err := polled.Transcript()
	polled.ExpectLines(got, err, selftests.RecvError(unix.ENOBUFS))
	probe.Expect()
	portid1.Expect(selftests.RecvError(unix.ENOBUFS))
	if after := drops(t, probe.NS(), probe); after != dropsBefore {
		t.Errorf("%s: Drops went from %d to %d; want no change: the group's error is not an overrun. This ENOBUFS is a failed broadcast clone's (netlink_overrun()), so no error reached the group when an earlier fail-nth failed rtmsg_ifa()'s allocation; tried: %s",
			probe, dropsBefore, after, strings.Join(tried, "; "))
	}
	quiet.Expect()
	routes.Expect(ev.NewRoute())
	foreign.Expect()
	allNSID.Expect()
}

func drops(t selftests.T, n *selftests.NS, s *selftests.Sock) uint64 {
	t.Helper()
	d, err := s.Drops(n.NS)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return d
}

// failslabLockWait is how long the case waits for another program that
// holds failslab's settings (faultlock): a stress fault mode holds them
// for up to a few minutes, this case in another copy for seconds.
const failslabLockWait = 30 * time.Second

// Fault injection's files, and what failslab must be set to so that
// fail-nth counts rtmsg_ifa()'s allocation.
const (
	failNthFile = "/proc/thread-self/fail-nth"
	debugfsDir  = "/sys/kernel/debug"
	failslabDir = debugfsDir + "/failslab"
)

var failslabForFailNth = [][2]string{
	{"ignore-gfp-wait", "N"}, // nlmsg_new(GFP_KERNEL) may sleep: count it
	{"cache-filter", "N"},    // every cache, not only those marked failslab
	{"verbose", "0"},         // no stack trace in the log for each failure
}

// openFailNth prepares failslab for fail-nth and puts its settings back
// when the case ends, or SKIPs the case naming what the kernel or the
// program lacks. With -v it logs the settings it found and where. Where
// debugfs is not mounted, it is mounted in a mount namespace of a thread
// of its own, which ends once failslab's files are open: no one else ever
// sees the mount, and it goes with the last file, whichever way the case
// ends. The settings are global, yet they change nothing for the cases
// running beside this one: failslab fails nothing at probability 0 but
// where a thread armed fail-nth, and only this case's request threads do.
func openFailNth(t selftests.T) {
	t.Helper()
	openFailNthWith(t, failslabForFailNth)
}

// openFailNthWith is openFailNth with failslab set to settings (each a
// file of failslab's and its value) instead of failslabForFailNth.
func openFailNthWith(t selftests.T, settings [][2]string) {
	t.Helper()
	if _, err := os.Stat(failNthFile); err != nil {
		t.Skipf("no %s (%v): the kernel lacks CONFIG_FAULT_INJECTION, with which the case makes a notification's allocation fail", failNthFile, err)
	}
	// Another program may be changing failslab's settings (a stress
	// fault mode, this case in another copy): one at a time.
	unlock, unlocked, err := faultlock.Acquire("netlink_mcast_semantics", failslabLockWait)
	if unlocked != "" {
		t.Logf("%s", unlocked)
	}
	if errors.Is(err, faultlock.ErrBusy) {
		t.Skipf("%v: the case would change them under it", err)
	}
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(unlock) // after the settings are put back: cleanups run last-in first-out
	knobs, where, skip, err := openFailslab(settings)
	if skip != "" {
		t.Skipf("%s", skip)
	}
	if err != nil {
		t.Fatalf("%v", err)
	}
	closeAll := func() {
		for _, f := range knobs {
			f.Close()
		}
	}
	saved := make([]string, len(knobs))
	var was []string
	for i, f := range knobs {
		// One read, from the start: "verbose" is not seekable
		// (simple_attr_open() -> nonseekable_open()), so no pread.
		b := make([]byte, 64)
		n, err := f.Read(b)
		if n == 0 {
			closeAll()
			t.Fatalf("read %s: %v", f.Name(), err)
		}
		saved[i] = strings.TrimSpace(string(b[:n]))
		was = append(was, settings[i][0]+"="+saved[i])
	}
	t.Cleanup(func() {
		defer closeAll()
		for i, f := range knobs {
			if _, err := f.Write([]byte(saved[i])); err != nil {
				t.Errorf("put failslab's %s back to %s: %v", settings[i][0], saved[i], err)
			}
		}
	})
	for i, f := range knobs {
		if _, err := f.Write([]byte(settings[i][1])); err != nil {
			t.Fatalf("set failslab's %s to %s: %v", settings[i][0], settings[i][1], err)
		}
	}
	if selftests.Verbose() {
		t.Logf("failslab was %s (%s); it is put back when the case ends", strings.Join(was, " "), where)
	}
}

// openFailslab opens failslab's files of settings, read-write, and says
// where it found them.
func openFailslab(settings [][2]string) (_ []*os.File, where, skip string, _ error) {
	if _, err := os.Stat(failslabDir); err == nil {
		files, skip, err := openKnobs(failslabDir, settings)
		return files, "debugfs was mounted", skip, err
	} else if mounted, merr := faultlock.DebugfsMounted(debugfsDir); merr != nil || mounted {
		// Mounted, without failslab's directory (or unreadable).
		return nil, "", fmt.Sprintf("no %s (%v): the kernel lacks CONFIG_FAILSLAB or CONFIG_FAULT_INJECTION_DEBUG_FS", failslabDir, err), merr
	}
	var files []*os.File
	err := netns.OnThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			skip = selftests.PrivilegeSkip(err, unix.CAP_SYS_ADMIN, "unshare(CLONE_NEWNS), to mount debugfs where no one else sees it,")
			return err
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			return fmt.Errorf("make / private in the case's mount namespace: %w", err)
		}
		if err := unix.Mount("debugfs", debugfsDir, "debugfs", 0, ""); err != nil {
			skip = selftests.PrivilegeSkip(err, unix.CAP_SYS_ADMIN, "mounting debugfs")
			if skip == "" {
				skip = fmt.Sprintf("debugfs cannot be mounted on %s (%v): the kernel lacks CONFIG_DEBUG_FS, or it was booted with debugfs=off", debugfsDir, err)
			}
			return err
		}
		var err error
		files, skip, err = openKnobs(failslabDir, settings)
		return err
	})
	if skip != "" {
		return nil, "", skip, nil
	}
	return files, "debugfs mounted for the case alone, in a mount namespace of its own", "", err
}

func openKnobs(dir string, settings [][2]string) (_ []*os.File, skip string, _ error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Sprintf("no %s (%v): the kernel lacks CONFIG_FAILSLAB or CONFIG_FAULT_INJECTION_DEBUG_FS", dir, err), nil
	}
	var files []*os.File
	for _, k := range settings {
		f, err := os.OpenFile(dir+"/"+k[0], os.O_RDWR, 0)
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			if skip := selftests.PrivilegeSkip(err, unix.CAP_SYS_ADMIN, "writing failslab's settings"); skip != "" {
				return nil, skip, nil
			}
			return nil, "", err
		}
		files = append(files, f)
	}
	return files, "", nil
}

// failNthCall makes call with fail-nth at n, on a thread of its own that
// does nothing else between arming and reading fail-nth back (call must
// make raw system calls on buffers made beforehand, so that the thread's
// injectable allocations are its own), and says whether an allocation was
// failed. The thread is retired afterwards, with fail-nth at 0 anyway.
func failNthCall(t selftests.T, n int, call func() error) (fired bool, callErr error) {
	t.Helper()
	left := make([]byte, 16)
	arm := []byte(strconv.Itoa(n))
	err := netns.OnThread(func() error {
		f, err := unix.Open(failNthFile, unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open %s: %w", failNthFile, err)
		}
		defer unix.Close(f)
		if _, err := unix.Pread(f, left, 0); err != nil {
			return fmt.Errorf("read %s: %w", failNthFile, err)
		}
		if _, err := unix.Pwrite(f, arm, 0); err != nil {
			return fmt.Errorf("write %d to %s: %w", n, failNthFile, err)
		}
		callErr = call()
		k, rerr := unix.Pread(f, left, 0)
		if _, err := unix.Pwrite(f, []byte("0"), 0); err != nil {
			return fmt.Errorf("write 0 to %s: %w", failNthFile, err)
		}
		if rerr != nil {
			return fmt.Errorf("read %s back: %w", failNthFile, rerr)
		}
		fired = strings.TrimSpace(string(left[:k])) == "0"
		return nil
	})
	if err != nil {
		t.Fatalf("%v", err)
	}
	return fired, callErr
}

// armedRequest is one request, its bytes made beforehand, that a socket
// of its own (not subscribed: its ACK is all it gets) sends with fail-nth
// armed.
type armedRequest struct {
	sock *nlsock.Socket
	msg  []byte
	seq  uint32
}

// newArmedRequest makes r's bytes for k, which must be bound already: an
// autobind in the armed section would allocate.
func newArmedRequest(t selftests.T, k *selftests.Sock, r rtnl.Request) *armedRequest {
	t.Helper()
	m := r.Msg
	m.Header.Flags |= netlink.Request | netlink.Acknowledge
	m.Header.Sequence = rtnl.NextSeq()
	m.Header.PID = k.Portid()
	m.Header.Length = uint32(nlsock.Align(unix.NLMSG_HDRLEN + len(m.Data)))
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatalf("%v", err)
	}
	return &armedRequest{sock: k.Socket, msg: b, seq: m.Header.Sequence}
}

// addrRequester sends one RTM_NEWADDR, always the same bytes, from a
// socket of its own in the source netns.
type addrRequester struct {
	*armedRequest
	prefix netip.Prefix
}

func newAddrRequester(t selftests.T, s *selftests.NS, p netip.Prefix) *addrRequester {
	t.Helper()
	k := s.Socket("requester")
	return &addrRequester{armedRequest: newArmedRequest(t, k, rtnl.NewAddr(rtnl.LoopbackIndex, p)), prefix: p}
}

// event is the request as an AddrEvent, for the messages it causes.
func (r *addrRequester) event() selftests.AddrEvent {
	return selftests.AddrEvent{Seq: r.seq, Pid: r.sock.Portid(), Prefix: r.prefix}
}

// attempt is what one request did with fail-nth at n.
type attempt struct {
	n        int
	fired    bool              // fail-nth reached 0: an allocation failed
	sendErr  error             // write(): the request's own skb
	recvErr  error             // read() of the ACK: ENOBUFS when the ACK could not be allocated
	ackErrno int               // the ACK's errno, when one came
	replies  []netlink.Message // what came before the ACK (a GET's reply)
	call     bool              // a system call's try (failNthCall), not a request's
	callErr  error             // what that system call returned
}

func (a attempt) String() string {
	switch {
	case a.call:
		return fmt.Sprintf("returned %v (fired %v)", a.callErr, a.fired)
	case a.sendErr != nil:
		return fmt.Sprintf("send %v", a.sendErr)
	case a.recvErr != nil:
		return fmt.Sprintf("no ACK (%v)", a.recvErr)
	}
	if len(a.replies) > 0 {
		return fmt.Sprintf("%d replies, ACK errno %d", len(a.replies), a.ackErrno)
	}
	return fmt.Sprintf("ACK errno %d", a.ackErrno)
}

// send sends the request with fail-nth at n (failNthCall): a write of its
// bytes and a read of the answer, raw, into a buffer made beforehand.
func (r *armedRequest) send(t selftests.T, n int) attempt {
	t.Helper()
	a := attempt{n: n, ackErrno: -1}
	ack := make([]byte, 4096)
	var got int
	a.fired, _ = failNthCall(t, n, func() error {
		_, a.sendErr = unix.Write(r.sock.FD(), r.msg)
		if a.sendErr == nil {
			got, a.recvErr = unix.Read(r.sock.FD(), ack)
		}
		return nil
	})
	// A GET's reply comes in a datagram before its ACK: read on, now
	// that fail-nth is disarmed, up to the ACK.
	for a.sendErr == nil && a.recvErr == nil {
		msgs, err := nlsock.ParseMessages(ack[:got])
		if err != nil || len(msgs) != 1 || msgs[0].Header.Sequence != r.seq {
			t.Fatalf("fail-nth %d: %s: want one reply or ACK of seq %d, got %d bytes (%v)", n, r.sock, r.seq, got, err)
		}
		if m := msgs[0]; m.Header.Type != netlink.Error {
			m.Data = append([]byte(nil), m.Data...) // ack is read into again
			a.replies = append(a.replies, m)
			got, a.recvErr = unix.Read(r.sock.FD(), ack)
			continue
		}
		if len(msgs[0].Data) < 4 {
			t.Fatalf("fail-nth %d: %s: a short ACK", n, r.sock)
		}
		a.ackErrno = int(-int32(binary.NativeEndian.Uint32(msgs[0].Data)))
		break
	}
	if a.recvErr != nil {
		// The read returned the socket's error (the ACK could not be
		// allocated) ahead of what was queued: a GET's reply. Read it
		// away, so that the next try starts on an empty queue.
		for {
			if _, _, err := r.sock.RecvInto(ack, 0); err != nil {
				break
			}
		}
	}
	return a
}

// pollerDeadline bounds the waits for the poller: to fall asleep, and to
// wake once the error is set. Both take milliseconds; only a failing case
// waits this long.
const pollerDeadline = 10 * time.Second

// poller is a thread asleep in ppoll() on a socket (POLLIN) and on an
// eventfd that stops it.
type poller struct {
	tid  int
	stp  int // the eventfd
	done chan pollResult
	res  *pollResult // once received from done
}

type pollResult struct {
	sock, stop int16 // revents
	err        error
}

func (r pollResult) String() string {
	if r.err != nil {
		return r.err.Error()
	}
	return fmt.Sprintf("revents %s on the socket, %s on the eventfd", pollEvents(r.sock), pollEvents(r.stop))
}

func pollEvents(ev int16) string {
	if ev == 0 {
		return "none"
	}
	var l []string
	for _, e := range []struct {
		bit  int16
		name string
	}{{unix.POLLIN, "POLLIN"}, {unix.POLLERR, "POLLERR"}, {unix.POLLHUP, "POLLHUP"}, {unix.POLLNVAL, "POLLNVAL"}} {
		if ev&e.bit != 0 {
			l = append(l, e.name)
			ev &^= e.bit
		}
	}
	if ev != 0 {
		l = append(l, fmt.Sprintf("%#x", ev))
	}
	return strings.Join(l, "|")
}

// startPoller starts the poller on s and returns once its thread sleeps in
// ppoll(): from then on only a wake-up of s's wait queue (or the eventfd)
// ends it. ppoll() blocks every signal while it waits, so no signal makes
// it return and poll again, which would see an error set meanwhile
// without a wake-up. The case's cleanup stops it.
func startPoller(t selftests.T, s *selftests.Sock) *poller {
	t.Helper()
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		t.Fatalf("eventfd: %v", err)
	}
	p := &poller{stp: efd, done: make(chan pollResult, 1)}
	tids := make(chan int, 1)
	go func() {
		var r pollResult
		err := netns.OnThread(func() error {
			fds := []unix.PollFd{{Fd: int32(s.FD()), Events: unix.POLLIN}, {Fd: int32(efd), Events: unix.POLLIN}}
			// The kernel's sigset_t: 64 signals. (x/sys's Ppoll
			// passes a sigsetsize of 0, which the kernel refuses
			// with EINVAL for any mask.)
			blockAll := ^uint64(0)
			tids <- unix.Gettid()
			_, _, errno := unix.Syscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)), 0,
				uintptr(unsafe.Pointer(&blockAll)), unsafe.Sizeof(blockAll), 0)
			r.sock, r.stop = fds[0].Revents, fds[1].Revents
			if errno != 0 {
				return errno
			}
			return nil
		})
		if err != nil {
			r.err = fmt.Errorf("ppoll: %w", err)
		}
		p.done <- r
	}()
	p.tid = <-tids
	t.Cleanup(func() { p.stop(t) })
	p.awaitSleep(t, s)
	return p
}

// awaitSleep waits until /proc shows the poller's thread asleep (state S)
// in ppoll.
func (p *poller) awaitSleep(t selftests.T, s *selftests.Sock) {
	t.Helper()
	awaitAsleep(t, p.tid, unix.SYS_PPOLL, fmt.Sprintf("%s: the poller", s), func(block bool) {
		var r pollResult
		if block {
			r = <-p.done
		} else {
			select {
			case r = <-p.done:
			default:
				return
			}
		}
		p.res = &r
		t.Fatalf("%s: ppoll() returned before anything happened: %s; queued: %s", s, r, queuedLines(s))
	})
}

// queuedLines reads what s holds, for a diagnostic.
func queuedLines(s *selftests.Sock) string {
	got, err := s.Transcript()
	var l []string
	for _, g := range got {
		l = append(l, g.String())
	}
	if err != nil {
		l = append(l, err.Error())
	}
	if len(l) == 0 {
		return "nothing"
	}
	return strings.Join(l, "; ")
}

// wait waits up to d for the poller to return by itself. If it does not,
// it stops it, and woken is false.
func (p *poller) wait(t selftests.T, d time.Duration) (_ pollResult, woken bool) {
	t.Helper()
	if p.res != nil {
		return *p.res, true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case r := <-p.done:
		p.res = &r
		return r, true
	case <-timer.C:
	case <-selftests.Done(t):
	}
	p.stop(t)
	return *p.res, false
}

// stop ends the poller (the eventfd) and waits for it; done more than
// once, it does nothing.
func (p *poller) stop(t selftests.T) {
	t.Helper()
	if p.stp < 0 {
		return
	}
	if p.res == nil {
		one := make([]byte, 8)
		binary.NativeEndian.PutUint64(one, 1)
		if _, err := unix.Write(p.stp, one); err != nil {
			t.Fatalf("stop the poller: eventfd: %v", err)
		}
		r := <-p.done
		p.res = &r
	}
	unix.Close(p.stp)
	p.stp = -1
}
