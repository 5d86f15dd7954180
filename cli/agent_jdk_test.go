package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heapledger/heapledger/analysis/snapshot"
	"github.com/heapledger/heapledger/fixtures/demo"
)

// accountSiteCounts sums, per account name and site type, the rows of sites whose method
// starts with method.
func accountSiteCounts(s *snapshot.Snapshot, method string) map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	for _, r := range s.Rows {
		site := s.Sites[r.Site]
		if !strings.HasPrefix(site.Method, method) {
			continue
		}
		a := s.Accounts[r.Account]
		if out[a] == nil {
			out[a] = map[string]int64{}
		}
		out[a][site.Type] += r.Count
	}
	return out
}

// TestAgentJDK runs agentfix.jdk.Main under `heapledger run --jdk` on JDK 17 and 25: the
// allocations inside HashMap.put and Integer.valueOf (JDK code, rewritten by retransformation
// or as it loads) are charged exactly to the fixture's account, the output is the plain run's,
// the agent lists what it could not retransform, and the JVM exits.
func TestAgentJDK(t *testing.T) {
	needAgent(t)
	app, _ := agentFixtures(t)
	onJDKs(t, func(t *testing.T, java string) { agentJDK(t, java, app) })
}

// TestAgentJDKContexts is TestAgentJDK with calling contexts (--context cct, issue 30): every
// JDK method that calls or allocates enters its node too, the runtime's own first lookup of a
// thread runs rewritten JDK code without recursing, the counts are the count mode's, and the
// tree holds them in the JDK's own calling contexts.
func TestAgentJDKContexts(t *testing.T) {
	needAgent(t)
	app, _ := agentFixtures(t)
	onJDKs(t, func(t *testing.T, java string) {
		s := agentJDK(t, java, app, "--context", "cct")
		if s.Contexts == nil {
			t.Fatal("no calling contexts")
		}
		var nodes int64
		put := false
		for _, c := range s.Contexts {
			for _, r := range c.Rows {
				if strings.HasPrefix(s.Sites[r.Site].Method, "java.util.HashMap.newNode(") {
					nodes += r.Count
					put = put || strings.Contains(strings.Join(s.Stack(c.ID), " "), "java.util.HashMap.put(")
				}
			}
		}
		if nodes != 1000 || !put {
			t.Errorf("HashMap$Node in the tree: %d (want 1000), below HashMap.put: %v", nodes, put)
		}
	})
}

func agentJDK(t *testing.T, java, app string, extra ...string) *snapshot.Snapshot {
	const n = 1000
	plain, err := exec.Command(java, "-cp", app, "agentfix.jdk.Main", "1000").Output()
	if err != nil {
		t.Fatalf("plain run: %v", err)
	}
	snaps := t.TempDir()
	args := append([]string{"run", "--jdk", "--accounts", "agentfix.jdk.*", "--snapshot-dir", snaps, "--stats"}, extra...)
	out, errOut, err := runHL(t, append(args, "--", java, "-cp", app, "agentfix.jdk.Main", "1000")...)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	if out != string(plain) {
		t.Errorf("output under --jdk:\n%s\nplain:\n%s", out, plain)
	}
	for _, l := range agentWarnings(errOut) {
		// What the JVM refused or cannot retransform is listed; the count pass changes only
		// method bodies, so nothing may be refused.
		if strings.Contains(l, "not retransformed") || strings.Contains(l, "internal error") || strings.Contains(l, "could not be instrumented") {
			t.Errorf("agent: %s", l)
		}
	}
	for _, want := range []string{"loaded JDK classes are excluded from rewriting", "hidden classes", "loaded classes instrumented by retransformation", " 0 failed"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	s := onlySnapshot(t, snaps)
	acct := "agentfix.jdk.*"
	// One HashMap$Node per new key, made in HashMap.newNode.
	if got := accountSiteCounts(s, "java.util.HashMap.newNode(")[acct]["java.util.HashMap$Node"]; got != n {
		t.Errorf("HashMap$Node in HashMap.newNode charged to %s: %d, want %d (%v)", acct, got, n, accountSiteCounts(s, "java.util.HashMap.newNode("))
	}
	// Integer.valueOf boxes every key and square outside its cache [-128, 127]: keys 128..999
	// and squares of 12..999.
	if got, want := accountSiteCounts(s, "java.lang.Integer.valueOf(I)")[acct]["java.lang.Integer"], int64((n-128)+(n-12)); got != want {
		t.Errorf("Integer.valueOf charged to %s: %d, want %d", acct, got, want)
	}
	// The table grows from 16 to 2048 buckets: 8 arrays in HashMap.resize.
	if got := accountSiteCounts(s, "java.util.HashMap.resize(")[acct]["java.util.HashMap$Node[]"]; got != 8 {
		t.Errorf("HashMap.resize tables charged to %s: %d, want 8", acct, got)
	}
	return s
}

// TestAgentJDKDemo: the demo prints the same under --jdk, and its accounts are charged.
func TestAgentJDKDemo(t *testing.T) {
	needAgent(t)
	dir := t.TempDir()
	classes := filepath.Join(dir, "classes")
	var srcs []string
	filepath.Walk(filepath.Join("..", "fixtures", "demo", "src"), func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".java") {
			srcs = append(srcs, p)
		}
		return nil
	})
	if b, err := exec.Command("javac", append([]string{"--release", "11", "-encoding", "UTF-8", "-d", classes}, srcs...)...).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, b)
	}
	plain, _, err := runGuarded(t, 3*time.Minute, "java", "-cp", classes, demo.MainClass, "2000")
	if err != nil {
		t.Fatal(err)
	}
	snaps := t.TempDir()
	out, errOut, err := runHL(t, "run", "--jdk", "--accounts", demo.Accounts, "--snapshot-dir", snaps, "--",
		"java", "-cp", classes, demo.MainClass, "2000")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	if out != plain {
		t.Errorf("demo output under --jdk differs:\n%s\nplain:\n%s", out, plain)
	}
	got := map[string]int64{}
	for _, a := range onlySnapshot(t, snaps).Summarize(0).Accounts {
		got[a.Name] = a.Totals.Objects + a.Totals.Arrays
	}
	for _, a := range strings.Split(demo.Accounts, ",") {
		if got[a] == 0 {
			t.Errorf("account %s charged nothing under --jdk: %v", a, got)
		}
	}
}

// TestAttachJDK attaches with --jdk to the running server fixture on JDK 17 and 25: JDK code the
// server calls is charged to its accounts, every answer stays right, detach restores the JDK
// classes too (the exit snapshot counts nothing more), and the agent's own work on the attach
// thread (detach walks every loaded class) is not counted.
func TestAttachJDK(t *testing.T) {
	needAgent(t)
	app, _ := agentFixtures(t)
	onJDKs(t, func(t *testing.T, java string) { attachJDK(t, java, app) })
}

func attachJDK(t *testing.T, java, app string) {
	srv := startServer(t, java, app)
	pid := fmt.Sprint(srv.cmd.Process.Pid)
	snaps, dir := t.TempDir(), t.TempDir()
	srv.ask(t, 10, 1)
	out, errOut, err := runCLI(t, "attach", pid, "--jdk", "--accounts", "agentfix.server.*", "--snapshot-dir", snaps, "--dir", dir)
	if err != nil || !strings.Contains(out, "attached: transform service pid") || !strings.Contains(out, "loaded JDK classes are excluded") {
		t.Fatalf("attach --jdk: %v\n%s\n%s\nJVM: %s", err, out, errOut, srv.stderr)
	}
	if strings.Contains(out, "not retransformed") {
		t.Errorf("the JVM refused classes:\n%s", out)
	}
	srv.ask(t, 10, 3)
	out, errOut, err = runCLI(t, "detach", pid, "--dir", dir)
	if err != nil || !strings.Contains(out, "detached: ") {
		t.Fatalf("detach: %v\n%s\n%s\nJVM: %s", err, out, errOut, srv.stderr)
	}
	det := lastSnapshot(t, out)
	jdkCharged, replaced := int64(0), int64(0)
	for _, r := range det.Rows {
		site := det.Sites[r.Site]
		if strings.HasPrefix(site.Method, "java.") && strings.HasPrefix(det.AccountName(r.Account), "agentfix.server") {
			jdkCharged += r.Count
		}
		if strings.HasPrefix(site.Method, "java.lang.StringLatin1.replace(") {
			replaced += r.Count
		}
	}
	if jdkCharged == 0 {
		t.Errorf("no JDK allocation charged to the server's accounts under attach --jdk")
	}
	// detach turns the name of every loaded class (about 2000) into "a/b/C" with String.replace;
	// muted, none of that may be counted.
	if replaced > 100 {
		t.Errorf("%d Strings counted in StringLatin1.replace: the agent's own work was counted", replaced)
	}
	srv.ask(t, 10, 2) // detached: nothing counts
	srv.quit(t)
	exit, _ := filepath.Glob(filepath.Join(snaps, fmt.Sprintf("heapledger-Main-%s-*.snapshot", pid)))
	var total func(*snapshot.Snapshot) int64 = func(s *snapshot.Snapshot) (n int64) {
		for _, r := range s.Rows {
			if strings.HasPrefix(s.AccountName(r.Account), "agentfix.server") {
				n += r.Count
			}
		}
		return n
	}
	for _, f := range exit {
		s, err := snapshot.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if s.Header["reason"] == "exit" && total(s) != total(det) {
			t.Errorf("exit snapshot counts %d in the server's accounts, detach %d: counting went on after detach", total(s), total(det))
		}
	}
	if w := agentWarnings(srv.stderr.String()); len(w) > 0 {
		t.Errorf("agent warnings in the server: %v", w)
	}
}
