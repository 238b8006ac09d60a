// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"os"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/rtnl"
)

// scmCredentialsReported: a socket with SO_PASSCRED gets, with every
// datagram it reads, one SCM_CREDENTIALS control message with the
// sender's credentials, beside the netlink ones: the kernel's (pid, uid
// and gid 0) with a notification, to a local subscriber and to a
// LISTEN_ALL_NSID one in another netns alike, and with an ACK; a user
// sender's own (its process id, real uid and real gid) with a
// NETLINK_USERSOCK multicast and unicast. A socket without SO_PASSCRED
// gets none. Read without a control buffer, the datagram of an
// SO_PASSCRED socket comes whole and with MSG_CTRUNC (the credentials had
// nowhere to go), that of a socket without it (and without any option
// that adds a control message) without MSG_CTRUNC.
//
// Kernel: netlink_sendmsg(): scm_send(sock, msg, &scm, true) ->
// scm_set_cred(task_tgid(current), current_uid(), current_gid());
// NETLINK_CB(skb).creds = scm.creds. A kernel skb's credentials are zero:
// __alloc_skb() clears the control buffer, and clones copy it.
// netlink_recvmsg(): scm.creds = *NETLINK_CREDS(skb); scm_recv(): without
// msg_control, MSG_CTRUNC if SOCK_PASSCRED; with it, put_cmsg(SOL_SOCKET,
// SCM_CREDENTIALS, {pid, from_kuid_munged(), from_kgid_munged()}), after
// the NETLINK_PKTINFO and NETLINK_LISTEN_ALL_NSID control messages.
func scmCredentialsReported(t selftests.T) {
	s, o := selftests.NewNS(t, "S"), selftests.NewNS(t, "O")
	id := o.Map(s, 5).ID
	group := selftests.Join(unix.RTNLGRP_IPV4_IFADDR)
	cred := s.Socket("cred", selftests.PassCred(), group)
	credInfo := s.Socket("cred_pktinfo", selftests.PassCred(), selftests.With(unix.NETLINK_PKTINFO), group)
	plain := s.Socket("plain", group)
	allNSID := o.Socket("all_nsid_cred", selftests.PassCred(), selftests.With(unix.NETLINK_LISTEN_ALL_NSID), group)

	// A notification.
	add := s.AddAddr()
	expectCtrunc(t, cred, true)
	expectCtrunc(t, plain, false)
	cred.Expect(add.NewAddr())
	credInfo.Expect(add.NewAddr())
	plain.Expect(add.NewAddr())
	allNSID.Expect(add.NewAddr().NSID(id))

	// An ACK: NLMSG_NOOP with NLM_F_ACK is acknowledged and nothing else.
	seq := cred.Request(rtnl.Request{Name: "NLMSG_NOOP", Msg: netlink.Message{Header: netlink.Header{Type: netlink.Noop}}}, 0)
	cred.Expect(selftests.Ack(seq, cred.Portid()))

	// A user's multicast and unicast.
	usersock := selftests.Proto(unix.NETLINK_USERSOCK)
	us := s.Socket("us", usersock)
	ucred := s.Socket("ucred", usersock, selftests.PassCred(), selftests.Join(1))
	uplain := s.Socket("uplain", usersock, selftests.Join(1))
	sink := s.Socket("sink", usersock, selftests.PassCred())
	m := us.MustMulticast(sink.Portid(), 1)
	own := m.Creds(int32(os.Getpid()), uint32(os.Getuid()), uint32(os.Getgid()))
	ucred.Expect(own)
	sink.Expect(own)
	uplain.Expect(m)
	us.Expect()
}

// expectCtrunc peeks at the datagram at the head of k's queue without a
// control buffer and checks that it comes whole, with MSG_CTRUNC exactly
// when want.
func expectCtrunc(t selftests.T, k *selftests.Sock, want bool) {
	t.Helper()
	buf := make([]byte, 64<<10)
	n, flags, err := k.RecvInto(buf, unix.MSG_PEEK)
	switch {
	case err != nil:
		t.Errorf("%s: recvmsg(MSG_PEEK) without a control buffer: %v, want the queued notification", k, err)
	case flags&unix.MSG_TRUNC != 0:
		t.Errorf("%s: recvmsg(MSG_PEEK) into %d bytes: MSG_TRUNC (%d read), want the datagram whole", k, len(buf), n)
	case (flags&unix.MSG_CTRUNC != 0) != want:
		t.Errorf("%s: recvmsg(MSG_PEEK) without a control buffer: msg_flags %#x; MSG_CTRUNC %v, want %v (SO_PASSCRED %v)",
			k, flags, flags&unix.MSG_CTRUNC != 0, want, k.PassCred())
	}
}
