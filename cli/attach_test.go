package main

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heapledger/heapledger/analysis/snapshot"
)

// handlerAnswer is what agentfix.server.handler.Handler.compute(n) returns.
func handlerAnswer(n int) string {
	var sum int64
	for i := 0; i < n; i++ {
		sum = sum*31 + int64(i) + 3*int64(i*i)
	}
	return fmt.Sprint(sum)
}

// fixtureServer is agentfix.server.Main running on one JDK.
type fixtureServer struct {
	cmd    *exec.Cmd
	port   string
	stderr *strings.Builder
	done   chan error
}

func startServer(t *testing.T, java, app string) *fixtureServer {
	t.Helper()
	s := &fixtureServer{cmd: exec.Command(java, "-cp", app, "agentfix.server.Main"), stderr: &strings.Builder{}, done: make(chan error, 1)}
	s.cmd.Stderr = s.stderr
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.cmd.Process.Kill(); <-s.done })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- sc.Text()
		}
		for sc.Scan() {
		}
		s.done <- s.cmd.Wait()
	}()
	select {
	case l := <-lines:
		var ok bool
		if s.port, ok = strings.CutPrefix(l, "port "); !ok {
			t.Fatalf("server said %q", l)
		}
	case <-time.After(2 * time.Minute): // hang guard
		t.Fatalf("server did not start: %s", s.stderr)
	}
	return s
}

// ask sends requests on one connection and checks every answer.
func (s *fixtureServer) ask(t *testing.T, n, times int) {
	t.Helper()
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+s.port, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Minute)) // hang guard
	r := bufio.NewReader(c)
	for i := 0; i < times; i++ {
		fmt.Fprintf(c, "%d\n", n)
		got, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if got = strings.TrimSpace(got); got != handlerAnswer(n) {
			t.Fatalf("request %d: answer %s, want %s", i, got, handlerAnswer(n))
		}
	}
}

func (s *fixtureServer) quit(t *testing.T) {
	t.Helper()
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+s.port, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(c, "quit")
	c.Close()
	select {
	case err := <-s.done:
		s.done <- err // for the cleanup
		if err != nil {
			t.Fatalf("server: %v\n%s", err, s.stderr)
		}
	case <-time.After(2 * time.Minute): // hang guard
		t.Fatalf("server did not quit")
	}
}

// handlerCounts returns the Item objects and int[] arrays counted in Handler.compute, summed over
// its sites (each attach rewrites the class anew, with new sites).
func handlerCounts(t *testing.T, s *snapshot.Snapshot) (items, arrays int64) {
	t.Helper()
	for _, r := range s.Rows {
		site := s.Sites[r.Site]
		if !strings.HasPrefix(site.Method, "agentfix.server.handler.Handler.compute(") {
			continue
		}
		if s.AccountName(r.Account) != "agentfix.server.handler" {
			t.Errorf("Handler.compute counted to %s", s.AccountName(r.Account))
		}
		switch site.Type {
		case "agentfix.server.handler.Handler$Item":
			items += r.Count
		case "int[]":
			arrays += r.Count
		}
	}
	return items, arrays
}

func lastSnapshot(t *testing.T, out string) *snapshot.Snapshot {
	t.Helper()
	_, path, ok := strings.Cut(out, "last snapshot ")
	if !ok {
		t.Fatalf("detach did not name its snapshot:\n%s", out)
	}
	s, err := snapshot.ReadFile(strings.TrimSpace(strings.SplitN(path, "\n", 2)[0]))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAttachDetachServer attaches to a running server, detaches, attaches again and detaches,
// on JDK 17 and 25: counts appear after attach, stop after detach, and every answer is right.
func TestAttachDetachServer(t *testing.T) {
	needAgent(t)
	app, _ := agentFixtures(t)
	onJDKs(t, func(t *testing.T, java string) {
		srv := startServer(t, java, app)
		pid := fmt.Sprint(srv.cmd.Process.Pid)
		snaps, dir := t.TempDir(), t.TempDir()
		srv.ask(t, 10, 2) // before: nothing counts

		out, errOut, err := runCLI(t, "attach", pid, "--accounts", "agentfix.server.handler", "--snapshot-dir", snaps, "--dir", dir)
		if err != nil || !strings.Contains(out, "attached: transform service pid") {
			t.Fatalf("attach: %v\n%s\n%s\nJVM: %s", err, out, errOut, srv.stderr)
		}
		if !strings.Contains(out, " hidden classes (lambda and proxy classes") {
			t.Errorf("attach should say that the lambda's hidden class is not modifiable:\n%s", out)
		}
		srv.ask(t, 10, 3)
		out, errOut, err = runCLI(t, "detach", pid, "--dir", dir)
		if err != nil || !strings.Contains(out, "detached: ") {
			t.Fatalf("detach: %v\n%s\n%s\nJVM: %s", err, out, errOut, srv.stderr)
		}
		if items, arrays := handlerCounts(t, lastSnapshot(t, out)); items != 30 || arrays != 3 {
			t.Errorf("after one attach: %d Items, %d int[], want 30 and 3 (three requests of 10)", items, arrays)
		}
		srv.ask(t, 10, 2) // detached: nothing counts

		// Attached again, the table continues: the new sites get new IDs.
		out, errOut, err = runCLI(t, "attach", pid, "--accounts", "agentfix.server.handler", "--snapshot-dir", snaps, "--dir", dir)
		if err != nil {
			t.Fatalf("attach again: %v\n%s\n%s\nJVM: %s", err, out, errOut, srv.stderr)
		}
		if _, _, err := runCLI(t, "attach", pid, "--dir", dir); err == nil || !strings.Contains(err.Error(), "already attached") {
			t.Errorf("a second attach must be refused: %v", err)
		}
		srv.ask(t, 7, 1)
		out, errOut, err = runCLI(t, "detach", pid, "--dir", dir)
		if err != nil {
			t.Fatalf("detach again: %v\n%s\n%s", err, out, errOut)
		}
		last := lastSnapshot(t, out)
		if items, arrays := handlerCounts(t, last); items != 37 || arrays != 4 {
			t.Errorf("after two attaches: %d Items, %d int[], want 37 and 4", items, arrays)
		}
		if _, _, err := runCLI(t, "detach", pid, "--dir", dir); err == nil || !strings.Contains(err.Error(), "not attached") {
			t.Errorf("detach when detached must fail: %v", err)
		}
		srv.ask(t, 10, 1)
		srv.quit(t)
		exit, _ := filepath.Glob(filepath.Join(snaps, fmt.Sprintf("heapledger-Main-%s-*.snapshot", pid)))
		if len(exit) != 3 {
			t.Fatalf("want two detach snapshots and one exit snapshot, got %v", exit)
		}
		for _, f := range exit {
			s, err := snapshot.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if s.Header["reason"] == "exit" {
				if items, arrays := handlerCounts(t, s); items != 37 || arrays != 4 {
					t.Errorf("exit snapshot: %d Items, %d int[], want 37 and 4 (nothing after detach)", items, arrays)
				}
			}
		}
		if w := agentWarnings(srv.stderr.String()); len(w) > 0 {
			t.Errorf("agent warnings in the server: %v", w)
		}
	})
}

func TestAttachRefusesNonJVM(t *testing.T) {
	needAgent(t)
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep command")
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	_, _, err := runCLI(t, "attach", fmt.Sprint(cmd.Process.Pid), "--dir", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "does not handle SIGQUIT") {
		t.Errorf("attach to sleep: %v", err)
	}
	if _, _, err := runCLI(t, "attach", "not-a-pid"); err == nil || !strings.Contains(err.Error(), "not a process ID") {
		t.Errorf("attach not-a-pid: %v", err)
	}
}
