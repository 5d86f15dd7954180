package behaviour

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/analysis/snapshot"
	"github.com/heapledger/heapledger/fixtures"
	"github.com/heapledger/heapledger/internal/testenv"
)

const javaLib = "/usr/share/java"

// env is what every program needs: the heapledger binary, the probe runtime and a JVM.
type env struct {
	heapledger, probeJar, java, javac string
	work                              string
	// count switches the runs from the probe pass to the count pass (memory accounts with
	// every package of the program accounted, all allocation sites counted).
	count      bool
	runtimeJar string
}

// countAccounts covers every package of the programs without "*", so that every rewritten
// method switches accounts (the "*" shortcut would leave most methods untouched), with several
// accounts per program so that calls cross from one account into another (xalan into its
// serializer, sunflow into janino, and so on).
const countAccounts = "org.*,com.*,net.*,javax.*,org.eclipse.jdt.internal.compiler.*,org.eclipse.jdt.internal.compiler.parser.*," +
	"org.apache.xalan.*,org.apache.xml.*,org.apache.xpath.*,org.h2.*,org.h2.command.*,org.h2.engine.*,org.sunflow.*,org.codehaus.*"

func setup(t *testing.T) *env {
	t.Helper()
	e := &env{java: testenv.Tool(t, "java"), javac: testenv.Tool(t, "javac"), work: t.TempDir()}
	bash := testenv.Tool(t, "bash")
	root := filepath.Join(fixtures.Dir(), "..")
	gotool := filepath.Join(runtime.GOROOT(), "bin", "go")
	e.heapledger = filepath.Join(e.work, "heapledger")
	mustRun(t, root, gotool, "build", "-o", e.heapledger, "./cli")
	mustRun(t, root, bash, "scripts/build-java.sh", "probe", "runtime")
	e.probeJar = filepath.Join(root, "build", "heapledger-probe.jar")
	e.runtimeJar = filepath.Join(root, "build", "heapledger-runtime.jar")
	return e
}

func needJars(t *testing.T, names ...string) []string {
	t.Helper()
	var out []string
	for _, n := range names {
		p := filepath.Join(javaLib, n)
		out = append(out, testenv.Tool(t, p))
	}
	return out
}

var summaryRE = regexp.MustCompile(`(\d+) classes: (\d+) rewritten, (\d+) unchanged, (\d+) failed`)

// rewrite runs `heapledger rewrite --pass probe --strict` on each jar and returns the rewritten
// jars in the same order.
func (e *env) rewrite(t *testing.T, jars []string) []string {
	t.Helper()
	var out []string
	for _, j := range jars {
		o := filepath.Join(e.work, "probe-"+filepath.Base(j))
		args := []string{"rewrite", "--pass", "probe", "--strict", j, "-o", o}
		if e.count {
			o = filepath.Join(e.work, "count-"+filepath.Base(j))
			args = []string{"rewrite", "--pass", "count", "--accounts", countAccounts, "--table", filepath.Join(e.work, "count.table.tsv"), "--strict", j, "-o", o}
		}
		cmd := exec.Command(e.heapledger, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("heapledger rewrite %s: %v\n%s", j, err, stderr.String())
		}
		m := summaryRE.FindStringSubmatch(stderr.String())
		if m == nil {
			t.Fatalf("heapledger rewrite %s: no summary line in\n%s", j, stderr.String())
		}
		if n, _ := strconv.Atoi(m[2]); n == 0 {
			t.Errorf("heapledger rewrite %s rewrote no class: %s", j, m[0])
		}
		t.Logf("%s: %s", filepath.Base(j), lastLine(stderr.String()))
		out = append(out, o)
	}
	return out
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// run runs a Java program in dir and returns its standard output and error together.
func (e *env) run(t *testing.T, dir string, cp []string, jvmArgs []string, args ...string) string {
	t.Helper()
	a := append([]string{"-cp", strings.Join(cp, string(os.PathListSeparator))}, jvmArgs...)
	cmd := exec.Command(e.java, append(a, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("java %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// compare runs a program plain and rewritten and checks that it prints the same; the probe's
// counts must show that the rewritten code ran and that every entry was left again (normal
// exit or unwind) or is still on a stack at exit.
//
// jars are rewritten; extra classpath entries (resources) are used as they are.
func (e *env) compare(t *testing.T, name string, jars, extra []string, dirs func(variant string) string, args ...string) (plain, probed string) {
	t.Helper()
	plainDir, probeDir := dirs("plain"), dirs("probe")
	plain = e.run(t, plainDir, append(append([]string{}, jars...), extra...), nil, args...)
	if e.count {
		return plain, e.compareCount(t, name, jars, extra, probeDir, plain, args...)
	}
	rewritten := append(append(e.rewrite(t, jars), extra...), e.probeJar)
	rep := filepath.Join(e.work, name+"-probe.txt")
	probed = e.run(t, probeDir, rewritten, []string{"-Dheapledger.probe.report=" + rep}, args...)
	if plain != probed {
		t.Errorf("%s prints differently after the probe pass.\nplain:\n%s\nprobe:\n%s", name, plain, probed)
	}
	counts := readCounts(t, rep)
	t.Logf("%s probe counts: %v", name, counts)
	if counts["entries"] == 0 || counts["allocs"]+counts["arrays"] == 0 {
		t.Errorf("%s: the probe saw no method entries or allocations: %v", name, counts)
	}
	if counts["mismatches"] != 0 {
		t.Errorf("%s: %d exits did not match their entry's token: %v", name, counts["mismatches"], counts)
	}
	// Methods still on a stack at exit (System.exit inside main, daemon threads) are "live".
	if counts["entries"] != counts["exits"]+counts["unwinds"]+counts["live"] {
		t.Errorf("%s: entries %d != exits %d + unwinds %d + live %d", name, counts["entries"], counts["exits"], counts["unwinds"], counts["live"])
	}
	return plain, probed
}

// compareCount runs the program rewritten by the count pass: same output, and a snapshot whose
// rows charge allocations to the program's accounts.
func (e *env) compareCount(t *testing.T, name string, jars, extra []string, dir, plain string, args ...string) string {
	t.Helper()
	rewritten := append(append(e.rewrite(t, jars), extra...), e.runtimeJar)
	snaps := filepath.Join(e.work, name+"-snapshots")
	counted := e.run(t, dir, rewritten, []string{"-Dheapledger.snapshot.dir=" + snaps}, args...)
	if plain != counted {
		t.Errorf("%s prints differently after the count pass.\nplain:\n%s\ncount:\n%s", name, plain, counted)
	}
	files, _ := filepath.Glob(filepath.Join(snaps, "*.snapshot"))
	if len(files) != 1 {
		t.Fatalf("%s: want one exit snapshot, found %v", name, files)
	}
	s, err := snapshot.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	rep := s.Summarize(3)
	var accounted int64
	for _, a := range rep.Accounts {
		if a.ID != 0 {
			accounted += a.Totals.Objects + a.Totals.Arrays
		}
		t.Logf("%s: %s: %d objects, %d arrays, %d bytes", name, a.Name, a.Totals.Objects, a.Totals.Arrays, a.Totals.Bytes)
	}
	if accounted == 0 {
		t.Errorf("%s: no allocation charged to the program's accounts", name)
	}
	if d := s.Header["dropped"]; d != "0" {
		t.Errorf("%s: the runtime dropped events: %s, the first: %s", name, d, s.Header["dropped_first"])
	}
	return counted
}

func readCounts(t *testing.T, path string) map[string]int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("probe report: %v", err)
	}
	m := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		k, v, _ := strings.Cut(line, " ")
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("probe report line %q", line)
		}
		m[k] = n
	}
	return m
}

func mkdir(t *testing.T, parts ...string) string {
	t.Helper()
	d := filepath.Join(parts...)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

func mustRun(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
}

// The programs share one setup (the binary and the probe jar are built once) and run one after
// another: each is a JVM that may use both cores.
func TestProgramsBehaveTheSameAfterProbe(t *testing.T) {
	e := setup(t)
	t.Run("ecj", e.ecj)
	t.Run("xalan", e.xalan)
	t.Run("h2", e.h2)
	t.Run("sunflow", e.sunflow)
}

// TestProgramsBehaveTheSameAfterCount: the same programs rewritten with memory accounts on
// every package (each method switching accounts) and every allocation site counted.
func TestProgramsBehaveTheSameAfterCount(t *testing.T) {
	e := setup(t)
	e.count = true
	t.Run("ecj", e.ecj)
	t.Run("xalan", e.xalan)
	t.Run("h2", e.h2)
	t.Run("sunflow", e.sunflow)
}

// ecj compiles a generated source tree; the class files it writes must be byte-identical.
func (e *env) ecj(t *testing.T) {
	jars := needJars(t, "ecj.jar")
	src := mkdir(t, e.work, "ecj-src")
	writeSources(t, src, 12)
	dirs := func(v string) string { return mkdir(t, e.work, "ecj-"+v) }
	e.compare(t, "ecj", jars, nil, dirs, "org.eclipse.jdt.internal.compiler.batch.Main", "-1.8", "-nowarn", "-d", "out", src)
	plain, probed := treeDigest(t, filepath.Join(dirs("plain"), "out")), treeDigest(t, filepath.Join(dirs("probe"), "out"))
	if plain == "" || plain != probed {
		t.Errorf("ecj wrote different class files after the probe pass:\nplain:\n%s\nprobe:\n%s", plain, probed)
	}
}

// writeSources generates n classes that use generics, lambdas, inner classes, switches and
// exceptions, so the compiler exercises much of itself.
func writeSources(t *testing.T, dir string, n int) {
	t.Helper()
	pkg := mkdir(t, dir, "gen")
	for i := 0; i < n; i++ {
		next := (i + 1) % n
		src := fmt.Sprintf(`package gen;

import java.util.*;
import java.util.function.*;

public class C%[1]d<T extends Comparable<T>> implements Iterable<T> {
    private final List<T> items = new ArrayList<>();
    private final Map<String, Integer> counts = new TreeMap<>();

    public C%[1]d<T> add(T t) { items.add(t); counts.merge(String.valueOf(t), 1, Integer::sum); return this; }
    public Iterator<T> iterator() { return items.iterator(); }
    public Optional<T> max() { return items.stream().max(Comparator.naturalOrder()); }

    class Inner { int size() { return items.size() + %[1]d; } }

    static int classify(int x) {
        switch (x %% 5) { case 0: return 1; case 1: return 7; case 2: return 11; default: return -x; }
    }

    static String guarded(String s) {
        try {
            return s.substring(%[1]d);
        } catch (StringIndexOutOfBoundsException e) {
            return "short";
        } finally {
            classify(s.length());
        }
    }

    public static int run(int depth) {
        C%[1]d<String> c = new C%[1]d<>();
        for (int i = 0; i < 10; i++) c.add("v" + (i * %[1]d %% 7));
        Function<Integer, Integer> f = k -> k * classify(k);
        int acc = f.apply(depth) + c.new Inner().size() + guarded("abcdefghijklmnop").length();
        return depth > 0 ? acc + C%[2]d.run(depth - 1) : acc;
    }
}
`, i, next)
		if err := os.WriteFile(filepath.Join(pkg, fmt.Sprintf("C%d.java", i)), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// treeDigest lists every file under dir with a SHA-256 of its contents.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		lines = append(lines, fmt.Sprintf("%x %s", sha256.Sum256(data), rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// xalan sorts and sums a generated document with a stylesheet.
func (e *env) xalan(t *testing.T) {
	jars := needJars(t, "xalan2.jar", "serializer.jar")
	dir := mkdir(t, e.work, "xalan")
	var doc strings.Builder
	doc.WriteString("<items>")
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&doc, `<item n="%d">name-%d</item>`, (i*7919)%1000, i)
	}
	doc.WriteString("</items>")
	if err := os.WriteFile(filepath.Join(dir, "doc.xml"), []byte(doc.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	xsl, _ := filepath.Abs(filepath.Join("testdata", "sort.xsl"))
	out, _ := e.compare(t, "xalan", jars, nil, func(string) string { return dir },
		"org.apache.xalan.xslt.Process", "-IN", "doc.xml", "-XSL", xsl)
	if !strings.Contains(out, "0=name-0") {
		t.Errorf("xalan output does not look like the sorted document:\n%.300s", out)
	}
}

// h2 runs an SQL script against an in-memory database and prints the results.
func (e *env) h2(t *testing.T) {
	jars := needJars(t, "h2.jar")
	dir := mkdir(t, e.work, "h2")
	script, _ := filepath.Abs(filepath.Join("testdata", "script.sql"))
	out, _ := e.compare(t, "h2", jars, nil, func(string) string { return dir },
		"org.h2.tools.RunScript", "-url", "jdbc:h2:mem:behaviour", "-script", script, "-showResults")
	if !strings.Contains(out, "--> 500 187875 n99") {
		t.Errorf("h2 output lacks the expected aggregate row:\n%s", out)
	}
}

// sunflow renders its benchmark scene and compares it with a reference image rendered by the
// unmodified sunflow; the check must pass after the probe pass too.
func (e *env) sunflow(t *testing.T) {
	jars := needJars(t, "sunflow.jar", "janino.jar")
	const res = "32"
	golden := mkdir(t, e.work, "sunflow-golden")
	mkdir(t, golden, "resources")
	classes := mkdir(t, e.work, "sunflow-helper")
	src, _ := filepath.Abs(filepath.Join("testdata", "SunflowGolden.java"))
	mustRun(t, golden, e.javac, "-cp", strings.Join(jars, string(os.PathListSeparator)), "-d", classes, src)
	e.run(t, golden, append(jars, classes), nil, "SunflowGolden", res)
	if _, err := os.Stat(filepath.Join(golden, "resources", "golden_0020.png")); err != nil {
		t.Fatalf("reference image not written: %v", err)
	}
	// The benchmark loads resources/golden_NNNN.png from the classpath.
	out, _ := e.compare(t, "sunflow", jars, []string{golden}, func(string) string { return golden },
		"org.sunflow.Benchmark", "-bench", "1", res)
	if !strings.Contains(out, "Image check passed") {
		t.Errorf("sunflow image check did not pass:\n%s", out)
	}
}
