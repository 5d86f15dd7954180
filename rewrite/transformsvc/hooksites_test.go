package transformsvc

import (
	"strings"
	"testing"

	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/transform"
)

// With HookSites the hello names the reserved range, the placeholders are never sent, and the
// sites rewritten classes get come after the range.
func TestHookSitesReserved(t *testing.T) {
	w, r, done, hello := pipeServerWith(t, 100, func(tb *accounts.Table) transform.Class { return sitePass(tb, nil) })
	if !strings.Contains(hello.Table, "config\tobject.init.sites\t1:100\n") {
		t.Errorf("hello lacks the reserved range:\n%s", hello.Table)
	}
	if strings.Contains(hello.Table, "site\t") {
		t.Errorf("hello sends placeholders:\n%.300s", hello.Table)
	}
	if err := WriteRequest(w, &Request{ID: 1, Name: "c", Loader: "app", Class: []byte{1, 2}}); err != nil {
		t.Fatal(err)
	}
	resp, err := ReadResponse(r)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(resp.Table, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "site\t101\t") || !strings.HasPrefix(lines[1], "site\t102\t") {
		t.Errorf("sites of the first class: %q, want 101 and 102", lines)
	}
}
