package selftests

// Delete drops the handle on n. Nothing is mounted here, so this is what
// `ip netns del` does: n lives on while anything else refers to it (a
// socket in it, the harness's control and sentinel sockets), but n can no
// longer be entered: no new socket can be opened in it, nor a sentinel
// for a socket that had none yet.
func (n *NS) Delete() {
	n.env.t.Helper()
	if err := n.NS.Close(); err != nil {
		n.env.t.Errorf("netns %s: close handle: %v", n.Name, err)
	}
}

// Release drops every reference the harness holds on n: its sentinel
// sockets, its control socket and then the handle. n lives on while a
// socket the case opened in it stays open, and the kernel destroys it
// (asynchronously, in cleanup_net()) once the last one is closed. After
// Release, n can no longer send requests or check transcripts; the case's
// cleanup closing the same objects again is harmless.
func (n *NS) Release() {
	n.env.t.Helper()
	for proto, s := range n.sentinels {
		if err := s.Close(); err != nil {
			n.env.t.Errorf("netns %s: %v", n.Name, err)
		}
		delete(n.sentinels, proto)
	}
	if err := n.Ctl.Close(); err != nil {
		n.env.t.Errorf("netns %s: control socket: %v", n.Name, err)
	}
	n.Delete()
}
