// Package attach loads a Java agent into a running HotSpot JVM through the JVM's attach
// mechanism (the one jcmd and the JDK's com.sun.tools.attach use), without a JDK on our side.
//
// On Linux the JVM listens on a Unix socket, /tmp/.java_pid<PID>, once it has been asked to:
// the client creates a file .attach_pid<PID> (in the JVM's working directory, or /tmp) and sends
// SIGQUIT, and the JVM, seeing the file, starts its attach listener instead of printing a thread
// dump. A request is a protocol version and a command with exactly three arguments, each ended
// by a NUL byte; the answer is a status line and the command's output, until the JVM closes the
// connection.
package attach

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// protocolVersion is the request format every HotSpot since JDK 6 accepts.
const protocolVersion = "1"

// Options bound the waiting. Zero values mean the defaults.
type Options struct {
	// Start bounds the wait for the JVM to open its socket after SIGQUIT (default 15s: a busy
	// JVM reaches a safepoint late).
	Start time.Duration
	// Reply bounds the wait for the command's answer (default 5 minutes: loading an agent runs
	// its agentmain, which may retransform thousands of classes).
	Reply time.Duration
}

// LoadAgent loads the Java agent jar into the JVM pid with the given options (the text after
// "=" in -javaagent) and returns what the JVM answered. agentmain runs before the answer comes,
// so when LoadAgent returns, the agent has done its work.
func LoadAgent(pid int, jar, options string, o Options) (string, error) {
	arg := jar
	if options != "" {
		arg += "=" + options
	}
	out, err := Execute(pid, o, "load", "instrument", "false", arg)
	if err != nil {
		return out, err
	}
	// JDK 9 and later add the agent's initialisation result; a non-zero code means agentmain
	// threw or the jar could not be loaded (the JVM prints why on its own stderr).
	if i := strings.Index(out, "return code: "); i >= 0 {
		code := strings.TrimSpace(out[i+len("return code: "):])
		if nl := strings.IndexByte(code, '\n'); nl >= 0 {
			code = code[:nl]
		}
		if code != "0" {
			return out, fmt.Errorf("JVM %d: loading agent %s failed (return code %s; the JVM's own output says why)", pid, jar, code)
		}
	}
	return out, nil
}

// Execute sends one attach command (load, properties, threaddump, jcmd, ...) with up to three
// arguments and returns its output. A non-zero status from the JVM is an error carrying the
// JVM's message.
func Execute(pid int, o Options, cmd string, args ...string) (string, error) {
	if len(args) > 3 {
		return "", fmt.Errorf("attach command %s: at most 3 arguments", cmd)
	}
	if o.Start <= 0 {
		o.Start = 15 * time.Second
	}
	if o.Reply <= 0 {
		o.Reply = 5 * time.Minute
	}
	sock, err := socketOf(pid, o.Start)
	if err != nil {
		return "", err
	}
	conn, err := net.DialTimeout("unix", sock, o.Start)
	if err != nil {
		return "", fmt.Errorf("JVM %d: connecting to %s: %w", pid, sock, err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(o.Reply))
	var req strings.Builder
	for _, f := range append([]string{protocolVersion, cmd}, append(args, "", "", "")[:3]...) {
		if strings.IndexByte(f, 0) >= 0 {
			return "", fmt.Errorf("attach command %s: argument contains a NUL byte", cmd)
		}
		req.WriteString(f)
		req.WriteByte(0)
	}
	if _, err := io.WriteString(conn, req.String()); err != nil {
		return "", fmt.Errorf("JVM %d: sending %s: %w", pid, cmd, err)
	}
	r := bufio.NewReader(conn)
	status, err := r.ReadString('\n')
	if err != nil && status == "" {
		return "", fmt.Errorf("JVM %d: no answer to %s: %w", pid, cmd, err)
	}
	rest, err := io.ReadAll(r)
	if err != nil {
		return "", fmt.Errorf("JVM %d: reading the answer to %s: %w", pid, cmd, err)
	}
	code, err := strconv.Atoi(strings.TrimSpace(status))
	if err != nil {
		return "", fmt.Errorf("JVM %d: unexpected answer to %s: %q", pid, cmd, status)
	}
	if code != 0 {
		return string(rest), fmt.Errorf("JVM %d: %s failed (status %d): %s", pid, cmd, code, strings.TrimSpace(string(rest)))
	}
	return string(rest), nil
}

// socketOf returns the JVM's attach socket, starting its attach listener when needed.
func socketOf(pid int, wait time.Duration) (string, error) {
	if err := supported(); err != nil {
		return "", err
	}
	if pid <= 0 {
		return "", fmt.Errorf("bad process ID %d", pid)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
		return "", fmt.Errorf("no process %d", pid)
	}
	// The JVM's /tmp, seen through its root (it may be in another mount namespace).
	tmp := fmt.Sprintf("/proc/%d/root/tmp", pid)
	if _, err := os.Stat(tmp); err != nil {
		tmp = "/tmp"
	}
	sock := filepath.Join(tmp, fmt.Sprintf(".java_pid%d", pid))
	if isSocket(sock) {
		return sock, nil
	}
	// SIGQUIT kills a process that does not catch it: only a JVM with its signal handlers
	// installed (not started with -Xrs) may receive it.
	caught, err := catchesQuit(pid)
	if err != nil {
		return "", err
	}
	if !caught {
		return "", fmt.Errorf("process %d does not handle SIGQUIT (not a HotSpot JVM, still starting, or run with -Xrs): not attaching, the signal would end it", pid)
	}
	trigger, err := createTrigger(pid, tmp)
	if err != nil {
		return "", err
	}
	defer os.Remove(trigger)
	if err := signalQuit(pid); err != nil {
		return "", fmt.Errorf("signalling process %d: %w", pid, err)
	}
	deadline := time.Now().Add(wait)
	for delay := 5 * time.Millisecond; ; delay = min(delay*2, 200*time.Millisecond) {
		if isSocket(sock) {
			return sock, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("JVM %d did not open %s within %v (attach disabled with -XX:+DisableAttachMechanism, or a JVM of another user?)", pid, sock, wait)
		}
		time.Sleep(delay)
	}
}

func isSocket(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode()&os.ModeSocket != 0
}

// createTrigger creates .attach_pid<PID> where the JVM looks for it: its working directory
// first, /tmp (as the JVM sees it) when that is not writable.
func createTrigger(pid int, tmp string) (string, error) {
	name := fmt.Sprintf(".attach_pid%d", pid)
	var errs []string
	for _, dir := range []string{fmt.Sprintf("/proc/%d/cwd", pid), tmp} {
		p := filepath.Join(dir, name)
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			f.Close()
			return p, nil
		}
		errs = append(errs, err.Error())
	}
	return "", fmt.Errorf("cannot create the attach trigger file for JVM %d: %s", pid, strings.Join(errs, "; "))
}

// catchesQuit reads the process's caught-signal mask from /proc/PID/status.
func catchesQuit(pid int) (bool, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false, fmt.Errorf("process %d: %w", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				return false, fmt.Errorf("process %d: bad SigCgt %q", pid, v)
			}
			return mask&(1<<(uint(syscall.SIGQUIT)-1)) != 0, nil
		}
	}
	return false, errors.New("no SigCgt line in /proc/" + strconv.Itoa(pid) + "/status")
}
