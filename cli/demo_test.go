package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/analysis/snapshot"
)

// TestDemoExactCounts runs `heapledger demo` and checks the counts per account, worked out
// by hand from fixtures/demo/src: every allocation the shared library demo.lib makes for
// demo.reports is charged to demo.reports.
//
// With liveness and without, its pprof profile and collapsed stacks total what its report does
// (go tool pprof reading the profile included), and its HTML report draws in a browser with
// flame-graph roots equal to those totals.
func TestDemoExactCounts(t *testing.T) {
	needJDK(t)
	for _, liveness := range []string{"all", "off"} {
		t.Run("liveness="+liveness, func(t *testing.T) { demoExactCounts(t, liveness) })
	}
}

func demoExactCounts(t *testing.T, liveness string) {
	dir := t.TempDir()
	out, errOut, err := runCLI(t, "demo", "--dir", dir, "--liveness", liveness)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	for _, want := range []string{"orders: 2000", "report lines: 38", "checksum: fa0814f7", "demo.reports", "0 failed; 0 methods skipped"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	snaps, _ := filepath.Glob(filepath.Join(dir, "snapshots", "*.snapshot"))
	if len(snaps) != 1 {
		t.Fatalf("snapshots: %v", snaps)
	}
	s, err := snapshot.ReadFile(snaps[0])
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]snapshot.Totals{}
	for _, a := range s.Summarize(0).Accounts {
		got[a.Name] = a.Totals
	}
	want := map[string][3]int64{ // objects, arrays, elements
		// 2000 Order + the book's ArrayList; each Order's long[4] history.
		"demo.orders": {2001, 2000, 8000},
		// one HashMap per request; split/substring allocate inside the JDK, which is not rewritten.
		"demo.web": {2000, 0, 0},
		// 20 rounds × (TreeMap, TextTable, its ArrayList, StringBuilder) + 2280 padding Strings;
		// arrays: 740 int[2], 740 String[3] varargs + 740 clones, 20 header varargs + 20 clones,
		// 20 int[] widths, 2280 char[] pads. Pad elements per round: the customer column is 8
		// wide ("customer"): header 2, c0–c9 8 each, c10–c36 7 each = 271; orders ("orders", 6
		// wide, two-digit counts): 2 + 37×6 = 224; items ("items", 5 wide, three-digit sums):
		// 2 + 37×4 = 150; 645 per round.
		"demo.reports": {2360, 4560, 740*2 + 740*3*2 + 20*3*2 + 20*3 + 20*645},
		// Main: OrderBook, RequestHandler, ReportBuilder and 2003 concatenated Strings.
		"<unaccounted>": {2006, 0, 0},
	}
	for name, w := range want {
		g := got[name]
		if g.Objects != w[0] || g.Arrays != w[1] || g.Elements != w[2] {
			t.Errorf("%s: got objects %d arrays %d elements %d, want %v", name, g.Objects, g.Arrays, g.Elements, w)
		}
		if g.Bytes <= 0 || g.UnknownRows != 0 {
			t.Errorf("%s: bytes %d, unknown sizes %d", name, g.Bytes, g.UnknownRows)
		}
	}
	if len(got) != len(want) {
		t.Errorf("accounts %v", got)
	}
	if !regexp.MustCompile(`demo\.lib\.TextTable\.line\(.*\)\S* line \d+ @\d+ char\[\]`).MatchString(out) {
		t.Errorf("top sites should name the library method charged to demo.reports:\n%s", out)
	}
	if s.Liveness != (liveness != "off") {
		t.Errorf("liveness %s: the snapshot's liveness is %v", liveness, s.Liveness)
	}
	if s.Liveness {
		// Main keeps the order book to the end: its orders, their histories and its list are
		// live after the exit snapshot's full GC, and so is the book; the rest is garbage.
		wantLive := map[string]int64{"demo.orders": 4001, "<unaccounted>": 1, "demo.web": 0, "demo.reports": 0}
		for name, w := range wantLive {
			if g := got[name]; g.Live != w || name == "demo.orders" && g.LiveBytes != g.Bytes {
				t.Errorf("%s: live %d (%d bytes of %d), want %d", name, g.Live, g.LiveBytes, g.Bytes, w)
			}
		}
	}
	checkProfileTotals(t, snaps[0], true)

	page := filepath.Join(dir, "report.html")
	if !strings.Contains(out, "HTML report: "+page) {
		t.Errorf("demo does not end with the HTML report's path %s:\n%s", page, out)
	}
	tot := s.Summarize(0).Total
	pageWant := pageTotals{Bytes: tot.Bytes, LiveBytes: tot.LiveBytes, Liveness: s.Liveness,
		Search: "TextTable.line", Frame: "demo.lib.TextTable.line(StringBuilder, String[], int[])"}
	if p := browserProblems(t, needBrowser(t), page, pageWant); len(p) > 0 {
		t.Errorf("the demo's HTML report:\n  %s", strings.Join(p, "\n  "))
	}
}
