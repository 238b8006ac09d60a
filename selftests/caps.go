package selftests

import (
	"fmt"

	"golang.org/x/sys/unix"

	"nlmcast/selftests/netns"
)

// WithoutCapability runs fn on a thread of its own whose effective set
// lacks capability (unix.CAP_NET_BROADCAST, unix.CAP_NET_ADMIN, ...).
// Capabilities belong to a thread and the thread is retired afterwards, so
// nothing else in the program loses it. A socket fn opens keeps the
// thread's credentials as its file credentials for good.
func WithoutCapability(capability int, fn func() error) error {
	return netns.OnThread(func() error {
		if err := DropCapability(capability); err != nil {
			return err
		}
		return fn()
	})
}

// DropCapability removes capability from the calling thread's effective
// set. Call it only on a thread that is retired afterwards (inside
// netns.NS.Do or netns.OnThread).
func DropCapability(capability int) error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	data[capability/32].Effective &^= 1 << (capability % 32)
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset without capability %d: %w", capability, err)
	}
	return nil
}
