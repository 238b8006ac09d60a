package selftests

import (
	"os"
	"strings"

	"nlmcast/selftests/netns"
)

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
