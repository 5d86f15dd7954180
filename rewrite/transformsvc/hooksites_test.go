package transformsvc

import (
	"io"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/rewrite/accounts"
)

// With HookSites the hello names the reserved range, the placeholders are never sent, and the
// sites rewritten classes get come after the range.
func TestHookSitesReserved(t *testing.T) {
	set, err := accounts.Parse("a.b")
	if err != nil {
		t.Fatal(err)
	}
	table := accounts.NewTable(set)
	reqR, reqW := io.Pipe()
	respR, respW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := (&Server{Pass: sitePass(table, nil), Table: table, Workers: 2, HookSites: 100}).Serve(reqR, respW)
		respW.Close()
		done <- err
	}()
	hello, err := ReadResponse(respR)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(hello.Table, "config\tobject.init.sites\t1:100\n") {
		t.Errorf("hello lacks the reserved range:\n%s", hello.Table)
	}
	if strings.Contains(hello.Table, "site\t") {
		t.Errorf("hello sends placeholders:\n%.300s", hello.Table)
	}
	if err := WriteRequest(reqW, &Request{ID: 1, Name: "c", Loader: "app", Class: []byte{1, 2}}); err != nil {
		t.Fatal(err)
	}
	resp, err := ReadResponse(respR)
	if err != nil {
		t.Fatal(err)
	}
	reqW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(resp.Table, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "site\t101\t") || !strings.HasPrefix(lines[1], "site\t102\t") {
		t.Errorf("sites of the first class: %q, want 101 and 102", lines)
	}
}
