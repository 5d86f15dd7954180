package passes

import (
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
