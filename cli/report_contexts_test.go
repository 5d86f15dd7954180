package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/fixtures"
)

// compileAccountsFixture compiles fixtures/accounts into the directory classes.
func compileAccountsFixture(t *testing.T, classes string) {
	t.Helper()
	var srcs []string
	filepath.WalkDir(filepath.Join(fixtures.Dir(), "accounts", "src"), func(p string, _ os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".java") {
			srcs = append(srcs, p)
		}
		return err
	})
	if b, err := exec.Command("javac", append([]string{"--release", "17", "-d", classes}, srcs...)...).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, b)
	}
}

// contextsStack is a full stack of the accounts fixture's threads scenario, outermost first:
// each of its 64 threads runs A.chain, whose B.work calls C.make, which allocates.
const contextsStack = "acct.Main.lambda$main$0();acct.a.A.chain(int);acct.b.B.work(int);acct.c.C.make(int)"

// TestContextProfilesMatchReport is the calling-context mode of TestDemoExactCounts's profile
// checks, end to end through the commands (issue 34): the accounts fixture rewritten with
// `rewrite --context cct`, its threads scenario run with liveness, then the pprof profile (go
// tool pprof reading it included), the collapsed stacks and the HTML report's flame graphs in
// a browser total what the text report does; the pprof profile and collapsed stacks carry full
// stacks, the callers of the allocating method up to the thread's first method, and the page
// draws a caller's frame.
func TestContextProfilesMatchReport(t *testing.T) {
	needJDK(t)
	dir := t.TempDir()
	classes, out, snaps := filepath.Join(dir, "classes"), filepath.Join(dir, "out"), filepath.Join(dir, "snaps")
	compileAccountsFixture(t, classes)
	if _, stderr, err := runCLI(t, "rewrite", "--context", "cct", "--accounts", "acct.a,acct.b,acct.c", classes, "-o", out+"/"); err != nil {
		t.Fatalf("rewrite: %v\n%s", err, stderr)
	}
	cmd := exec.Command("java", "-Dheapledger.snapshot.dir="+snaps, "-Dheapledger.liveness=all", "-Dheapledger.snapshot.gc=true",
		"-cp", out+string(os.PathListSeparator)+os.Getenv("HEAPLEDGER_RUNTIME"), "acct.Main", "threads")
	if b, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(b), "done threads") {
		t.Fatalf("java: %v\n%s", err, b)
	}
	s := onlySnapshot(t, snaps)
	if s.Contexts == nil || !s.Liveness {
		t.Fatalf("%s: contexts %v, liveness %v", s.Path, s.Contexts != nil, s.Liveness)
	}

	pb := checkProfileTotals(t, s.Path, true)
	// go tool pprof prints a stack leaf first, a frame a line.
	var leafFirst []string
	for _, f := range strings.Split(contextsStack, ";") {
		leafFirst = append([]string{f}, leafFirst...)
	}
	var traced []string
	traces := goPprof(t, "-traces", "-sample_index=alloc_objects", pb)
	for _, line := range strings.Split(traces, "\n") {
		traced = append(traced, strings.TrimSpace(line))
	}
	if !strings.Contains(strings.Join(traced, "\n"), "\n"+strings.Join(leafFirst, "\n")+"\n") {
		t.Errorf("go tool pprof -traces shows no stack %s:\n%s", contextsStack, traces)
	}
	folded, _, err := runCLI(t, "report", "--format", "collapsed", "--sample-type", "alloc_objects", s.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(folded, "[acct.c];"+contextsStack+";int[] ") {
		t.Errorf("collapsed stacks lack %s:\n%s", contextsStack, folded)
	}

	page := filepath.Join(dir, "report.html")
	if _, _, err := runCLI(t, "html", "-o", page, s.Path); err != nil {
		t.Fatal(err)
	}
	tot := s.Summarize(0).Total
	// A.chain allocates nothing itself: its frame is drawn only as a caller, from the contexts.
	want := pageTotals{Bytes: tot.Bytes, LiveBytes: tot.LiveBytes, Liveness: true, Search: "A.chain", Frame: "acct.a.A.chain(int)"}
	if p := browserProblems(t, needBrowser(t), page, want); len(p) > 0 {
		t.Errorf("the HTML report of a snapshot with calling contexts:\n  %s", strings.Join(p, "\n  "))
	}
}
