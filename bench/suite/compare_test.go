package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// snapshotText is a snapshot of one program with rows of two sites, a site's ID as given.
func snapshotText(objects, arrayElems, increments string, id string) string {
	return "# heapledger snapshot 3\nreason\texit\nprogram\tP\npid\t1\nincrements\t" + increments +
		"\nincrements_by_method\ta.B.m()V=" + increments + "\naccount\t1\tall\n" +
		"site\t" + id + "\tobject\ta.C\ta.B.m()V\t3\t10\n" +
		"site\t9\tarray\tint[]\ta.B.m()V\t7\t11\n" +
		"alloc\t1\t" + id + "\t0\t" + objects + "\t0\t-1\t-\t-\t-\t-\t-\t-\t-\n" +
		"alloc\t1\t9\t0\t2\t" + arrayElems + "\t-1\t-\t-\t-\t-\t-\t-\t-\nend\n"
}

// TestCompareRows: rows are matched by what the table says of their sites, not by ID, summed
// over a run's snapshots, and a difference in any figure is found; increments add up.
func TestCompareRows(t *testing.T) {
	write := func(dir, name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, b := t.TempDir(), t.TempDir()
	write(a, "heapledger-P-1-1.snapshot", snapshotText("5", "8", "7", "4"))
	write(a, "heapledger-P-2-1.snapshot", snapshotText("1", "8", "3", "4"))
	write(b, "heapledger-P-3-1.snapshot", snapshotText("6", "16", "4", "12"))
	ra, err := readRunRows(a)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := readRunRows(b)
	if err != nil {
		t.Fatal(err)
	}
	if ra.increments != 10 || rb.increments != 4 || ra.byMethod["a.B.m()V"] != 10 {
		t.Errorf("increments %d, %d, by method %v", ra.increments, rb.increments, ra.byMethod)
	}
	if d := diffRows(ra.rows, rb.rows); len(d) != 1 || !strings.Contains(d[0], "array") {
		t.Errorf("differences %q, want the array row alone", d)
	}
	write(b, "heapledger-P-3-1.snapshot", snapshotText("6", "8", "4", "12"))
	write(b, "heapledger-P-4-1.snapshot", snapshotText("0", "8", "4", "12"))
	if rb, err = readRunRows(b); err != nil {
		t.Fatal(err)
	}
	if d := diffRows(ra.rows, rb.rows); len(d) != 0 {
		t.Errorf("differences %q, want none", d)
	}
	if got := topMethods(ra.byMethod, 5); got != "a.B.m()V 100%" {
		t.Errorf("top methods %q", got)
	}
}

// TestCompareModeWithItself: -compare A,A prepares A once, and A,B both, in order.
func TestCompareModeWithItself(t *testing.T) {
	a, b := findMode("heapledger-count"), findMode("heapledger-count-paths")
	if got := distinct([]*Mode{a, a}); len(got) != 1 || got[0] != a {
		t.Errorf("A,A: %d modes", len(got))
	}
	if got := distinct([]*Mode{a, b}); len(got) != 2 || got[0] != a || got[1] != b {
		t.Errorf("A,B: %d modes", len(got))
	}
}

// TestSamePlace: each mode's rewritten jars run from one path whatever the mode (a program can
// count its class path); other classpath entries are left where they are.
func TestSamePlace(t *testing.T) {
	env := &Env{Out: t.TempDir()}
	var got [2][]string
	for i, mode := range []string{"heapledger-count", "heapledger-count-paths"} {
		jar := filepath.Join(env.Out, "rewritten", mode, "w", "abc", "w.jar")
		if err := os.MkdirAll(filepath.Dir(jar), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(jar, []byte(mode), 0o644); err != nil {
			t.Fatal(err)
		}
		cp, err := samePlace(env, "w", []string{"/usr/share/java/x.jar", jar})
		if err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(cp[1]); err != nil || string(b) != mode {
			t.Errorf("%s: %s holds %q (%v)", mode, cp[1], b, err)
		}
		got[i] = cp
	}
	if got[0][0] != "/usr/share/java/x.jar" || got[0][1] != got[1][1] {
		t.Errorf("classpaths %v and %v", got[0], got[1])
	}
}
