// SPDX-License-Identifier: GPL-2.0

package selftests

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"nlmcast/selftests/netns"
	"nlmcast/selftests/nlsock"
)

// A Go program cannot unshare(CLONE_NEWUSER): the kernel refuses it to a
// multithreaded process. A socket whose opener is root of a child user
// namespace therefore comes from a helper process: this program re-executed
// with userNSHelperEnv set, cloned into a new user namespace and a new
// network namespace inside it. The helper opens the socket, passes it and a
// handle on its namespace back over a unix socket (SCM_RIGHTS), and exits;
// the socket keeps the helper's credentials (file->f_cred), which is what
// the kernel checks for delivery (file_ns_capable()).

// userNSHelperEnv, when present in the environment, turns the program into
// the helper. Its value is the netlink protocol of the socket to open.
const userNSHelperEnv = "NLMC_USERNS_HELPER"

// helperFD is where the helper finds its end of the socketpair
// (exec.Cmd.ExtraFiles[0]).
const helperFD = 3

// init runs before main and before the go test binary parses its flags, so
// both kinds of binary act as the helper with no code of their own.
func init() {
	proto, ok := os.LookupEnv(userNSHelperEnv)
	if !ok {
		return
	}
	if err := runUserNSHelper(proto); err != nil {
		fmt.Fprintf(os.Stderr, "user namespace helper: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// runUserNSHelper is the whole life of the helper: it reads no input and
// writes nothing to stdout.
func runUserNSHelper(proto string) error {
	p, err := strconv.Atoi(proto)
	if err != nil {
		return fmt.Errorf("%s=%q: %w", userNSHelperEnv, proto, err)
	}
	sock, err := nlsock.OpenHere(p, "helper", "of the helper")
	if err != nil {
		return err
	}
	ns, err := unix.Open("/proc/self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open /proc/self/ns/net: %w", err)
	}
	if err := unix.Sendmsg(helperFD, []byte{0}, unix.UnixRights(sock.FD(), ns), nil, 0); err != nil {
		return fmt.Errorf("sendmsg(SCM_RIGHTS): %w", err)
	}
	return nil
}

// errNoUserNS marks a failure to create a user namespace at all: the kernel
// has none (EINVAL), forbids them (EPERM, e.g. a seccomp policy), or allows
// no more (ENOSPC, user.max_user_namespaces).
var errNoUserNS = errors.New("cannot create a user namespace")

// NewUserNS creates a network namespace owned by a new user namespace whose
// root is a helper process, and returns it with the unbound netlink socket of
// protocol proto that the helper opened in it: sockName's opener is root of
// the child user namespace and has no capability over any other. Everything
// else in the namespace (its control socket, sentinels, lo up, ids) is done
// by this process, which as root of the parent user namespace may.
//
// When user namespaces are unavailable, NewUserNS returns an error wrapping
// errNoUserNS, for the case to skip with once it has checked what needs
// none. Any other failure fails the case.
func NewUserNS(t T, name, sockName string, proto int) (*NS, *Sock, error) {
	t.Helper()
	sockFD, nsFD, err := startUserNSHelper(proto)
	if errors.Is(err, errNoUserNS) {
		return nil, nil, err
	}
	if err != nil {
		t.Fatalf("netns %s: %v", name, err)
	}
	ns := netns.FromFD(name, nsFD)
	t.Cleanup(func() { ns.Close() })
	s := nlsock.FromFD(sockFD, proto, sockName, name)
	t.Cleanup(func() { s.Close() })
	n := prepare(t, ns)
	return n, &Sock{Socket: s, ns: n}, nil
}

// startUserNSHelper runs the helper and receives its socket and namespace.
func startUserNSHelper(proto int) (sockFD, nsFD int, err error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, -1, fmt.Errorf("socketpair: %w", err)
	}
	defer unix.Close(pair[0])
	theirs := os.NewFile(uintptr(pair[1]), "user namespace helper socket")

	cmd := exec.Command("/proc/self/exe")
	cmd.Env = append(os.Environ(), userNSHelperEnv+"="+strconv.Itoa(proto))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr // stdin and stdout are /dev/null
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  unix.CLONE_NEWUSER | unix.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
	}
	err = cmd.Start()
	theirs.Close()
	if err != nil {
		const flags = "clone(CLONE_NEWUSER|CLONE_NEWNET)"
		for _, errno := range []unix.Errno{unix.EPERM, unix.EINVAL, unix.ENOSPC} {
			if errors.Is(err, errno) {
				return -1, -1, fmt.Errorf("%w: %s: %v", errNoUserNS, flags, err)
			}
		}
		return -1, -1, fmt.Errorf("start user namespace helper (%s): %w", flags, err)
	}
	if err := cmd.Wait(); err != nil {
		return -1, -1, fmt.Errorf("user namespace helper: %v: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	return receiveFDs(pair[0])
}

// receiveFDs reads the helper's one message, carrying a socket and an nsfs
// file in that order. The helper has exited, so it is queued already.
func receiveFDs(fd int) (sockFD, nsFD int, err error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(2*4))
	_, oobn, flags, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_DONTWAIT|unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return -1, -1, fmt.Errorf("receive from user namespace helper: %w", err)
	}
	if flags&unix.MSG_CTRUNC != 0 {
		return -1, -1, errors.New("receive from user namespace helper: control data truncated")
	}
	cmsgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return -1, -1, fmt.Errorf("receive from user namespace helper: %w", err)
	}
	var fds []int
	for _, c := range cmsgs {
		got, err := unix.ParseUnixRights(&c)
		if err != nil {
			return -1, -1, fmt.Errorf("receive from user namespace helper: %w", err)
		}
		fds = append(fds, got...)
	}
	if len(fds) != 2 {
		for _, f := range fds {
			unix.Close(f)
		}
		return -1, -1, fmt.Errorf("user namespace helper sent %d file descriptors, want 2", len(fds))
	}
	return fds[0], fds[1], nil
}
