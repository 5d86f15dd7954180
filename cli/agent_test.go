package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heapledger/heapledger/analysis/snapshot"
	"github.com/heapledger/heapledger/fixtures/demo"
)

// siteCounts returns, for every site whose method starts with method, its count, keyed by
// "TYPE" and listed once per site (so two classes of one name give two entries).
func siteCounts(s *snapshot.Snapshot, method string) map[string][]int64 {
	out := map[string][]int64{}
	for _, r := range s.Rows {
		site := s.Sites[r.Site]
		if strings.HasPrefix(site.Method, method) {
			out[site.Type] = append(out[site.Type], r.Count)
		}
	}
	return out
}

func sum(xs []int64) int64 {
	var n int64
	for _, x := range xs {
		n += x
	}
	return n
}

// agentWarnings returns the agent's lines on stderr, without the --stats summary.
func agentWarnings(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "heapledger agent: ") && !strings.Contains(l, " classes sent, ") {
			out = append(out, l)
		}
	}
	return out
}

// TestAgentDemoMatchesOffline runs the demo offline (`heapledger demo`) and through the
// launcher that `heapledger agent` writes: every account must have the same objects, arrays,
// elements and bytes.
func TestAgentDemoMatchesOffline(t *testing.T) {
	needAgent(t)
	dir := t.TempDir()
	if out, errOut, err := runCLI(t, "demo", "--dir", dir); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	offline := onlySnapshot(t, filepath.Join(dir, "snapshots"))

	agentDir := filepath.Join(dir, "agent")
	if out, errOut, err := runCLI(t, "agent", "--accounts", demo.Accounts, "--stats", "-o", agentDir); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	optDir := filepath.Join(dir, "agent-option")
	opt, _, err := runCLI(t, "agent", "--accounts", demo.Accounts, "-o", optDir, "--print-jvm-option")
	if err != nil || !strings.HasPrefix(opt, "-javaagent:"+filepath.Join(optDir, AgentJarName)+"=") || strings.Count(opt, "\n") != 1 {
		t.Errorf("--print-jvm-option: %q, %v", opt, err)
	}
	snaps := filepath.Join(dir, "agent-snapshots")
	stdout, stderr, err := runGuarded(t, 3*time.Minute, filepath.Join(agentDir, LauncherName),
		"-Dheapledger.snapshot.dir="+snaps, "-cp", filepath.Join(dir, "classes"), demo.MainClass, "2000")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	for _, want := range []string{"orders: 2000", "report lines: 38", "checksum: fa0814f7"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output under the agent lacks %q:\n%s", want, stdout)
		}
	}
	if w := agentWarnings(stderr); len(w) > 0 {
		t.Errorf("agent warnings: %v", w)
	}
	if !strings.Contains(stderr, "0 failed, 0 methods skipped") {
		t.Errorf("--stats should report every class instrumented:\n%s", stderr)
	}
	got := map[string]snapshot.Totals{}
	for _, a := range onlySnapshot(t, snaps).Summarize(0).Accounts {
		got[a.Name] = a.Totals
	}
	want := map[string]snapshot.Totals{}
	for _, a := range offline.Summarize(0).Accounts {
		want[a.Name] = a.Totals
	}
	if len(want) != 4 {
		t.Fatalf("offline demo accounts: %v", want)
	}
	for name, w := range want {
		g := got[name]
		if g.Objects != w.Objects || g.Arrays != w.Arrays || g.Elements != w.Elements || g.Bytes != w.Bytes {
			t.Errorf("%s: agent %+v, offline %+v", name, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("accounts under the agent %v, offline %v", got, want)
	}
}

// TestAgentCustomLoaderSameClassTwice: two loaders define agentfix.plugin.Widget; each is a
// class of its own, rewritten with its own sites, and counts only its own allocations.
func TestAgentCustomLoaderSameClassTwice(t *testing.T) {
	needAgent(t)
	app, plugin := agentFixtures(t)
	snaps := t.TempDir()
	// --liveness is a launch setting of the pass: it must reach the runtime through the agent.
	out, errOut, err := runHL(t, "run", "--accounts", "agentfix.plugin", "--liveness", "all", "--snapshot-dir", snaps, "--",
		"java", "-cp", app, "agentfix.loaders.Main", plugin)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	if want := "loader 0: made 20, a new class: true\nloader 1: made 40, a new class: true\n"; out != want {
		t.Errorf("output %q, want %q", out, want)
	}
	if w := agentWarnings(errOut); len(w) > 0 {
		t.Errorf("agent warnings: %v", w)
	}
	if !strings.Contains(errOut, "heapledger run: snapshot "+snaps) {
		t.Errorf("run should say where the snapshot is:\n%s", errOut)
	}
	s := onlySnapshot(t, snaps)
	if !s.Liveness {
		t.Errorf("--liveness all did not reach the runtime (header %v)", s.Header)
	}
	sites := siteCounts(s, "agentfix.plugin.Widget.make(I)I")
	// make(10) in the first class, make(20) in the second: per class one site per allocation.
	want := map[string][2]int64{"agentfix.plugin.Widget$Part": {10, 20}, "long[]": {10, 20}, "long[][]": {1, 1}, "java.lang.Object[]": {1, 1}}
	for typ, w := range want {
		g := sites[typ]
		if len(g) != 2 || !(g[0] == w[0] && g[1] == w[1] || g[0] == w[1] && g[1] == w[0]) {
			t.Errorf("%s: counts per site %v, want one site per class with %v", typ, g, w)
		}
	}
	for id, site := range s.Sites {
		if site.Method == "" {
			t.Errorf("site %d has no name: the agent did not pass its table line to the runtime", id)
		}
	}
}

// TestAgentWarnsOfUnmatchedPatterns (issue 37, item 7): under the agent as offline, a pattern
// that no class the program loaded matched is warned about when the program ends, with a hint
// for a class given as a package; patterns that matched are not.
func TestAgentWarnsOfUnmatchedPatterns(t *testing.T) {
	needAgent(t)
	app, plugin := agentFixtures(t)
	_, errOut, err := runHL(t, "run", "--accounts", "agentfix.plugin,agentfix.pluginz.*,agentfix.loaders.Main", "--snapshot-dir", t.TempDir(), "--",
		"java", "-cp", app, "agentfix.loaders.Main", plugin)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	for _, want := range []string{
		"warning: account pattern agentfix.pluginz.* matched no class the program loaded, so its account stays empty",
		"warning: account pattern agentfix.loaders.Main matched no class the program loaded, so its account stays empty (",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "pattern agentfix.plugin matched") {
		t.Errorf("a pattern that matched was warned about:\n%s", errOut)
	}
}

// TestAgentManyThreadsLoading: 32 threads load at once (a plugin through 32 loaders, four
// application classes through one), so the service has many requests in flight; on JDK 17 and 25.
func TestAgentManyThreadsLoading(t *testing.T) {
	needAgent(t)
	app, plugin := agentFixtures(t)
	onJDKs(t, func(t *testing.T, java string) { manyThreads(t, java, app, plugin) })
}

func manyThreads(t *testing.T, java, app, plugin string) {
	snaps := t.TempDir()
	out, errOut, err := runHL(t, "run", "--accounts", "agentfix.plugin", "--snapshot-dir", snaps, "--stats", "--",
		java, "-cp", app, "agentfix.threads.Main", plugin, "32")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	if want := "threads 32, made 320, errors 0, work 32\n"; out != want {
		t.Errorf("output %q, want %q", out, want)
	}
	if w := agentWarnings(errOut); len(w) > 0 {
		t.Errorf("agent warnings: %v", w)
	}
	// 32 Widgets and 32 Parts (one pair per loader), Main, its lambda's host, DirLoader,
	// Work and Work0-3.
	if !strings.Contains(errOut, "71 classes sent, 71 instrumented, 0 unchanged, 0 failed") {
		t.Errorf("stats:\n%s", errOut)
	}
	s := onlySnapshot(t, snaps)
	sites := siteCounts(s, "agentfix.plugin.Widget.make(I)I")
	if n := len(sites["long[]"]); n != 32 {
		t.Errorf("long[] sites of Widget.make: %d, want one per loader (32)", n)
	}
	if n := sum(sites["agentfix.plugin.Widget$Part"]); n != 32*5 {
		t.Errorf("Parts counted %d, want 160", n)
	}
	if n := sum(sites["long[]"]); n != 32*5 {
		t.Errorf("long[4] counted %d, want 160", n)
	}
	for i := 0; i < 4; i++ {
		w := siteCounts(s, "agentfix.threads.Work"+string(rune('0'+i))+".run()V")["int[]"]
		if len(w) != 1 || w[0] != 8 {
			t.Errorf("Work%d: int[7] counts %v, want one site counting 8", i, w)
		}
	}
}

// runKillFixture runs agentfix.kill.Main (with mainArgs: none, the program kills the transform
// service; "stop", it stops it) under `heapledger run` with runArgs, checks that the program's
// output is the plain run's, and returns the agent's warnings and the exit snapshot.
func runKillFixture(t *testing.T, runArgs []string, mainArgs ...string) ([]string, *snapshot.Snapshot) {
	t.Helper()
	needAgent(t)
	app, _ := agentFixtures(t)
	snaps := t.TempDir()
	args := append(append([]string{"run"}, runArgs...), "--snapshot-dir", snaps, "--", "java", "-cp", app, "agentfix.kill.Main")
	out, errOut, err := runHL(t, append(args, mainArgs...)...)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	if want := "before: 6\nafter: 7 8\ndone\n"; out != want {
		t.Errorf("output %q, want %q", out, want)
	}
	return agentWarnings(errOut), onlySnapshot(t, snaps)
}

// TestAgentServiceKilled: the program kills the transform service between two class loads. It
// must finish with the right output, and the agent must say once that it gave the service up.
func TestAgentServiceKilled(t *testing.T) {
	w, s := runKillFixture(t, nil)
	if len(w) != 1 || !strings.Contains(w[0], "transform service") || !strings.Contains(w[0], "classes load unmodified from now on") {
		t.Errorf("want exactly one warning about the transform service, got %q", w)
	}
	if got := siteCounts(s, "agentfix.kill.Before.make(I)I"); sum(got["int[]"]) != 6 || sum(got["int[][]"]) != 1 {
		t.Errorf("Before was loaded while the service ran and must count: %v", got)
	}
	for _, c := range []string{"After", "Later"} {
		if got := siteCounts(s, "agentfix.kill."+c+"."); len(got) != 0 {
			t.Errorf("%s was loaded after the service died and must be unmodified, but has sites %v", c, got)
		}
	}
}

// TestAgentServiceHung: the service is stopped (alive, silent). The next class waits for the
// timeout, loads unmodified, and the agent gives the service up with one warning naming it;
// the program finishes and leaves no stopped process behind.
func TestAgentServiceHung(t *testing.T) {
	w, s := runKillFixture(t, []string{"--timeout", "2s"}, "stop")
	if len(w) != 1 || !strings.Contains(w[0], "did not answer within 2000 ms while loading agentfix.kill.After") {
		t.Errorf("want one timeout warning naming the class, got %q", w)
	}
	if got := siteCounts(s, "agentfix.kill.After."); len(got) != 0 {
		t.Errorf("After must load unmodified, but has sites %v", got)
	}
}

// TestAgentServiceMissing: the binary the agent should start does not exist. The program runs
// uninstrumented, with one warning that names the binary.
func TestAgentServiceMissing(t *testing.T) {
	needAgent(t)
	app, plugin := agentFixtures(t)
	missing := filepath.Join(t.TempDir(), "no-such-heapledger")
	t.Setenv("HEAPLEDGER_BIN", missing)
	snaps := t.TempDir()
	out, errOut, err := runHL(t, "run", "--snapshot-dir", snaps, "--", "java", "-cp", app, "agentfix.loaders.Main", plugin)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	if !strings.HasPrefix(out, "loader 0: made 20") {
		t.Errorf("output %q", out)
	}
	w := agentWarnings(errOut)
	if len(w) != 1 || !strings.Contains(w[0], "cannot start") || !strings.Contains(w[0], missing) {
		t.Errorf("want one warning naming %s, got %q", missing, w)
	}
}

func TestRunNeedsCommandAndValidAccounts(t *testing.T) {
	if _, _, err := runCLI(t, "run", "--accounts", "demo"); err == nil || !strings.Contains(err.Error(), "no java command") {
		t.Errorf("run without a command: %v", err)
	}
	if _, _, err := runCLI(t, "run", "--accounts", "a..b", "--", "java", "-version"); err == nil || !strings.Contains(err.Error(), "--accounts") {
		t.Errorf("bad account pattern must fail before java starts: %v", err)
	}
	if _, _, err := runCLI(t, "agent", "--accounts", "demo"); err == nil || !strings.Contains(err.Error(), "-o DIR") {
		t.Errorf("agent without -o: %v", err)
	}
}

func TestPercentEncodingRoundTrip(t *testing.T) {
	// The agent decodes %XX as UTF-8 bytes and keeps other characters as they are.
	for in, want := range map[string]string{
		"a.b,c.d.*":       "a.b%2Cc.d.*",
		"/tmp/x y/z=1":    "/tmp/x%20y/z%3D1",
		"Zürich":          "Z%C3%BCrich",
		"name = a, b.*\n": "name%20%3D%20a%2C%20b.*%0A",
	} {
		if got := percentEncode(in); got != want {
			t.Errorf("percentEncode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLauncherQuotesTheAgentOption(t *testing.T) {
	p := filepath.Join(t.TempDir(), LauncherName)
	if err := writeLauncher(p, "-javaagent:/a b/it's.jar=x"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if !strings.Contains(string(b), `'-javaagent:/a b/it'\''s.jar=x' "$@"`) {
		t.Errorf("launcher:\n%s", b)
	}
	if st, _ := os.Stat(p); st.Mode()&0o111 == 0 {
		t.Errorf("launcher is not executable: %v", st.Mode())
	}
}

// TestRunKeepsExitStatus: `heapledger run` exits with the program's status and still says where
// the snapshot is.
func TestRunKeepsExitStatus(t *testing.T) {
	needAgent(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "Exit3.java")
	if err := os.WriteFile(src, []byte("public class Exit3 { public static void main(String[] a) { System.out.println(new StringBuilder(\"x\").append(3)); System.exit(3); } }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("javac", "-d", dir, src).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, b)
	}
	out, errOut, err := runHL(t, "run", "--snapshot-dir", filepath.Join(dir, "s"), "--", "java", "-cp", dir, "Exit3")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("exit status: %v, want 3\n%s\n%s", err, out, errOut)
	}
	if out != "x3\n" || !strings.Contains(errOut, "heapledger run: snapshot "+filepath.Join(dir, "s")) {
		t.Errorf("stdout %q, stderr:\n%s", out, errOut)
	}
	if got := siteCounts(onlySnapshot(t, filepath.Join(dir, "s")), "Exit3.main("); sum(got["java.lang.StringBuilder"]) != 1 {
		t.Errorf("Exit3.main's StringBuilder: %v", got)
	}
}

// TestRunThroughLaunchScript: a command that is not java gets the agent through
// JAVA_TOOL_OPTIONS, so the JVM the script starts is instrumented.
func TestRunThroughLaunchScript(t *testing.T) {
	needAgent(t)
	app, plugin := agentFixtures(t)
	script := filepath.Join(t.TempDir(), "launch.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec java -cp \"$1\" agentfix.loaders.Main \"$2\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	snaps := t.TempDir()
	out, errOut, err := runHL(t, "run", "--accounts", "agentfix.plugin", "--snapshot-dir", snaps, "--", script, app, plugin)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	if !strings.HasPrefix(out, "loader 0: made 20") {
		t.Errorf("output %q", out)
	}
	if got := siteCounts(onlySnapshot(t, snaps), "agentfix.plugin.Widget.make(I)I"); len(got["long[]"]) != 2 {
		t.Errorf("the script's JVM was not instrumented: %v\n%s", got, errOut)
	}
}

// TestAgentExitEndsService: at exit, once the snapshot is written, the agent ends the
// service and its thread reading the service's pipe ends too. HotSpot's exit waits up to
// 300 ms for every thread in native code, and that reader, blocked on the pipe, was one on
// every run. The program's own shutdown hook watches for the reader to go.
func TestAgentExitEndsService(t *testing.T) {
	needAgent(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "Watch.java")
	prog := `public class Watch {
    public static void main(String[] a) {
        Runtime.getRuntime().addShutdownHook(new Thread() {
            public void run() {
                long end = System.currentTimeMillis() + 5000;
                while (reader() && System.currentTimeMillis() < end) {
                    try { Thread.sleep(5); } catch (InterruptedException e) { return; }
                }
                System.out.println(reader() ? "reader alive" : "reader ended");
            }
        });
        System.out.println(new StringBuilder("x").append(1));
    }
    static boolean reader() {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("heapledger-transform-service")) return true;
        }
        return false;
    }
}
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("javac", "-d", dir, src).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, b)
	}
	out, errOut, err := runHL(t, "run", "--snapshot-dir", filepath.Join(dir, "s"), "--", "java", "-cp", dir, "Watch")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if out != "x1\nreader ended\n" {
		t.Errorf("stdout %q, want the reader ended by the agent's exit; stderr:\n%s", out, errOut)
	}
	if got := siteCounts(onlySnapshot(t, filepath.Join(dir, "s")), "Watch.main("); sum(got["java.lang.StringBuilder"]) != 1 {
		t.Errorf("Watch.main's StringBuilder: %v", got)
	}
}
