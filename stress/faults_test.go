// SPDX-License-Identifier: GPL-2.0

package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/ktap"
	"nlmcast/selftests/nlsock"
	"nlmcast/stress/internal/verify"
)

// fakeFailslab makes a directory with failslab's knobs, each set to a
// value of its own, and returns it with those values.
func fakeFailslab(t *testing.T) (string, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	before := map[string]string{}
	for _, k := range failslabKnobs {
		v := "before-" + k
		if k == "times" {
			v = "7"
		}
		before[k] = v
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir, before
}

func knobsAre(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		b, err := os.ReadFile(filepath.Join(dir, k))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(b)); got != v {
			t.Errorf("%s is %q, want %q (not put back)", k, got, v)
		}
	}
}

// failslab's settings are put back on every way out of its setup and
// use: after a run, and after a write that fails halfway through the
// setup (a knob made unwritable).
func TestFailslabRestores(t *testing.T) {
	dir, before := fakeFailslab(t)
	f := &failslab{mark: filepath.Join(dir, "mark"), saved: map[string]string{}}
	if err := f.setUp(dir); err != nil {
		t.Fatal(err)
	}
	knobsAre(t, dir, map[string]string{"probability": "0", "task-filter": "Y", "times": "1000000000"})
	if err := f.start(5); err != nil {
		t.Fatal(err)
	}
	knobsAre(t, dir, map[string]string{"probability": "5"})
	if err := f.close(); err != nil {
		t.Fatal(err)
	}
	knobsAre(t, dir, before)

	// "space" is set after probability, interval and times: its write
	// fails, once; the knobs set before it are put back.
	dir, before = fakeFailslab(t)
	failed := false
	f = &failslab{saved: map[string]string{}, write: func(name string, data []byte) error {
		if filepath.Base(name) == "space" && !failed {
			failed = true
			return os.ErrPermission
		}
		return os.WriteFile(name, data, 0)
	}}
	if err := f.setUp(dir); err == nil || !strings.Contains(err.Error(), "to space") {
		t.Fatalf("setUp with an unwritable knob: %v, want its error", err)
	}
	knobsAre(t, dir, before)
}

// A sender that cannot set up (here its CPU pinning fails, before it
// marks its thread) fails the fault mode at once, with nothing injected,
// and failslab's settings are put back. Before, the run waited for the
// mark that never came, until the case's deadline, and the settings
// stayed as the mode had set them (probability 0, task filter on). The
// failslab here is a directory of knobs (the host has none); on P-fault
// the same flag runs against the real one.
func TestSetupFailureEndsTheModeAtOnce(t *testing.T) {
	requireRoot(t)
	dir, before := fakeFailslab(t)
	mark := filepath.Join(dir, "mark")
	old := openInjection
	t.Cleanup(func() { openInjection = old })
	openInjection = func() (*failslab, string, error) {
		f := &failslab{mark: mark, saved: map[string]string{}}
		return f, "", f.setUp(dir)
	}
	start := time.Now()
	code, out := runProgram(t, "-t", "faults0", "-duration", "60s", "-idle", "16", "-deadline", "100s", "-inject-setup-failure")
	took := time.Since(start)
	if code != ktap.ExitFail || !strings.Contains(out, "not ok 1 "+program+".faults0") || strings.Contains(out, "TIMEOUT") {
		t.Fatalf("exit %d, want %d and a failure without TIMEOUT; output:\n%s", code, ktap.ExitFail, out)
	}
	if !strings.Contains(out, "sender S0: sched_setaffinity(CPU ") {
		t.Errorf("the failure does not name the sender's setup:\n%s", out)
	}
	if took > 30*time.Second {
		t.Errorf("the mode took %s to fail, with -duration 60s: it waited", took)
	}
	knobsAre(t, dir, before)
	if !strings.Contains(out, "failslab's settings put back: probability=before-probability interval=before-interval times=7") {
		t.Errorf("the restore is not said:\n%s", out)
	}
}

// The observer (foreign, LISTEN_ALL_NSID: netlink_set_err() does not reach
// it) misses an RTM_NEWADDR that no socket got, with no ENOBUFS. Without
// the sender's echo (the old judge), it is excused as never sent. With the
// echo read, the walk ran for it: the mode fails. Without an echo though
// the request was ACKed (no ENOBUFS at the sender), it was never sent:
// excused, and counted so; a socket that got it all the same fails the
// mode.
func TestEchoProvesSentInTheJudge(t *testing.T) {
	judge := func(echo verify.Echo, receipt bool) outcome {
		return judgeMissedMiddle(receipt, func(m []verify.Msg) map[verify.Msg]verify.Echo {
			e := map[verify.Msg]verify.Echo{m[0]: verify.Echoed, m[2]: verify.Echoed}
			if echo != verify.EchoUnknown {
				e[m[1]] = echo
			}
			return e
		})
	}
	if out := judge(verify.EchoUnknown, false); len(out.problems) != 0 || out.report.Undelivered != 1 {
		t.Fatalf("without the echo: problems %q, undelivered %d; want the loss excused as never sent", out.problems, out.report.Undelivered)
	}
	out := judge(verify.Echoed, false)
	if !strings.Contains(strings.Join(out.problems, "\n"), "observer, from sender S0 (nsid 10): lost without an ENOBUFS to account for it") {
		t.Fatalf("with the sender's echo: problems %q; want the loss", out.problems)
	}
	if p := out.report.Proofs; p == nil || p.ByEcho != 3 || p.ByEchoOnly != 1 || p.ByReceipts != 2 {
		t.Errorf("proofs %+v, want 3 by echo (1 only by it), 2 by receipts", p)
	}
	out = judge(verify.NotEchoed, false)
	if len(out.problems) != 0 || out.report.Undelivered != 1 || out.report.Proofs.NeverSent != 1 {
		t.Fatalf("ACKed without an echo: problems %q, undelivered %d, proofs %+v; want the loss excused, 1 never sent", out.problems, out.report.Undelivered, out.report.Proofs)
	}
	out = judge(verify.NotEchoed, true)
	if !strings.Contains(strings.Join(out.problems, "\n"), "was received by a socket, though its request was ACKed with no echo") {
		t.Fatalf("received though not echoed: problems %q; want the contradiction", out.problems)
	}
}

// scriptedSocket is a control socket that returns what a test scripted,
// one recvmsg() at a time, then nothing.
type scriptedSocket struct {
	reads []any // nlsock.Datagram or error
}

func (c *scriptedSocket) Recv() (nlsock.Datagram, error) {
	if len(c.reads) == 0 {
		return nlsock.Datagram{}, nlsock.ErrEmpty
	}
	r := c.reads[0]
	c.reads = c.reads[1:]
	if err, ok := r.(error); ok {
		return nlsock.Datagram{}, err
	}
	return r.(nlsock.Datagram), nil
}

func (c *scriptedSocket) Wait(time.Duration) (bool, error) { return len(c.reads) > 0, nil }

// ackOf is the kernel's ACK (NETLINK_CAP_ACK: the request's header only)
// of request seq, with errno.
func ackOf(seq uint32, errno unix.Errno) nlsock.Datagram {
	data := make([]byte, 4+unix.NLMSG_HDRLEN)
	binary.NativeEndian.PutUint32(data, uint32(-int32(errno)))
	return nlsock.Datagram{Msgs: []netlink.Message{{Header: netlink.Header{Type: netlink.Error, Sequence: seq}, Data: data}}}
}

// echoOf is the kernel's echo of an address request: the notification,
// with the request's seq and the sender's portid.
func echoOf(s *sender, p planned, seq uint32) nlsock.Datagram {
	return nlsock.Datagram{Msgs: []netlink.Message{{Header: netlink.Header{Type: netlink.HeaderType(p.echo), Sequence: seq, PID: s.pid}, Data: p.req.Msg.Data}}}
}

// The echoes of one batch: read before each ACK, an echo proves its
// notification sent; an ACK with none before it, and no ENOBUFS on the
// socket, proves it never sent. An ENOBUFS anywhere in the batch (an ACK
// not allocated, or the socket's overrun, which drops every unicast until
// it is read empty) leaves a missing echo unknown; an echo read is still
// proof. RTM_NEWSTATS is never echoed.
func TestEchoesOfABatch(t *testing.T) {
	seqs := []uint32{1, 2, 3, 4} // add, replace, stats, del
	batch := func(reads func(s *sender, plan []planned) []any) (*sender, []planned, error) {
		s := faultySender()
		plan := s.cycle()
		got, err := s.readACKs(&scriptedSocket{reads: reads(s, plan)}, plan, seqs)
		if err == nil {
			err = s.record(plan, seqs, make([]verify.Span, len(plan)), got)
		}
		return s, plan, err
	}
	want := func(t *testing.T, s *sender, plan []planned, states map[int]verify.Echo) {
		t.Helper()
		if len(s.echoes) != len(states) {
			t.Errorf("echoes %v, want %d", s.echoes, len(states))
		}
		for i, e := range states {
			m := plan[i].expect(seqs[i])[0]
			if s.echoes[m] != e {
				t.Errorf("request %d (%s): echo state %d, want %d", i, plan[i].req.Name, s.echoes[m], e)
			}
		}
	}
	s, plan, err := batch(func(s *sender, p []planned) []any {
		return []any{echoOf(s, p[0], 1), ackOf(1, 0), ackOf(2, 0), ackOf(3, 0), echoOf(s, p[3], 4), ackOf(4, 0)}
	})
	if err != nil {
		t.Fatal(err)
	}
	want(t, s, plan, map[int]verify.Echo{0: verify.Echoed, 1: verify.NotEchoed, 3: verify.Echoed})
	if f := s.faultCounts; f.Echoed != 2 || f.NotEchoed != 1 || f.EchoesUnknown != 0 {
		t.Errorf("counts %+v", f)
	}

	// The ACK of the replace was lost (ENOBUFS): the replace's and the
	// delete's missing echoes say nothing; the add's echo is still read.
	s, plan, err = batch(func(s *sender, p []planned) []any {
		return []any{unix.ENOBUFS, echoOf(s, p[0], 1), ackOf(1, 0), ackOf(3, 0), ackOf(4, 0)}
	})
	if err != nil {
		t.Fatal(err)
	}
	want(t, s, plan, map[int]verify.Echo{0: verify.Echoed})
	if f := s.faultCounts; f.Echoed != 1 || f.NotEchoed != 0 || f.EchoesUnknown != 2 || f.ACKsLost != 1 {
		t.Errorf("counts %+v", f)
	}

	// An echo after its ACK, a second echo, an echo of a request that is
	// not echoed, or one that differs from the notification: the kernel
	// broke its rules, and the sender says so.
	for name, reads := range map[string]func(s *sender, p []planned) []any{
		"after its ACK": func(s *sender, p []planned) []any { return []any{ackOf(1, 0), echoOf(s, p[0], 1)} },
		"not echoed": func(s *sender, p []planned) []any {
			return []any{ackOf(1, 0), ackOf(2, 0), echoOf(s, p[0], 3)}
		},
		"twice": func(s *sender, p []planned) []any { return []any{echoOf(s, p[0], 1), echoOf(s, p[0], 1)} },
		"different": func(s *sender, p []planned) []any {
			e := echoOf(s, p[0], 1)
			e.Msgs[0].Header.PID = 5
			return []any{e, ackOf(1, 0), ackOf(2, 0), ackOf(3, 0), ackOf(4, 0)}
		},
	} {
		_, _, err := batch(reads)
		t.Logf("%s: %v", name, err)
		if err == nil || !strings.Contains(err.Error(), "RTM_NEWADDR") {
			t.Errorf("an echo %s: %v, want an error naming it", name, err)
		}
	}
}
