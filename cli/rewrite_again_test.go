package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/rewrite/accounts"
)

// Rewriting the output of a count rewrite (say, a build step run twice on the same jar) leaves
// its classes as they are, which rewritten again counted each allocation twice, and continues
// its table, which a fresh one replaced inside the output: the classes' IDs lost their names.
// Jars rewritten separately are taken together, with both tables; jars whose IDs do clash are
// refused together; one rewritten with --table continuing the other is taken.
func TestRewriteAgainKeepsClassesAndTable(t *testing.T) {
	needJDK(t)
	dir := t.TempDir()
	src := func(name, body string) string {
		d := filepath.Join(dir, "src-"+name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(d, name+".java")
		if err := os.WriteFile(f, []byte("public class "+name+" { public static void main(String[] a) { "+body+" } }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "classes-"+name)
		if b, err := exec.Command("javac", "-d", out, f).CombinedOutput(); err != nil {
			t.Fatalf("javac: %v\n%s", err, b)
		}
		return out
	}
	one := src("One", `System.out.println(new StringBuilder("x").append(new int[3].length));`)
	two := src("Two", `System.out.println(new java.util.ArrayList<String>(new java.util.HashSet<String>()));`)
	at := func(name string) string { return filepath.Join(dir, name) }
	rewrite := func(args ...string) (string, error) {
		_, stderr, err := runCLI(t, append([]string{"rewrite", "--accounts", "*"}, args...)...)
		return stderr, err
	}
	read := func(path string) []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	table := func(out string) []byte { return read(filepath.Join(out, filepath.FromSlash(accounts.TableResource))) }

	if stderr, err := rewrite(one, "-o", at("once")); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	stderr, err := rewrite(at("once"), "-o", at("twice"))
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{"rewritten by heapledger before (2 allocation sites)", "0 rewritten, 1 unchanged", "1 classes skipped (already rewritten by heapledger: 1)", "twice: 2 allocation sites"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !bytes.Equal(read(filepath.Join(at("twice"), "One.class")), read(filepath.Join(at("once"), "One.class"))) {
		t.Error("a rewritten class was rewritten again")
	}
	if !bytes.Equal(table(at("twice")), table(at("once"))) {
		t.Errorf("the table inside the output is not the input's:\n%s\nwant\n%s", table(at("twice")), table(at("once")))
	}

	// Rewritten separately, One and Two number their sites from bases their inputs choose:
	// taken together, both tables are kept.
	if stderr, err := rewrite(two, "-o", at("two")); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if stderr, err := rewrite(at("once"), at("two"), "-o", at("both")); err != nil {
		t.Errorf("jars rewritten apart taken together: %v\n%s", err, stderr)
	} else if by := sitesByClass(t, table(at("both"))); by["One"] != 2 || by["Two"] != 2 {
		t.Errorf("sites by class %v, want One 2, Two 2", by)
	}
	// Tables that do give one ID to two sites (both continue a table of an earlier version,
	// which numbered from 1) are refused together, and nothing is written.
	legacy := "# heapledger table 1\naccount\t0\t<unaccounted>\naccount\t1\t*\nsite\t1\tobject\tX\tX.m()V\t0\t-1\n"
	for _, n := range []string{"legacy1.tsv", "legacy2.tsv"} {
		if err := os.WriteFile(at(n), []byte(legacy), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if stderr, err := rewrite(one, "--table", at("legacy1.tsv"), "-o", at("one-legacy")); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if stderr, err := rewrite(two, "--table", at("legacy2.tsv"), "-o", at("two-legacy")); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if _, err := rewrite(at("one-legacy"), at("two-legacy"), "-o", at("clash")); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("jars with clashing IDs taken together: %v", err)
	}
	if _, err := os.Stat(at("clash")); !os.IsNotExist(err) {
		t.Errorf("refused, yet the output is there: %v", err)
	}
	// Two rewritten continuing One's table, and a plain input beside them: all three fit.
	if stderr, err := rewrite(two, "--table", at("once.table.tsv"), "-o", at("two-after")); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	three := src("Three", `System.out.println(new Object[2].length);`)
	stderr, err = rewrite(at("once"), at("two-after"), three, "-o", at("all"))
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if by := sitesByClass(t, table(at("all"))); by["One"] != 2 || by["Two"] != 2 || by["Three"] != 1 || len(by) != 3 {
		t.Errorf("sites by class %v, want One 2, Two 2, Three 1:\n%s", by, table(at("all")))
	}
	if !strings.Contains(stderr, "1 rewritten, 2 unchanged") {
		t.Errorf("only Three should be rewritten:\n%s", stderr)
	}
}

// sitesByClass counts a table's sites by the class of their method.
func sitesByClass(t *testing.T, table []byte) map[string]int {
	t.Helper()
	tb, err := accounts.ReadTable(bytes.NewReader(table))
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]int{}
	for _, id := range tb.SiteIDs() {
		s, _ := tb.Site(id)
		by[strings.SplitN(s.Method, ".", 2)[0]]++
	}
	return by
}
