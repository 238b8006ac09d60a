package selftests

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"nlmcast/selftests/netns"
)

// MCIndexSysctl is the switch the kernel series adds. It exists only in the
// initial namespace and only on kernels with the feature.
const MCIndexSysctl = "net/core/netlink_route_mc_index"

// ReadSysctl reads /proc/sys/<name> (e.g. "net/ipv4/nexthop_compat_mode")
// as seen from inside ns, without the trailing newline. /proc/sys/net
// follows the reading thread's namespace.
func ReadSysctl(ns *netns.NS, name string) (string, error) {
	var v string
	err := ns.Do(func() error {
		b, err := os.ReadFile("/proc/sys/" + name)
		v = strings.TrimSpace(string(b))
		return err
	})
	return v, err
}

// WriteSysctl writes value to /proc/sys/<name> inside ns.
func WriteSysctl(ns *netns.NS, name, value string) error {
	return ns.Do(func() error {
		f, err := os.OpenFile("/proc/sys/"+name, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = f.WriteString(value)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	})
}

// initOnlySysctl exists only in the initial network namespace (it is in
// net/core's init_net-only table on every kernel), which makes it a probe
// for "is this the initial namespace?".
const initOnlySysctl = "net/core/rmem_max"

// InitialNS returns a handle on the machine's initial network namespace,
// the only one where init_net-only sysctls such as MCIndexSysctl exist. It
// is the namespace the program started in, unless a runner started it in a
// namespace of its own (run_kselftest.sh -n): then it is pid 1's, when
// /proc/1/ns/net can be opened.
func InitialNS() (*netns.NS, error) {
	origin, err := netns.Origin()
	if err != nil {
		return nil, err
	}
	if isInitial(origin) {
		return origin, nil
	}
	origin.Close()
	pid1, err := netns.Open("init", "/proc/1/ns/net")
	if err != nil {
		return nil, fmt.Errorf("started outside the initial network namespace, and %w", err)
	}
	if !isInitial(pid1) {
		pid1.Close()
		return nil, errors.New("neither the network namespace the program started in nor pid 1's is the initial one")
	}
	return pid1, nil
}

func isInitial(ns *netns.NS) bool {
	err := ns.Do(func() error {
		_, err := os.Stat("/proc/sys/" + initOnlySysctl)
		return err
	})
	return err == nil
}
