package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/analysis/snapshot"
)

// TestAttachObjectInit attaches with --object-init to the running server fixture on JDK 17 and
// 25: java.lang.Object is hooked in a live JVM, every Item the handler constructs after the
// attach is in the hook's init row as well as at its `new` site, every answer stays right, and
// detach unhooks Object (the exit snapshot's init rows are the detach snapshot's).
func TestAttachObjectInit(t *testing.T) {
	needAgent(t)
	app, _ := agentFixtures(t)
	onJDKs(t, func(t *testing.T, java string) {
		srv := startServer(t, java, app)
		pid := fmt.Sprint(srv.cmd.Process.Pid)
		snaps, dir := t.TempDir(), t.TempDir()
		srv.ask(t, 10, 1) // before: nothing counts
		out, errOut, err := runCLI(t, "attach", pid, "--object-init", "--accounts", "agentfix.server.handler", "--snapshot-dir", snaps, "--dir", dir)
		if err != nil || !strings.Contains(out, "java.lang.Object's constructor is hooked") {
			t.Fatalf("attach --object-init: %v\n%s\n%s\nJVM: %s", err, out, errOut, srv.stderr)
		}
		srv.ask(t, 10, 3)
		out, errOut, err = runCLI(t, "detach", pid, "--dir", dir)
		if err != nil || !strings.Contains(out, "detached: ") {
			t.Fatalf("detach: %v\n%s\n%s\nJVM: %s", err, out, errOut, srv.stderr)
		}
		const item = "agentfix.server.handler.Handler$Item"
		det := lastSnapshot(t, out)
		if items, _ := handlerCounts(t, det); items != 30 {
			t.Errorf("Items at the handler's site: %d, want 30", items)
		}
		if got := kindCounts(det, "agentfix.server.handler", "init", item); got != 30 {
			t.Errorf("Items in the hook's init row: %d, want 30 (three requests of 10)", got)
		}
		srv.ask(t, 10, 2) // detached: nothing counts, Object has its own constructor back
		srv.quit(t)
		exit, _ := filepath.Glob(filepath.Join(snaps, fmt.Sprintf("heapledger-Main-%s-*.snapshot", pid)))
		found := false
		for _, f := range exit {
			s, err := snapshot.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if s.Header["reason"] != "exit" {
				continue
			}
			found = true
			if got := kindCounts(s, "agentfix.server.handler", "init", item); got != 30 {
				t.Errorf("exit snapshot: %d Items in the init row, want 30 (the hook went on after detach)", got)
			}
		}
		if !found {
			t.Errorf("no exit snapshot among %v", exit)
		}
		if w := agentWarnings(srv.stderr.String()); len(w) > 0 {
			t.Errorf("agent warnings in the server: %v", w)
		}
	})
}
