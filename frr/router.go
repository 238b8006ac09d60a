// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"nlmcast/selftests/netns"
	"nlmcast/selftests/rtnl"
)

// router is one FRR router: a network namespace of its own, a private
// directory (its pathspace: /run and /var/tmp of its daemons, their
// configuration and logs) and the keeper that runs zebra and bgpd in it.
type router struct {
	Name string
	NS   *netns.NS
	Ctl  *rtnl.Conn
	Dir  string
	// StubIndex is the ifindex of the router's stub link, which the
	// observer prints with each of its address events.
	StubIndex uint32

	keeper *started
	kerr   lockedBuffer // the keeper's stderr

	mu      sync.Mutex
	pids    map[string]int // daemon -> pid in the keeper's pid namespace
	exits   []string       // "zebra: signal: killed", in order
	failure string         // the keeper's "fail" line
	readyCh chan struct{}  // closed when every daemon is ready, or on failure
}

// routerSysctls make a namespace a router: forwarding on, IPv6 on (the
// harness's NS turns it off for counting; a router needs it) and no
// duplicate address detection, so that IPv6 addresses are usable at once
// instead of tentative for a second.
var routerSysctls = [][2]string{
	{"net/ipv4/ip_forward", "1"},
	{"net/ipv6/conf/all/disable_ipv6", "0"},
	{"net/ipv6/conf/default/disable_ipv6", "0"},
	{"net/ipv6/conf/all/accept_dad", "0"},
	{"net/ipv6/conf/default/accept_dad", "0"},
	{"net/ipv6/conf/all/forwarding", "1"},
	{"net/ipv6/conf/default/forwarding", "1"},
}

// newNamespace makes a namespace with a control socket and lo up.
func newNamespace(name string, sysctls [][2]string) (*netns.NS, *rtnl.Conn, error) {
	ns, err := netns.New(name)
	if err != nil {
		return nil, nil, err
	}
	for _, kv := range sysctls {
		if err := ns.WriteSysctl(kv[0], kv[1]); err != nil {
			ns.Close()
			return nil, nil, fmt.Errorf("netns %s: %s=%s: %w", name, kv[0], kv[1], err)
		}
	}
	ctl, err := rtnl.Dial(ns)
	if err != nil {
		ns.Close()
		return nil, nil, err
	}
	if _, err := ctl.Do(rtnl.SetUp(rtnl.LoopbackIndex, true)); err != nil {
		ctl.Close()
		ns.Close()
		return nil, nil, fmt.Errorf("netns %s: %w", name, err)
	}
	return ns, ctl, nil
}

func newRouter(name, labDir string) (*router, error) {
	ns, ctl, err := newNamespace(name, routerSysctls)
	if err != nil {
		return nil, err
	}
	r := &router{Name: name, NS: ns, Ctl: ctl, Dir: filepath.Join(labDir, name),
		pids: map[string]int{}, readyCh: make(chan struct{})}
	return r, nil
}

// do sends a request from the router's control socket.
func (r *router) do(req rtnl.Request) error {
	_, err := r.Ctl.Do(req)
	if err != nil {
		return fmt.Errorf("router %s: %w", r.Name, err)
	}
	return nil
}

// link returns the ifindex of the interface called name.
func (r *router) link(name string) (uint32, error) {
	rep, err := r.Ctl.Do(rtnl.GetLink(name))
	if err != nil {
		return 0, fmt.Errorf("router %s: %w", r.Name, err)
	}
	if len(rep.Msgs) != 1 {
		return 0, fmt.Errorf("router %s: RTM_GETLINK %s: %d replies", r.Name, name, len(rep.Msgs))
	}
	return rtnl.LinkIndex(rep.Msgs[0])
}

// kernel dumps the router's routes, nexthops and addresses.
func (r *router) kernel() (kstate, error) {
	s, err := dumpKernel(r.Ctl)
	if err != nil {
		return s, fmt.Errorf("router %s: %w", r.Name, err)
	}
	return s, nil
}

// start writes the daemons' configuration and starts the keeper. It
// returns once every daemon has opened its vty socket, or once stop is
// closed (the program is stopping or gave up on the step).
func (r *router) start(frr frrInstall, bgpdConf string, within time.Duration, stop <-chan struct{}) error {
	run, vartmp := filepath.Join(r.Dir, "run"), filepath.Join(r.Dir, "vartmp")
	for _, d := range []string{filepath.Join(run, "frr"), vartmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	// The daemons drop to the frr user: their state directory is theirs,
	// and /var/tmp is world-writable as usual.
	if err := os.Chown(filepath.Join(run, "frr"), frr.UID, frr.GID); err != nil {
		return err
	}
	if err := os.Chmod(vartmp, 0o1777); err != nil {
		return err
	}
	zconf, bconf := filepath.Join(r.Dir, "zebra.conf"), filepath.Join(r.Dir, "bgpd.conf")
	if err := os.WriteFile(zconf, []byte("hostname "+r.Name+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(bconf, []byte(bgpdConf), 0o644); err != nil {
		return err
	}
	daemon := func(name, conf string) daemonSpec {
		return daemonSpec{Name: name, Log: r.logPath(name), Ready: "/var/run/frr/" + name + ".vty",
			Argv: []string{filepath.Join(frr.Dir, name), "-f", conf, "--log", "stdout", "--log-level", "info"}}
	}
	spec, err := json.Marshal(keeperSpec{
		// /var/run is usually a symlink to /run: the mount follows it.
		Binds:       []bindMount{{run, "/var/run"}, {vartmp, "/var/tmp"}},
		Daemons:     []daemonSpec{daemon("zebra", zconf), daemon("bgpd", bconf)},
		ReadyWithin: within,
	})
	if err != nil {
		return err
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Args[0] = "netlink_mcast_frr-keeper-" + r.Name
	cmd.Env = append(os.Environ(), keeperEnv+"="+string(spec))
	cmd.Stderr = &r.kerr
	out, err := outputPipe(cmd)
	if err != nil {
		return err
	}
	r.keeper, err = startIn(r.NS, cmd, unix.CLONE_NEWNS|unix.CLONE_NEWPID)
	if err != nil {
		out.Close()
		return fmt.Errorf("router %s: keeper: %w", r.Name, err)
	}
	go r.listen(out, 2)
	select {
	case <-r.readyCh:
	case <-time.After(2*within + 5*time.Second): // the keeper gives each daemon within, one after the other
		return fmt.Errorf("router %s: daemons not ready within %v each", r.Name, within)
	case <-stop:
		return fmt.Errorf("router %s: stopped while its daemons were starting", r.Name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failure != "" {
		return fmt.Errorf("router %s: %s%s", r.Name, r.failure, r.keeperStderr())
	}
	return nil
}

// listen reads the keeper's reports until it exits.
func (r *router) listen(out *os.File, daemons int) {
	sc := bufio.NewScanner(out)
	once := sync.OnceFunc(func() { close(r.readyCh) })
	defer once()
	defer out.Close()
	for sc.Scan() {
		verb, rest, _ := strings.Cut(sc.Text(), " ")
		r.mu.Lock()
		switch verb {
		case "ready":
			name, pid, _ := strings.Cut(rest, " ")
			r.pids[name], _ = strconv.Atoi(pid)
			if len(r.pids) == daemons {
				once()
			}
		case "exit":
			name, st, _ := strings.Cut(rest, " ")
			r.exits = append(r.exits, name+": "+st)
		case "fail":
			r.failure = rest
			once()
		}
		r.mu.Unlock()
	}
}

func (r *router) keeperStderr() string {
	if s := strings.TrimSpace(r.kerr.String()); s != "" {
		return "; keeper stderr: " + oneLine(s)
	}
	return ""
}

// dead says which of the router's daemons have ended, or "".
func (r *router) dead() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case len(r.exits) > 0:
		return fmt.Sprintf("router %s: daemon ended: %s", r.Name, strings.Join(r.exits, ", "))
	case r.keeper != nil && r.keeper.Exited():
		return fmt.Sprintf("router %s: its keeper (and with it every daemon) ended: %v%s", r.Name, r.keeper.err, r.keeperStderr())
	}
	return ""
}

// pid returns the host pid of a daemon, from /proc: the keeper reports
// pids in its own pid namespace (NSpid's last field).
func (r *router) hostPID(daemon string) (int, error) {
	r.mu.Lock()
	inner, ok := r.pids[daemon]
	keeper := r.keeper
	r.mu.Unlock()
	if !ok || keeper == nil {
		return 0, fmt.Errorf("router %s: no %s", r.Name, daemon)
	}
	kids, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", keeper.Cmd.Process.Pid, keeper.Cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, f := range strings.Fields(string(kids)) {
		pid, _ := strconv.Atoi(f)
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(st), "\n") {
			if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
				ids := strings.Fields(v)
				if len(ids) > 0 && ids[len(ids)-1] == strconv.Itoa(inner) {
					return pid, nil
				}
			}
		}
	}
	return 0, fmt.Errorf("router %s: %s (pid %d in its pid namespace) not found among the keeper's children", r.Name, daemon, inner)
}

func (r *router) logPath(daemon string) string { return filepath.Join(r.Dir, daemon+".log") }

// logTail returns the last n lines of a daemon's log.
func (r *router) logTail(daemon string, n int) []string {
	b, err := os.ReadFile(r.logPath(daemon))
	if err != nil {
		return []string{err.Error()}
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// vtysh runs FRR's shell against one daemon of the router: a real client
// of the daemon's vty socket, reached through the router's directory. It
// runs the commands in turn and prints their outputs one after another.
func (r *router) vtysh(frr frrInstall, daemon string, commands []string, within time.Duration) ([]byte, error) {
	args := []string{"--vty_socket", filepath.Join(r.Dir, "run", "frr"), "-d", daemon}
	for _, c := range commands {
		args = append(args, "-c", c)
	}
	command := strings.Join(commands, "; ")
	cmd := exec.Command(frr.Vtysh, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	p, err := startIn(nil, cmd, 0)
	if err != nil {
		return nil, err
	}
	select {
	case <-p.done:
	case <-time.After(within):
		p.Kill(syscall.SIGKILL)
		<-p.done
		return nil, fmt.Errorf("router %s: vtysh -d %s -c %q: no answer within %v", r.Name, daemon, command, within)
	}
	if p.err != nil {
		return nil, fmt.Errorf("router %s: vtysh -d %s -c %q: %v: %s", r.Name, daemon, command, p.err, oneLine(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// stop ends the daemons: SIGTERM to the keeper, which stops them, and
// SIGKILL if it has not exited in time (its death kills whatever is left
// in its pid namespace).
func (r *router) stop() {
	if r.keeper == nil {
		return
	}
	r.keeper.Kill(syscall.SIGTERM)
	select {
	case <-r.keeper.done:
	case <-time.After(keeperGrace + 2*time.Second):
		r.keeper.Kill(syscall.SIGKILL)
		<-r.keeper.done
	}
}

// close stops the daemons and drops the namespace.
func (r *router) close() {
	r.stop()
	r.Ctl.Close()
	r.NS.Close()
}

// lockedBuffer is a bytes.Buffer for a child's stderr, read while written.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// frrInstall is where FRR is on this machine.
type frrInstall struct {
	Dir      string // zebra, bgpd
	Vtysh    string
	UID, GID int // the frr user the daemons drop to
}

// errNoFRR is the SKIP reason when FRR is missing.
var errNoFRR = errors.New("FRR not installed (Debian package frr: /usr/lib/frr/zebra, bgpd, /usr/bin/vtysh and the frr user)")
