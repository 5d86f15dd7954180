package passes

import (
	"strconv"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/transform"
)

// TestPathFallbacksReported: under --counters paths a method whose objects stay on per-site
// counters is still rewritten, and its result names it with a fallback code (here the
// version-46 class of jsr/ret subroutines: no class constants for the counters), which the
// rewrite's summary counts apart from the methods skipped. Without paths nothing is said.
func TestPathFallbacksReported(t *testing.T) {
	set := setJasmin(t)
	all, err := accounts.Parse("*")
	if err != nil {
		t.Fatal(err)
	}
	for _, paths := range []bool{false, true} {
		pass, err := Count(CountOptions{Accounts: all, Table: accounts.NewTable(nil), Paths: paths})
		if err != nil {
			t.Fatal(err)
		}
		rw := rewriteDir(t, pass, set.ClassDir, t.TempDir())
		res, ok := rw.results["JsrRet.class"]
		if !ok || res.Data == nil {
			t.Fatalf("paths=%v: JsrRet not rewritten: %+v", paths, res)
		}
		fallbacks := map[string]transform.SkipCode{}
		for _, s := range res.Skipped {
			if s.Code.Fallback() {
				fallbacks[s.Method] = s.Code
			} else {
				t.Errorf("paths=%v: %s skipped: %s", paths, s.Method, s.Reason())
			}
		}
		if !paths {
			if len(fallbacks) > 0 {
				t.Errorf("fallbacks without paths: %v", fallbacks)
			}
			continue
		}
		// guarded(I)I allocates an exception and a StringBuilder; nested(I)I only an array,
		// which paths never count, so it has no fallback to report.
		if fallbacks["guarded(I)I"] != transform.SkipPathsOldClass {
			t.Errorf("fallbacks %v, want guarded(I)I: %s", fallbacks, transform.SkipPathsOldClass)
		}
		if _, ok := fallbacks["nested(I)I"]; ok {
			t.Errorf("nested(I)I reported, but has no object site: %v", fallbacks)
		}
	}
}

// TestPathCountedKinds: under --counters paths, path counters stand for objects and string
// concatenations, and every other kind keeps its own call, as the kinds table's pathable
// column says (issue 28 item 2: the table is the one list of what each kind does).
func TestPathCountedKinds(t *testing.T) {
	set := set17(t)
	all, err := accounts.Parse("*")
	if err != nil {
		t.Fatal(err)
	}
	table := accounts.NewTable(nil)
	pass, err := Count(CountOptions{Accounts: all, Table: table, Paths: true})
	if err != nil {
		t.Fatal(err)
	}
	rewriteDir(t, pass, set.ClassDir, t.TempDir())
	// docs/instrumentation.md, "Path counters": objects and string concatenations; arrays
	// (their lengths), multianewarray, capturing lambdas, clone() and reflection (their
	// classes) keep their own calls.
	pathable := map[string]bool{accounts.KindObject: true, accounts.KindConcat: true}
	onPaths, own := map[string]int{}, map[string]int{}
	for _, id := range table.SiteIDs() {
		s, _ := table.Site(id)
		if s.Kind != accounts.KindPath {
			own[s.Kind]++
			continue
		}
		for _, f := range strings.Fields(s.Type) {
			off, _, ok := strings.Cut(f, "*")
			d, err := strconv.Atoi(off)
			if !ok || err != nil {
				t.Fatalf("path site %d: bad entry %q in %q", id, f, s.Type)
			}
			named, ok := table.Site(id + d)
			if !ok {
				t.Fatalf("path site %d names no site at %d", id, id+d)
			}
			onPaths[named.Kind]++
		}
	}
	t.Logf("sites on path counters %v, with their own calls %v", onPaths, own)
	for k, n := range onPaths {
		if !pathable[k] {
			t.Errorf("%d %s sites on path counters: they must keep their own calls", n, k)
		}
	}
	for _, k := range []string{accounts.KindObject, accounts.KindConcat} {
		if onPaths[k] == 0 {
			t.Errorf("no %s site on a path counter: %v", k, onPaths)
		}
	}
	for _, k := range []string{accounts.KindArray, accounts.KindLambda} {
		if own[k] == 0 {
			t.Errorf("no %s site in the fixtures to keep its own call: %v", k, own)
		}
	}
}
