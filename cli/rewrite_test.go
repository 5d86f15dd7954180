package main

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/jar"
	"github.com/heapledger/heapledger/rewrite/transform"
)

// Test passes, registered like the real ones, so the command is proven before those land.
func init() {
	registerPass("test-mark", "prefixes every class with MARK (tests only)", plainPass(
		transform.Func(func(name string, data []byte) (transform.Result, error) {
			return transform.Result{Data: append([]byte("MARK"), data...),
				Skipped: []transform.Skip{{Method: "m()V", Code: "test reason"}}}, nil
		})))
	registerPass("test-fail", "fails on classes named Bad, panics on Panic (tests only)", plainPass(
		transform.Func(func(name string, data []byte) (transform.Result, error) {
			switch name {
			case "Bad.class":
				return transform.Result{}, errors.New("Bad: cannot parse at offset 8")
			case "Panic.class":
				panic("index out of range in test pass")
			}
			return transform.Result{}, nil
		})))
}

func writeTestJar(t *testing.T, path string, names ...string) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, _ := zw.Create(n)
		w.Write([]byte("class " + n))
	}
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRewriteCommand(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.jar"), filepath.Join(dir, "out.jar")
	writeTestJar(t, in, "META-INF/MANIFEST.MF", "A.class", "r.txt")
	_, stderr, err := runCLI(t, "rewrite", "--pass", "test-mark", "-j", "2", in, "-o", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "1 classes: 1 rewritten, 0 unchanged, 0 failed; 1 methods skipped (test reason: 1)") {
		t.Errorf("summary missing:\n%s", stderr)
	}
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		want := "class " + f.Name
		if f.Name == "A.class" {
			want = "MARK" + want
		}
		if string(b) != want {
			t.Errorf("%s: %q, want %q", f.Name, b, want)
		}
	}
}

func TestRewriteFailuresAndStrict(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.jar"), filepath.Join(dir, "out.jar")
	writeTestJar(t, in, "Good.class", "Bad.class", "Panic.class")
	_, stderr, err := runCLI(t, "rewrite", "--pass", "test-fail", in, "-o", out)
	if err != nil {
		t.Fatalf("without --strict failures are reported, not fatal: %v", err)
	}
	for _, want := range []string{"in.jar!Bad.class: Bad: cannot parse at offset 8", "in.jar!Panic.class: pass panicked: index out of range in test pass", "3 classes: 0 rewritten, 1 unchanged, 2 failed"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	_, _, err = runCLI(t, "rewrite", "--pass", "test-fail", in, "-o", out, "--strict")
	var ec cli.ExitCoder
	if !errors.As(err, &ec) || ec.ExitCode() != 2 || !strings.Contains(err.Error(), "2 classes failed") {
		t.Errorf("--strict: %v", err)
	}
}

func TestRewriteUnknownPassAndHelp(t *testing.T) {
	_, _, err := runCLI(t, "rewrite", "--pass", "nope", "x.jar", "-o", "y.jar")
	if err == nil || !strings.Contains(err.Error(), `unknown pass "nope"`) || !strings.Contains(err.Error(), "test-fail, test-mark") {
		t.Errorf("unknown pass: %v", err)
	}
	out, _, err := runCLI(t, "rewrite", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range passNames() {
		if !strings.Contains(out, n+" ") || !strings.Contains(out, passes[n].usage) {
			t.Errorf("help does not list pass %s:\n%s", n, out)
		}
	}
	if _, _, err := runCLI(t, "rewrite", "-o", "y.jar"); err == nil || !strings.Contains(err.Error(), "no INPUT") {
		t.Errorf("no input: %v", err)
	}
}

func TestRewriteBadInputNamesFile(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "notajar.jar")
	os.WriteFile(in, []byte("plain text"), 0o644)
	_, _, err := runCLI(t, "rewrite", "--pass", "test-mark", in, "-o", filepath.Join(dir, "o.jar"))
	if err == nil || !strings.Contains(err.Error(), "notajar.jar: not a jar or zip file") {
		t.Errorf("bad input: %v", err)
	}
}

func TestRewriteCountsWarningsBeyondTheFirst(t *testing.T) {
	dir := t.TempDir()
	one, two, out := filepath.Join(dir, "one.jar"), filepath.Join(dir, "two.jar"), filepath.Join(dir, "out.jar")
	var names []string
	for i := 0; i < maxWarnings+5; i++ {
		names = append(names, fmt.Sprintf("r%02d.txt", i))
	}
	writeTestJar(t, one, names...)
	writeTestJar(t, two, names...) // every entry a duplicate: one warning each
	_, stderr, err := runCLI(t, "rewrite", "--pass", "test-mark", one, two, "-o", out)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(stderr, "warning: "); got != maxWarnings+1 {
		t.Errorf("%d warning lines, want %d:\n%s", got, maxWarnings+1, stderr)
	}
	if !strings.Contains(stderr, "warning: 5 more warnings not shown (--verbose shows all)") {
		t.Errorf("no count of the warnings not shown:\n%s", stderr)
	}
	_, stderr, _ = runCLI(t, "rewrite", "--pass", "test-mark", "--verbose", one, two, "-o", out)
	if got := strings.Count(stderr, "warning: "); got != maxWarnings+5 {
		t.Errorf("--verbose: %d warning lines, want %d", got, maxWarnings+5)
	}
}

// TestCountOptionsChooseTheCountPass: `rewrite --accounts ...` without --pass runs the count
// pass (issue 3's command line); count options with another pass are an error, not ignored.
func TestCountOptionsChooseTheCountPass(t *testing.T) {
	dir := t.TempDir()
	classes := filepath.Join(dir, "classes")
	if err := os.MkdirAll(classes, 0o755); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runCLI(t, "rewrite", "--accounts", "com.acme.*", classes, "-o", filepath.Join(dir, "out"))
	if err != nil || !strings.Contains(stderr, "pass count") {
		t.Errorf("want the count pass: %v\n%s", err, stderr)
	}
	_, _, err = runCLI(t, "rewrite", "--pass", "probe", "--accounts", "com.acme.*", classes, "-o", filepath.Join(dir, "out2"))
	if err == nil || !strings.Contains(err.Error(), "--accounts is an option of the count pass") {
		t.Errorf("want an error for --accounts with --pass probe: %v", err)
	}
}

// classBytes is a class file of an empty class, built with the engine's own writer.
func classBytes(t *testing.T, name string) []byte {
	t.Helper()
	c := &classfile.Class{Major: 52, AccessFlags: 0x21, Pool: &classfile.Pool{Entries: []classfile.Constant{{}}}}
	var err error
	if c.ThisClass, err = c.Pool.AddClass(name); err == nil {
		c.SuperClass, err = c.Pool.AddClass("java/lang/Object")
	}
	var b []byte
	if err == nil {
		b, err = c.Bytes()
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// `rewrite X.class` takes the class file inspect takes ("not a jar or zip file" before): to a
// .class output as a class file, whose table the runtime must be pointed at, or to a directory
// filed under the class's name.
func TestRewriteClassFile(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "A.class")
	if err := os.WriteFile(in, classBytes(t, "com/acme/A"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "B.class")
	_, stderr, err := runCLI(t, "rewrite", "--pass", "test-mark", in, "-o", out)
	if b, _ := os.ReadFile(out); err != nil || !strings.HasPrefix(string(b), "MARK\xca\xfe\xba\xbe") {
		t.Fatalf("class to class: %v, output %q\n%s", err, b, stderr)
	}
	_, stderr, err = runCLI(t, "rewrite", "--accounts", "com.acme.*", in, "-o", out)
	if err != nil || !strings.Contains(stderr, "run with -Dheapledger.table="+out+".table.tsv") {
		t.Errorf("count pass to a class file: %v\n%s", err, stderr)
	}
	if _, err := os.Stat(out + ".table.tsv"); err != nil {
		t.Errorf("no table beside the class: %v", err)
	}
	if _, _, err := runCLI(t, "rewrite", "--accounts", "com.acme.*", "--embed-runtime", in, "-o", out); err == nil || !strings.Contains(err.Error(), "a class file output cannot hold the runtime") {
		t.Errorf("--embed-runtime to a class file: %v", err)
	}
	classes := filepath.Join(dir, "classes")
	if _, stderr, err := runCLI(t, "rewrite", "--accounts", "com.acme.*", in, "-o", classes); err != nil {
		t.Fatalf("class to directory: %v\n%s", err, stderr)
	}
	for _, p := range []string{"com/acme/A.class", "META-INF/heapledger/table.tsv"} {
		if _, err := os.Stat(filepath.Join(classes, filepath.FromSlash(p))); err != nil {
			t.Errorf("directory output lacks %s: %v", p, err)
		}
	}
}

// TestRewriteLimitHint: jar's limit errors name no option; the command adds the one that lifts
// the limit.
func TestRewriteLimitHint(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.jar"), filepath.Join(dir, "out.jar")
	writeTestJar(t, in, "A.class")
	_, _, err := runCLI(t, "rewrite", "--max-entry-size", "3", in, "-o", out)
	var le *jar.LimitError
	if err == nil || !errors.As(err, &le) || !strings.HasSuffix(err.Error(), "exceeds the limit of 3 (raise it with --max-entry-size)") {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(le.Error(), "--") {
		t.Errorf("the library's error names an option: %v", le)
	}
}

// TestCountOptionsChooseCount: an option of the count pass given with no --pass runs the count
// pass; with another pass it is refused (the flag group is listed, not found by help text).
func TestCountOptionsChooseCount(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jar")
	writeTestJar(t, in, "A.class")
	for _, name := range countFlagNames {
		if !slices.ContainsFunc(rewriteCmd.Flags, func(f cli.Flag) bool { return f.Names()[0] == name }) {
			t.Errorf("rewrite has no --%s", name)
		}
	}
	_, _, err := runCLI(t, "rewrite", "--pass", "probe", "--liveness", "all", in, "-o", filepath.Join(dir, "o.jar"))
	if err == nil || !strings.Contains(err.Error(), "--liveness is an option of the count pass, not of --pass probe") {
		t.Errorf("error %v", err)
	}
}
