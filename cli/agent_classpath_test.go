package main

import (
	"archive/zip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heapledger/heapledger/analysis/snapshot"
)

// TestAgentClassPathAsInput: under the agent, classes of a jar on the class path are rewritten
// as offline rewriting rewrites that jar, reading the others as its input (docs/agent.md, "The
// class path as the input"): the accounts fixture's neutral and boundary scenarios run the same
// account switches and leave out the same ones, per method, as the offline-rewritten jar, and
// charge the same rows. From a class directory, which ends the input, and with a jar on the
// boot class path, the switches stay in and the rows are still the same. A second run, from
// the cache, switches as the first.
func TestAgentClassPathAsInput(t *testing.T) {
	needAgent(t)
	dir := t.TempDir()
	classes, fixture := filepath.Join(dir, "classes"), filepath.Join(dir, "acct.jar")
	compileAccountsFixture(t, classes)
	zipDir(t, classes, fixture)
	const accts = "acct.m,acct.n,acct.d,acct.e"
	offline := filepath.Join(dir, "offline.jar")
	if _, stderr, err := runCLI(t, "rewrite", "--accounts", accts, "--count-increments", "--embed-runtime", fixture, "-o", offline); err != nil {
		t.Fatalf("rewrite: %v\n%s", err, stderr)
	}
	cache := filepath.Join(dir, "cache")
	bootDir, bootJar := filepath.Join(dir, "boot"), filepath.Join(dir, "boot.jar")
	if err := os.MkdirAll(filepath.Join(bootDir, "META-INF"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bootDir, "META-INF", "MANIFEST.MF"), []byte("Manifest-Version: 1.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	zipDir(t, bootDir, bootJar)
	noop := noopAgent(t, dir)
	// A class path too long for one argument of a command (128 KiB on Linux), as an argument
	// file or a wildcard gives it, reaches the service through a file: entries that do not
	// exist, then the fixture.
	var long strings.Builder
	long.WriteString("-cp ")
	for i := 0; long.Len() < 160<<10; i++ {
		fmt.Fprintf(&long, "%s/missing-%04d-%s.jar:", dir, i, strings.Repeat("x", 60))
	}
	long.WriteString(fixture + "\n")
	argFile := filepath.Join(dir, "long-class-path.args")
	if err := os.WriteFile(argFile, []byte(long.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, scenario := range []string{"neutral", "boundary"} {
		run := func(what string, agent bool, cp string, jvm ...string) *snapshot.Snapshot {
			t.Helper()
			snaps := filepath.Join(dir, scenario+"-"+what)
			cpArgs := []string{"-cp", cp}
			if strings.HasPrefix(cp, "@") {
				cpArgs = []string{cp} // an argument file that gives it
			}
			argv := append(append(append([]string{"java"}, jvm...), "-Dheapledger.snapshot.dir="+snaps), cpArgs...)
			argv = append(argv, "acct.Main", scenario)
			var stdout, stderr string
			var err error
			if agent {
				stdout, stderr, err = runHL(t, append([]string{"run", "--accounts", accts, "--count-increments", "--cache-dir", cache, "--"}, argv...)...)
			} else {
				stdout, stderr, err = runGuarded(t, 2*time.Minute, argv[0], argv[1:]...)
			}
			if err != nil || !strings.Contains(stdout+stderr, "done "+scenario) {
				t.Fatalf("%s %s: %v\n%s\n%s", scenario, what, err, stdout, stderr)
			}
			return onlySnapshot(t, snaps)
		}
		want := run("offline", false, offline)
		if want.Header["switches_left_out"] == "0" || want.Header["switches_left_out"] == "" {
			t.Fatalf("%s offline: no switch left out (%q): the scenario proves nothing", scenario, want.Header["switches_left_out"])
		}
		for _, c := range []struct{ what, cp string }{{"jar", fixture}, {"jar-cached", fixture}, {"long class path", "@" + argFile}} {
			what := c.what
			got := run(what, true, c.cp)
			sameRows(t, scenario+" "+what, got, want)
			for _, h := range []string{"switches", "switches_left_out", "switches_by_method", "switches_left_out_by_method"} {
				if sortedFields(got.Header[h]) != sortedFields(want.Header[h]) {
					t.Errorf("%s under the agent (%s): %s %q, offline %q", scenario, what, h, got.Header[h], want.Header[h])
				}
			}
		}
		// From a class directory, which ends the input, with a jar on the boot class path,
		// searched before the class path, and with another agent, whose transformer runs
		// before this one's (the class path is then not the input), the switches stay in.
		for _, c := range []struct{ what, cp, jvm string }{{"dir", classes, ""}, {"boot-append", fixture, "-Xbootclasspath/a:" + bootJar}, {"other agent", fixture, "-javaagent:" + noop}} {
			var jvm []string
			if c.jvm != "" {
				jvm = []string{c.jvm}
			}
			got := run(c.what, true, c.cp, jvm...)
			if scenario == "neutral" {
				sameRows(t, scenario+" "+c.what, got, want)
			} else {
				// N.reflectedInNest, private and called by reflection from E, keeps E's account
				// offline, where N's nest is read (docs/instrumentation.md, "Account boundaries");
				// with the nest unread it switches, and its Unit is N's account's, acct.d.
				d, e := unitCount(got, "acct.d"), unitCount(got, "acct.e")
				if d != unitCount(want, "acct.d")+1 || e != unitCount(want, "acct.e")-1 {
					t.Errorf("boundary, %s: acct.d %d, acct.e %d Units; offline %d and %d, and one should move to acct.d", c.what, d, e, unitCount(want, "acct.d"), unitCount(want, "acct.e"))
				}
			}
			if got.Header["switches"] == want.Header["switches"] {
				t.Errorf("%s, %s: switches %q as offline; the class path should not be the input", scenario, c.what, got.Header["switches"])
			}
		}
	}
}

// noopAgent writes a java agent that registers a transformer changing nothing, and returns
// its jar. The transformer it allocates is a row sameRows leaves out.
func noopAgent(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "noop-src")
	if err := os.MkdirAll(filepath.Join(src, "META-INF"), 0o755); err != nil {
		t.Fatal(err)
	}
	java := filepath.Join(dir, "Noop.java")
	code := "package heapledger.noop; public class Noop { public static void premain(String a, java.lang.instrument.Instrumentation i) { " +
		"i.addTransformer(new java.lang.instrument.ClassFileTransformer() {}); } }\n"
	if err := os.WriteFile(java, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("javac", "-d", src, java).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, b)
	}
	if err := os.WriteFile(filepath.Join(src, "META-INF", "MANIFEST.MF"), []byte("Manifest-Version: 1.0\nPremain-Class: heapledger.noop.Noop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "noop.jar")
	zipDir(t, src, out)
	return out
}

// sameRows fails unless the snapshots' per-(account, type) totals are equal.
func sameRows(t *testing.T, what string, got, want *snapshot.Snapshot) {
	t.Helper()
	rows := func(s *snapshot.Snapshot) map[string]int64 {
		out := map[string]int64{}
		for _, r := range s.Rows {
			if strings.HasPrefix(s.Sites[r.Site].Type, "heapledger.noop.") {
				continue // the other agent's own (noopAgent)
			}
			k := s.Accounts[r.Account] + "|" + s.Sites[r.Site].Type
			out[k] += r.Count
			out[k+" elements"] += r.Elements
			out[k+" bytes"] += r.Bytes
		}
		return out
	}
	g, w := rows(got), rows(want)
	for k, v := range w {
		if g[k] != v {
			t.Errorf("%s: %s %d, offline %d", what, k, g[k], v)
		}
	}
	if len(g) != len(w) {
		var extra []string
		for k := range g {
			if _, ok := w[k]; !ok {
				extra = append(extra, k)
			}
		}
		t.Errorf("%s: %d rows, offline %d (not offline: %q)", what, len(g), len(w), extra)
	}
}

// sortedFields is a space-separated list in sorted order.
func sortedFields(s string) string {
	f := strings.Fields(s)
	slices.Sort(f)
	return strings.Join(f, " ")
}

// unitCount is the acct.u.Unit objects charged to account.
func unitCount(s *snapshot.Snapshot, account string) (n int64) {
	for _, r := range s.Rows {
		if s.Accounts[r.Account] == account && s.Sites[r.Site].Type == "acct.u.Unit" {
			n += r.Count
		}
	}
	return n
}

// zipDir writes the files under dir into a jar at out.
func zipDir(t *testing.T, dir, out string) {
	t.Helper()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	w := zip.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fw, err := w.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		_, err = fw.Write(data)
		return err
	})
	if err == nil {
		err = w.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestAgentLeavesRuntimeImageClasses: javac's classes (jdk.compiler) are the JDK's although the
// application loader defines them; the agent passes them through as offline rewriting never
// sees them, so what they allocate is counted nowhere and no site of theirs is named.
func TestAgentLeavesRuntimeImageClasses(t *testing.T) {
	needAgent(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "Tool.java")
	prog := `public class Tool {
    public static void main(String[] a) throws Exception {
        javax.tools.JavaCompiler c = javax.tools.ToolProvider.getSystemJavaCompiler();
        System.out.println(c.getClass().getClassLoader() == ClassLoader.getSystemClassLoader());
        System.out.println(c.getSourceVersions().size() > 0);
        System.out.println(c.getStandardFileManager(null, null, null) != null);
    }
}
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("javac", "-d", dir, src).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, b)
	}
	out, errOut, err := runHL(t, "run", "--accounts", "*", "--snapshot-dir", filepath.Join(dir, "s"), "--", "java", "-cp", dir, "Tool")
	if err != nil || out != "true\ntrue\ntrue\n" {
		t.Fatalf("%v\nstdout %q (javac's compiler should be the application loader's)\n%s", err, out, errOut)
	}
	s := onlySnapshot(t, filepath.Join(dir, "s"))
	for _, site := range s.Sites {
		if strings.HasPrefix(site.Method, "com.sun.tools.javac.") {
			t.Fatalf("a site of javac's was rewritten: %+v", site)
		}
	}
}
