package rt

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heapledger/heapledger/analysis/histogram"
	"github.com/heapledger/heapledger/analysis/snapshot"
	"github.com/heapledger/heapledger/fixtures"
	"github.com/heapledger/heapledger/internal/testenv"
	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/jar"
	"github.com/heapledger/heapledger/rewrite/passes"
)

// jmxItems is how many items testdata/jmx/jmxfix.Main keeps alive (it makes as many garbage).
const jmxItems = 500

// rewriteDemandFixture compiles testdata/jmx/jmxfix with javac (Java 8 class files, so every JDK
// runs them) and rewrites it with the count pass: account jmxfix, liveness all and a full GC
// before on-demand snapshots, so that a snapshot's live figures are exact; jmx, when not empty,
// is the rewrite-time JMX mode (a "config jmx" line in the table).
func rewriteDemandFixture(t *testing.T, javac, jmx string) string {
	t.Helper()
	dir := t.TempDir()
	classes := filepath.Join(dir, "classes")
	if out, err := exec.Command(javac, "--release", "8", "-d", classes, "testdata/jmx/jmxfix/Main.java").CombinedOutput(); err != nil {
		t.Fatalf("javac jmxfix: %v\n%s", err, out)
	}
	set, err := accounts.Parse("jmxfix")
	if err != nil {
		t.Fatal(err)
	}
	table := accounts.NewTable(nil)
	table.Config = map[string]string{"liveness": "all", "snapshot.gc": "true"}
	if jmx != "" {
		table.Config["jmx"] = jmx
	}
	pass, err := passes.Count(passes.CountOptions{Accounts: set, Table: table})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "app")
	if rep, err := jar.Rewrite([]string{classes}, out, pass, jar.Options{}); err != nil || rep.Failed > 0 || rep.SkippedMethods > 0 || rep.SkippedClasses > 0 {
		t.Fatalf("rewrite jmxfix: %v %+v", err, rep)
	}
	tp := filepath.Join(out, filepath.FromSlash(accounts.TableResource))
	if err := os.MkdirAll(filepath.Dir(tp), 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := table.Write(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tp, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// demandRun is the rewritten fixture running on one JDK, waiting for its stdin to close.
type demandRun struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *lockedBuffer
}

// lockedBuffer is the fixture's stderr, read by the test while the process writes it.
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

// startDemandFixture starts the rewritten fixture with env added to the test's environment.
func startDemandFixture(t *testing.T, java, classpath, snaps string, env ...string) *demandRun {
	t.Helper()
	r := &demandRun{cmd: exec.Command(java, "-Dheapledger.snapshot.dir="+snaps, "-cp", classpath, "jmxfix.Main", fmt.Sprint(jmxItems)),
		lines: make(chan string, 4), stderr: &lockedBuffer{}}
	r.cmd.Env = append(os.Environ(), env...)
	r.cmd.Stderr = r.stderr
	var err error
	if r.stdin, err = r.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", java, err)
	}
	t.Cleanup(func() { r.cmd.Process.Kill(); r.cmd.Wait() })
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
	}()
	if line := r.next(t); line != fmt.Sprintf("ready %d", jmxItems) {
		t.Fatalf("fixture: want ready, got %q\n%s", line, r.stderr)
	}
	return r
}

func (r *demandRun) next(t *testing.T) string {
	t.Helper()
	select {
	case line, ok := <-r.lines:
		if !ok {
			t.Fatalf("fixture ended early: %v\n%s", r.cmd.Wait(), r.stderr)
		}
		return line
	case <-time.After(60 * time.Second):
		t.Fatalf("fixture said nothing for 60 s\n%s", r.stderr)
	}
	return ""
}

// finish closes the fixture's stdin and waits for it to say done and exit cleanly.
func (r *demandRun) finish(t *testing.T) {
	t.Helper()
	r.stdin.Close()
	if line := r.next(t); line != fmt.Sprintf("done %d", jmxItems) {
		t.Errorf("fixture: want done, got %q", line)
	}
	if err := r.cmd.Wait(); err != nil {
		t.Errorf("fixture exit: %v\n%s", err, r.stderr)
	}
}

// jmxClient compiles testdata/jmx/JmxClient.java with the JDK's javac, for that JDK's java.
func jmxClient(t *testing.T, javac string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command(javac, "-d", dir, "testdata/jmx/JmxClient.java").CombinedOutput(); err != nil {
		t.Fatalf("javac JmxClient: %v\n%s", err, out)
	}
	return dir
}

// callJMX runs the client against pid and returns its output lines, each "STEP=value" or
// "STEP!error".
func callJMX(t *testing.T, java, client string, pid int, waitMillis int, steps ...string) []string {
	t.Helper()
	args := append([]string{"-cp", client, "JmxClient", fmt.Sprint(pid), fmt.Sprint(waitMillis)}, steps...)
	cmd := exec.Command(java, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil && !(len(lines) == 1 && lines[0] == "absent") {
		t.Fatalf("JmxClient: %v\n%s\n%s", err, out, stderr.String())
	}
	return lines
}

// TestJMXOperations is issue 4's "snapshot on demand through a JMX operation", from outside
// the process as an operator would do it: a client attaches to the rewritten fixture, starts
// the JVM's local management agent (which creates the platform MBean server only then),
// finds heapledger:type=Ledger, reads its attributes, and asks for a snapshot and heap dumps.
// On JDK 17 the runtime is in its default mode (auto: it notices the late server), on JDK 25
// it registers at start-up (on, chosen at rewrite time).
func TestJMXOperations(t *testing.T) {
	rtClasses := build(t)
	for _, jdk := range []struct{ name, bin, mode string }{
		{"jdk17-auto", "", ""},
		{"jdk25-on", filepath.Join(fixtures.JDK25Home(), "bin"), "on"},
	} {
		t.Run(jdk.name, func(t *testing.T) {
			java, javac := testenv.Tool(t, filepath.Join(jdk.bin, "java")), testenv.Tool(t, filepath.Join(jdk.bin, "javac"))
			app := rewriteDemandFixture(t, javac, jdk.mode)
			client := jmxClient(t, javac)
			snaps := t.TempDir()
			// A file heapDump must not overwrite.
			kept := filepath.Join(snaps, "kept.hprof")
			if err := os.WriteFile(kept, []byte("not to be overwritten"), 0o644); err != nil {
				t.Fatal(err)
			}
			run := startDemandFixture(t, java, app+string(os.PathListSeparator)+rtClasses, snaps)
			pid := run.cmd.Process.Pid
			lines := callJMX(t, java, client, pid, 20000,
				"get:Liveness", "get:SnapshotDirectory", "get:SnapshotsWritten", "snapshot", "get:SnapshotsWritten",
				"get:LastSnapshot", "get:Dropped", "heapDump:jmx.hprof", "heapDump:kept.hprof", "heapDump:",
				"get:SnapshotFormat", "get:SnapshotInterval", "get:FirstDrop")
			// Every answer is known exactly; the dump to kept.hprof must fail naming the file.
			file := filepath.Join(snaps, fmt.Sprintf("heapledger-Main-%d-1.snapshot", pid))
			dump := filepath.Join(snaps, "jmx.hprof") // relative to the snapshot directory
			named := filepath.Join(snaps, fmt.Sprintf("heapledger-Main-%d-dump-1.hprof", pid))
			wantLines := []string{"Liveness=all", "SnapshotDirectory=" + snaps, "SnapshotsWritten=0", "snapshot=" + file,
				"SnapshotsWritten=1", "LastSnapshot=" + file, "Dropped=0", "heapDump=" + dump, "heapDump:kept.hprof!", "heapDump=" + named,
				"SnapshotFormat=text", "SnapshotInterval=0.0", "FirstDrop="}
			ok := len(lines) == len(wantLines)
			for i := 0; ok && i < len(lines); i++ {
				if i == 8 {
					ok = strings.HasPrefix(lines[i], wantLines[i]) && strings.Contains(lines[i], kept)
				} else {
					ok = lines[i] == wantLines[i]
				}
			}
			if !ok {
				t.Fatalf("the client got\n%s\nwant\n%s\nfixture stderr:\n%s", strings.Join(lines, "\n"), strings.Join(wantLines, "\n"), run.stderr)
			}
			checkDemandSnapshot(t, file)
			checkJMXDump(t, dump)
			checkJMXDump(t, named)
			if b, err := os.ReadFile(kept); err != nil || string(b) != "not to be overwritten" {
				t.Errorf("heapDump overwrote an existing file: %v %.40q", err, b)
			}

			run.finish(t)
			if _, err := os.Stat(filepath.Join(snaps, fmt.Sprintf("heapledger-Main-%d-2.snapshot", pid))); err != nil {
				t.Errorf("exit snapshot after the JMX one: %v", err)
			}
		})
	}
}

// checkDemandSnapshot: a demand snapshot of the fixture counts the fixture exactly: jmxItems kept and as many
// reclaimed by the full GC before it.
func checkDemandSnapshot(t *testing.T, path string) {
	t.Helper()
	s, err := snapshot.ReadFile(path)
	if err != nil {
		t.Fatalf("demand snapshot: %v", err)
	}
	if s.Header["reason"] != "demand" {
		t.Errorf("reason %q, want demand", s.Header["reason"])
	}
	var count, live, reclaimed int64
	for _, r := range s.Rows {
		if s.AccountName(r.Account) == "jmxfix" && s.TypeOf(r) == "jmxfix.Main$Item" {
			count, live, reclaimed = count+r.Count, live+r.Live, reclaimed+r.Reclaimed
		}
	}
	if count != 2*jmxItems || live != jmxItems || reclaimed != jmxItems {
		t.Errorf("jmxfix.Main$Item: allocated %d, live %d, reclaimed %d; want %d, %d, %d", count, live, reclaimed, 2*jmxItems, jmxItems, jmxItems)
	}
}

// checkJMXDump: the heap dump is a real one of live objects.
func checkJMXDump(t *testing.T, path string) {
	t.Helper()
	h, err := histogram.Read(path, histogram.Options{})
	if err != nil {
		t.Fatalf("heap dump from JMX: %v", err)
	}
	for _, e := range h.Entries {
		if e.Class == "jmxfix.Main$Item" {
			if e.Instances != jmxItems {
				t.Errorf("%s: %d jmxfix.Main$Item, want the %d live ones", path, e.Instances, jmxItems)
			}
			return
		}
	}
	t.Errorf("%s has no jmxfix.Main$Item", path)
}

// TestJMXOff: with HEAPLEDGER_JMX=off the runtime registers nothing, even once a platform
// MBean server exists (the client waits three of auto mode's polling intervals).
func TestJMXOff(t *testing.T) {
	rtClasses := build(t)
	java, javac := testenv.Tool(t, "java"), testenv.Tool(t, "javac")
	app := rewriteDemandFixture(t, javac, "on") // the environment overrides the rewrite-time choice
	client := jmxClient(t, javac)
	run := startDemandFixture(t, java, app+string(os.PathListSeparator)+rtClasses, t.TempDir(), "HEAPLEDGER_JMX=off")
	if lines := callJMX(t, java, client, run.cmd.Process.Pid, 3000); len(lines) != 1 || lines[0] != "absent" {
		t.Errorf("heapledger.jmx=off: want no MBean, client said %q", lines)
	}
	run.finish(t)
}

// TestSignalSnapshot: `kill -USR1 PID` writes a demand snapshot with the same exact contents as
// the JMX operation's, and the runtime says where on stderr.
func TestSignalSnapshot(t *testing.T) {
	rtClasses := build(t)
	java, javac := testenv.Tool(t, "java"), testenv.Tool(t, "javac")
	app := rewriteDemandFixture(t, javac, "")
	snaps := t.TempDir()
	run := startDemandFixture(t, java, app+string(os.PathListSeparator)+rtClasses, snaps)
	pid := run.cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	// The runtime says so once the file is whole (written aside, then renamed); wait, bounded.
	file := filepath.Join(snaps, fmt.Sprintf("heapledger-Main-%d-1.snapshot", pid))
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(run.stderr.String(), "heapledger: snapshot written to "+file); {
		if time.Now().After(deadline) {
			t.Fatalf("the runtime did not say it wrote %s within 60 s of SIGUSR1:\n%s", file, run.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	checkDemandSnapshot(t, file)
	run.finish(t)
}
