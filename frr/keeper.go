// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Each router's daemons live under a keeper: this program re-executed with
// keeperEnv set, started in the router's network namespace with
// CLONE_NEWNS|CLONE_NEWPID. In its own mount namespace it bind-mounts the
// router's private directories over /run and /var/tmp, so that every FRR
// path (/var/run/frr/zserv.api, the vty sockets, pid files,
// /var/tmp/frr/<daemon>.<pid>) is the router's own and under /tmp; no
// daemon needs a path option, and copies of the program running at once
// never meet. As pid 1 of its pid namespace it starts the daemons, one at
// a time, each once the one before has opened its vty socket. The daemons
// drop to the frr user, which clears PR_SET_PDEATHSIG; the keeper stays
// root and keeps it, and when the keeper dies (it is killed with this
// program, or on the way out) the kernel kills everything in its pid
// namespace. So no daemon outlives the program, whatever way it ends.
//
// The keeper talks to the program through its stdout, one line each:
//	ready NAME PID     the daemon NAME runs and has opened its vty socket
//	exit NAME STATUS   the daemon NAME ended (while the keeper was not stopping it)
//	fail TEXT          the keeper could not go on; it exits
// SIGTERM makes it stop the daemons (SIGTERM, then SIGKILL after
// keeperGrace) and exit.

// keeperEnv, when present in the environment, turns the program into a
// keeper; its value is the JSON of a keeperSpec.
const keeperEnv = "NLMC_FRR_KEEPER"

// keeperGrace is how long stopping daemons get after SIGTERM.
const keeperGrace = 3 * time.Second

type keeperSpec struct {
	Binds   []bindMount
	Daemons []daemonSpec
	// ReadyWithin bounds each daemon's start, up to its vty socket.
	ReadyWithin time.Duration
}

type bindMount struct{ Source, Target string }

type daemonSpec struct {
	Name  string   // zebra, bgpd
	Argv  []string // the binary and its arguments
	Log   string   // its stdout and stderr
	Ready string   // a path that exists once it accepts vtysh (its vty socket)
}

func init() {
	spec, ok := os.LookupEnv(keeperEnv)
	if !ok {
		return
	}
	if err := runKeeper(spec); err != nil {
		fmt.Printf("fail %s\n", oneLine(err.Error()))
		os.Exit(1)
	}
	os.Exit(0)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func runKeeper(specJSON string) error {
	var spec keeperSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		return fmt.Errorf("%s: %w", keeperEnv, err)
	}
	terms := make(chan os.Signal, 1)
	signal.Notify(terms, syscall.SIGTERM, syscall.SIGINT)
	// Nothing mounted here may reach the parent's mount namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("mount --make-rprivate /: %w", err)
	}
	for _, b := range spec.Binds {
		if err := unix.Mount(b.Source, b.Target, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("mount --bind %s %s: %w", b.Source, b.Target, err)
		}
	}
	out := bufio.NewWriter(os.Stdout)
	say := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
	}
	exits := make(chan exitNote, len(spec.Daemons))
	var running []*exec.Cmd
	stopAll := func() {
		for _, c := range running {
			c.Process.Signal(syscall.SIGTERM)
		}
		deadline := time.After(keeperGrace)
		for n := len(running); n > 0; n-- {
			select {
			case <-exits:
			case <-deadline:
				return // pid 1 exits: the kernel kills the rest
			}
		}
	}
	for _, d := range spec.Daemons {
		log, err := os.OpenFile(d.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			stopAll()
			return err
		}
		cmd := exec.Command(d.Argv[0], d.Argv[1:]...)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			log.Close()
			stopAll()
			return fmt.Errorf("start %s: %w", d.Name, err)
		}
		log.Close()
		running = append(running, cmd)
		go func(name string) { exits <- exitNote{name, cmd.Wait()} }(d.Name)
		if err := awaitPath(d.Ready, spec.ReadyWithin, exits, terms); err != nil {
			stopAll()
			return fmt.Errorf("%s: %w", d.Name, err)
		}
		say("ready %s %d", d.Name, cmd.Process.Pid)
	}
	for {
		select {
		case e := <-exits:
			say("exit %s %s", e.name, status(e.err))
		case <-terms:
			stopAll()
			return nil
		}
	}
}

type exitNote struct {
	name string
	err  error
}

// awaitPath polls for path, which the daemon creates asynchronously once
// it has read its configuration, until within has passed; a daemon that
// exits first, or a SIGTERM, ends the wait.
func awaitPath(path string, within time.Duration, exits chan exitNote, terms chan os.Signal) error {
	deadline := time.Now().Add(within)
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		select {
		case e := <-exits:
			return fmt.Errorf("exited (%s) before it opened %s", status(e.err), path)
		case <-terms:
			return errors.New("stopped by SIGTERM while starting")
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %s within %v", path, within)
		}
	}
}

func status(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}
