package passes

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/heapledger/heapledger/fixtures"
	"github.com/heapledger/heapledger/internal/testenv"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
	"github.com/heapledger/heapledger/rewrite/transform"
)

var tmpRoot string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "heapledger-passes-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tmpRoot = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// once builds something at most once per test process; a failure is remembered and reported to
// every test that needs it.
type once struct {
	sync.Once
	val any
	err error
}

func (o *once) get(t *testing.T, build func() (any, error)) any {
	t.Helper()
	o.Do(func() { o.val, o.err = build() })
	if o.err != nil {
		t.Fatal(o.err)
	}
	return o.val
}

var java17, java25, jasmin, probeRT, verifyTool once

func set17(t *testing.T) *fixtures.Set {
	javac, java := testenv.Tool(t, "javac"), testenv.Tool(t, "java")
	return java17.get(t, func() (any, error) {
		return fixtures.BuildJava17(javac, java, filepath.Join(tmpRoot, "java17"))
	}).(*fixtures.Set)
}

func set25(t *testing.T) *fixtures.Set {
	h := fixtures.JDK25Home()
	javac, java := testenv.Tool(t, filepath.Join(h, "bin/javac")), testenv.Tool(t, filepath.Join(h, "bin/java"))
	return java25.get(t, func() (any, error) {
		return fixtures.BuildJava25(javac, java, filepath.Join(tmpRoot, "java25"))
	}).(*fixtures.Set)
}

func setJasmin(t *testing.T) *fixtures.Set {
	jasminTool, java := testenv.Tool(t, "jasmin"), testenv.Tool(t, "java")
	return jasmin.get(t, func() (any, error) {
		return fixtures.BuildJasmin(jasminTool, java, filepath.Join(tmpRoot, "jasmin"))
	}).(*fixtures.Set)
}

// probeRuntime builds the probe runtime jar with the project's own build step, so the test
// also proves that step.
func probeRuntime(t *testing.T) string {
	bash := testenv.Tool(t, "bash")
	testenv.Tool(t, "gradle") // scripts/build-java.sh runs the top-level build.gradle
	return probeRT.get(t, func() (any, error) {
		root := filepath.Join(fixtures.Dir(), "..")
		if err := runTool(bash, filepath.Join(root, "scripts", "build-java.sh"), "probe"); err != nil {
			return nil, err
		}
		return filepath.Join(root, "build", "heapledger-probe.jar"), nil
	}).(string)
}

// verifyJar builds tools/verify with the project's build step.
func verifyJar(t *testing.T) string {
	bash := testenv.Tool(t, "bash")
	testenv.Tool(t, "gradle") // scripts/build-java.sh runs the top-level build.gradle
	return verifyTool.get(t, func() (any, error) {
		root := filepath.Join(fixtures.Dir(), "..")
		if err := runTool(bash, filepath.Join(root, "scripts", "build-java.sh"), "verify"); err != nil {
			return nil, err
		}
		return filepath.Join(root, "build", "verify.jar"), nil
	}).(string)
}

// verifyAll links every class of a rewritten class directory with HotSpot's verifier
// (tools/verify), including classes the programs never load, and fails on any that does not
// link.
func verifyAll(t *testing.T, java, dir string, cp []string) {
	t.Helper()
	jar := filepath.Join(t.TempDir(), "classes.jar")
	f, err := os.Create(jar)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	err = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-cp", verifyJar(t), "heapledger.verify.Verify"}
	if len(cp) > 0 {
		args = append(args, "--cp", strings.Join(cp, string(os.PathListSeparator)))
	}
	out, err := exec.Command(java, append(args, jar)...).Output()
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	bad := 0
	for _, l := range lines {
		if !strings.HasPrefix(l, "OK\t") {
			t.Errorf("does not link after rewriting: %s", l)
			bad++
		}
	}
	t.Logf("verify: %d of %d classes link", len(lines)-bad, len(lines))
}

// rewritten is the outcome of running a pass over a class directory.
type rewritten struct {
	dir      string
	results  map[string]transform.Result // by class file path relative to the input
	inputs   map[string][]byte
	identity int // classes whose output equals their input
}

func rewriteDir(t *testing.T, pass transform.Class, in, out string) *rewritten {
	t.Helper()
	rw := &rewritten{dir: out, results: map[string]transform.Result{}, inputs: map[string][]byte{}}
	err := filepath.Walk(in, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !strings.HasSuffix(p, ".class") {
			return err
		}
		rel, _ := filepath.Rel(in, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		res, err := pass.TransformClass(rel, data)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		rw.results[rel], rw.inputs[rel] = res, data
		outData := data
		if res.Data != nil {
			outData = res.Data
		}
		if bytes.Equal(outData, data) {
			rw.identity++
		}
		dst := filepath.Join(out, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, outData, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return rw
}

// report is the probe runtime's count file.
type report map[string]int64

func readReport(t *testing.T, path string) report {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("probe report: %v", err)
	}
	r := report{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		k, v, ok := strings.Cut(line, " ")
		n, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil {
			t.Fatalf("probe report line %q", line)
		}
		r[k] = n
	}
	return r
}

func (r report) String() string {
	var keys []string
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", k, r[k])
	}
	return strings.TrimSpace(b.String())
}

// exactCounts are the probe counts of fixtures small enough to count by hand (see the .j files).
var exactCounts = map[string]report{
	// main, guarded ×2, log ×3, nested; guarded(0) unwinds; two StringBuilders in the finally
	// subroutine and one IllegalStateException; one newarray.
	"JsrRet": {"entries": 7, "exits": 6, "unwinds": 1, "allocs": 3, "arrays": 1, "mismatches": 0, "live": 0},
	// main, <init> ×2, retry, classify ×7, cube; two Handcrafted and two StringBuilders; one
	// multianewarray. The NumberFormatExceptions are thrown and caught inside retry's callee.
	"Handcrafted": {"entries": 12, "exits": 12, "unwinds": 0, "allocs": 4, "arrays": 1, "mismatches": 0, "live": 0},
}

func runSet(t *testing.T, set *fixtures.Set, pass string) *rewritten {
	var p transform.Class
	switch pass {
	case "identity":
		p = Identity()
	case "probe":
		p = Probe()
	}
	rw := rewriteDir(t, p, set.ClassDir, filepath.Join(t.TempDir(), "classes"))
	for rel, res := range rw.results {
		for _, s := range res.Skipped {
			t.Logf("%s: skipped %s: %s", rel, s.Method, s.Reason())
		}
		for _, w := range res.Warnings {
			t.Errorf("%s: warning %s", rel, w)
		}
	}
	cp := []string{rw.dir}
	var extra []string
	if pass == "probe" {
		extra = []string{probeRuntime(t)}
		cp = append(cp, extra...)
	}
	verifyAll(t, set.Java, rw.dir, extra)
	for _, prog := range set.Programs {
		repPath := filepath.Join(t.TempDir(), "probe.txt")
		got, err := set.Run(prog.Main, cp, "-Dheapledger.probe.report="+repPath)
		if err != nil {
			t.Errorf("rewritten %s: %v", prog.Main, err)
			continue
		}
		if got != prog.Expected {
			t.Errorf("rewritten %s printed\n%s\nwant\n%s", prog.Main, got, prog.Expected)
		}
		if pass != "probe" {
			continue
		}
		r := readReport(t, repPath)
		t.Logf("%s probe counts: %v", prog.Main, r)
		if r["entries"] == 0 || r["entries"] != r["exits"]+r["unwinds"] || r["mismatches"] != 0 || r["live"] != 0 {
			t.Errorf("%s: probe counts %v: want entries > 0, entries == exits + unwinds, no mismatches, none live", prog.Main, r)
		}
		if want, ok := exactCounts[prog.Main]; ok && r.String() != want.String() {
			t.Errorf("%s: probe counts %v, want exactly %v", prog.Main, r, want)
		}
	}
	return rw
}

func TestIdentityJava17(t *testing.T) { checkIdentity(t, runSet(t, set17(t), "identity")) }
func TestIdentityJava25(t *testing.T) { checkIdentity(t, runSet(t, set25(t), "identity")) }
func TestIdentityJasmin(t *testing.T) { checkIdentity(t, runSet(t, setJasmin(t), "identity")) }

// javac's and jasmin's encodings are what the encoder reproduces, so an unedited class must come
// back byte for byte.
func checkIdentity(t *testing.T, rw *rewritten) {
	t.Helper()
	var diff []string
	for rel, res := range rw.results {
		if res.Data == nil {
			diff = append(diff, rel+" (not written)")
		} else if !bytes.Equal(res.Data, rw.inputs[rel]) {
			diff = append(diff, rel)
		}
	}
	sort.Strings(diff)
	t.Logf("identity: %d of %d classes byte-identical", rw.identity, len(rw.results))
	if len(diff) > 0 {
		t.Errorf("identity changed %d classes: %v", len(diff), diff)
	}
}

func TestProbeJava25(t *testing.T) { checkAllProbed(t, runSet(t, set25(t), "probe"), nil) }
func TestProbeJasmin(t *testing.T) { checkAllProbed(t, runSet(t, setJasmin(t), "probe"), nil) }

func TestProbeJava17(t *testing.T) {
	rw := runSet(t, set17(t), "probe")
	// The 64 KB method is kept as it was and reported; the rest of its class is instrumented.
	big := rw.results["BigMethod.class"]
	want := transform.Skip{Method: "big(I)I", Code: transform.SkipTooLarge}
	if len(big.Skipped) != 1 || big.Skipped[0] != want {
		t.Errorf("BigMethod skipped %v, want exactly %v", big.Skipped, want)
	}
	checkAllProbed(t, rw, map[string]bool{"BigMethod.big(I)I": true})
	if !bytes.Equal(methodCode(t, rw.inputs["BigMethod.class"], "big"), methodCode(t, big.Data, "big")) {
		t.Errorf("BigMethod.big was changed although it was reported as skipped")
	}
	// The loop whose body grew past 32 KB needs goto_w for its back edge and a widened exit.
	wide := decodeMethod(t, rw.results["WideLoop.class"].Data, "wide")
	if n := countOps(wide, code.GOTO_W); n < 2 {
		t.Errorf("WideLoop.wide has %d goto_w after rewriting, want at least 2 (back edge and widened exit)", n)
	}
	if n := countOps(decodeMethod(t, rw.inputs["WideLoop.class"], "wide"), code.GOTO_W); n != 0 {
		t.Errorf("WideLoop.wide already had %d goto_w before rewriting", n)
	}
}

// checkAllProbed checks that every method with code calls Probe.enter, except those expected to
// be skipped.
func checkAllProbed(t *testing.T, rw *rewritten, skipped map[string]bool) {
	t.Helper()
	for rel, res := range rw.results {
		data := res.Data
		if data == nil {
			// Only a class without any method that has code (an interface of abstract methods)
			// may be left as it was.
			data = rw.inputs[rel]
		}
		cf, err := classfile.Parse(data)
		if err != nil {
			t.Fatalf("%s: rewritten class does not parse: %v", rel, err)
		}
		for _, m := range cf.Methods {
			id := cf.Name() + "." + m.Name(cf.Pool) + m.Descriptor(cf.Pool)
			c, _, err := cf.MethodCode(m)
			if err != nil {
				t.Fatalf("%s: %v", id, err)
			}
			if c == nil {
				continue
			}
			if calls := probeCalls(t, cf, m, c); (calls["enter"] > 0) == skipped[id] {
				t.Errorf("%s: %d enter calls, expected skipped=%v", id, calls["enter"], skipped[id])
			}
		}
	}
}

func probeCalls(t *testing.T, cf *classfile.Class, m *classfile.Member, c *classfile.Code) map[string]int {
	t.Helper()
	b, err := code.Decode(c, cf.Pool, code.Method{Class: cf.Name(), Name: m.Name(cf.Pool), Desc: m.Descriptor(cf.Pool), Access: m.AccessFlags, Major: cf.Major})
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	for n := b.First(); n != nil; n = n.Next() {
		if n.Op == code.INVOKESTATIC {
			owner, name, _, err := cf.Pool.MemberRef(n.Index)
			if err == nil && owner == ProbeClass {
				calls[name]++
			}
		}
	}
	return calls
}

func decodeMethod(t *testing.T, data []byte, name string) *code.Body {
	t.Helper()
	cf, err := classfile.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range cf.Methods {
		if m.Name(cf.Pool) == name {
			c, _, err := cf.MethodCode(m)
			if err != nil {
				t.Fatal(err)
			}
			b, err := code.Decode(c, cf.Pool, code.Method{Class: cf.Name(), Name: name, Desc: m.Descriptor(cf.Pool), Access: m.AccessFlags, Major: cf.Major})
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatalf("no method %s", name)
	return nil
}

func methodCode(t *testing.T, data []byte, name string) []byte {
	t.Helper()
	cf, err := classfile.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range cf.Methods {
		if m.Name(cf.Pool) == name {
			c, _, err := cf.MethodCode(m)
			if err != nil {
				t.Fatal(err)
			}
			return c.Bytecode
		}
	}
	t.Fatalf("no method %s", name)
	return nil
}

func countOps(b *code.Body, op code.Opcode) int {
	n := 0
	for i := b.First(); i != nil; i = i.Next() {
		if i.Op == op {
			n++
		}
	}
	return n
}

func runTool(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return nil
}
