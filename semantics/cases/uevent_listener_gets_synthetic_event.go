// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"math/rand/v2"

	"golang.org/x/sys/unix"

	"nlmcast/selftests"
	"nlmcast/selftests/nlsock"
)

// uevent multicast: the kernel sends NETLINK_KOBJECT_UEVENT's uevents to
// group 1 (its table has 32, netlink_kernel_create()'s least), and a device
// that is not a network device (here the mem class's "full") announces
// its uevents to that group of every network namespace the initial user
// namespace owns.
const (
	ueventGroup = 1
	ueventFile  = "/sys/devices/virtual/mem/full/uevent"
	ueventPath  = "/devices/virtual/mem/full"
)

// ueventListenerGetsSyntheticEvent: a synthetic uevent (a "change" with a
// UUID written to a device's uevent file) is multicast to group 1 of
// NETLINK_KOBJECT_UEVENT, the one the kernel uses: a member in
// S and one in F each get it exactly once, from the kernel (nl_pid 0,
// nl_groups 1) with root's credentials (SO_PASSCRED), as "change@DEVPATH"
// and its environment, SYNTH_UUID the one written; a socket of S without
// the group gets nothing; and the write() reports every byte written.
// The uevent goes to every namespace's listeners, the host's too (udev
// re-applies its rules to the device), so only the copies with this
// case's UUID are counted.
//
// Kernel: uevent_store() -> kobject_synth_uevent() ->
// kobject_uevent_env() -> kobject_uevent_net_broadcast() ->
// uevent_net_broadcast_untagged(): for each uevent socket on
// uevent_sock_list (those of namespaces owned by init_user_ns,
// uevent_net_init()): if (!netlink_has_listeners(uevent_sock, 1))
// continue; netlink_broadcast(uevent_sock, skb_get(skb), 0, 1,
// GFP_KERNEL), whose 0 (delivered) or -ESRCH (no one) the write turns
// into its byte count: if (rc) return rc; return count.
func ueventListenerGetsSyntheticEvent(t selftests.T) {
	if !selftests.InInitialUserNS() {
		t.Skipf("needs the initial user namespace: uevents reach only the network namespaces it owns (uevent_net_init()), and this process is root of a child user namespace only")
	}
	if _, err := os.Stat(ueventFile); err != nil {
		t.Skipf("no uevent file to write: %v (needs sysfs at /sys and the mem class's \"full\" device)", err)
	}
	s, f := selftests.NewNS(t, "S"), selftests.NewNS(t, "F")
	uevent := selftests.Proto(unix.NETLINK_KOBJECT_UEVENT)
	us := s.Socket("us", uevent, selftests.Join(ueventGroup), selftests.PassCred())
	uf := f.Socket("uf", uevent, selftests.Join(ueventGroup), selftests.PassCred())
	bare := s.Socket("bare", uevent)

	uuid := newUUID()
	action := "change " + uuid
	file, err := os.OpenFile(ueventFile, os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("cannot write %s: %v", ueventFile, err)
	}
	n, err := file.Write([]byte(action))
	file.Close()
	if err != nil || n != len(action) {
		t.Fatalf("write(%s, %q): %d, %v; want %d (netlink_broadcast() delivered: 0, which the write turns into its byte count)", ueventFile, action, n, err, len(action))
	}

	// The broadcast is made inside write(): both copies are queued by now.
	for _, r := range []*selftests.Sock{us, uf} {
		got := 0
		for {
			payload, d, err := r.RecvPayload()
			if errors.Is(err, nlsock.ErrEmpty) {
				break
			}
			if err != nil {
				t.Fatalf("%s (netns %s): %v", r, r.NS().Name, err)
			}
			env := ueventEnv(payload)
			if env["SYNTH_UUID"] != uuid {
				continue // another uevent of the machine's
			}
			got++
			head, _, _ := bytes.Cut(payload, []byte{0})
			if problem := ueventProblem(string(head), env, d, uuid); problem != "" {
				t.Errorf("%s (netns %s): the synthetic uevent: %s\n\tgot: %q", r, r.NS().Name, problem, payload)
			}
		}
		if got != 1 {
			t.Errorf("%s (netns %s), a member of group %d: %d copies of the uevent with SYNTH_UUID=%s; want exactly 1", r, r.NS().Name, ueventGroup, got, uuid)
		}
	}
	if payload, _, err := bare.RecvPayload(); !errors.Is(err, nlsock.ErrEmpty) {
		t.Errorf("%s (netns %s), in no group: %q, %v; want nothing queued", bare, bare.NS().Name, payload, err)
	}
}

// ueventProblem says what is wrong with a copy of the synthetic uevent
// whose first string is head, environment env and datagram d: "" if
// nothing.
func ueventProblem(head string, env map[string]string, d nlsock.Datagram, uuid string) string {
	var bad []string
	if want := "change@" + ueventPath; head != want {
		bad = append(bad, fmt.Sprintf("begins %q, want %q", head, want))
	}
	for k, v := range map[string]string{"ACTION": "change", "DEVPATH": ueventPath, "SUBSYSTEM": "mem", "SYNTH_UUID": uuid} {
		if env[k] != v {
			bad = append(bad, fmt.Sprintf("%s=%q, want %q", k, env[k], v))
		}
	}
	if d.FromPid != 0 || d.FromMask != 1<<(ueventGroup-1) {
		bad = append(bad, fmt.Sprintf("from nl_pid %d nl_groups %#x, want the kernel (0) and group %d (%#x)", d.FromPid, d.FromMask, ueventGroup, 1<<(ueventGroup-1)))
	}
	if c := d.Creds; c == nil || c.Pid != 0 || c.Uid != 0 || c.Gid != 0 {
		bad = append(bad, fmt.Sprintf("credentials %+v, want pid 0 uid 0 gid 0", c))
	}
	if d.NSID != nil || d.Group != nil {
		bad = append(bad, "a NETLINK_LISTEN_ALL_NSID or NETLINK_PKTINFO control message the socket did not ask for")
	}
	return strings.Join(bad, "; ")
}

// ueventEnv is a uevent's KEY=VALUE strings after its first
// ("ACTION@DEVPATH"); a key the kernel wrote twice has the value
// "(twice)", which no check accepts.
func ueventEnv(payload []byte) map[string]string {
	env := map[string]string{}
	fields := bytes.Split(payload, []byte{0})
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(string(f), "=")
		if !ok {
			continue
		}
		if _, dup := env[k]; dup {
			env[k] = "(twice)"
			continue
		}
		env[k] = v
	}
	return env
}

// newUUID is a random version 4 UUID, as kobject_synth_uevent() accepts.
// It needs to be unique, not secret: math/rand/v2 is seeded by the runtime
// from the auxiliary vector, where crypto/rand's getrandom() would wait,
// on a freshly booted guest, for the kernel's entropy pool (a second on
// 6.1 under QEMU).
func newUUID() string {
	var b [16]byte
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
