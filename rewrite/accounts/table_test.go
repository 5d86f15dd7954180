package accounts

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

func TestTableRoundTripAndContinue(t *testing.T) {
	s, _ := Parse("com.acme.*,org.lib")
	tab := NewTable(s)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				tab.AddSite(Site{Kind: KindObject, Type: "java.lang.String", Method: "a.B.c()V", Offset: j, Line: -1})
			}
		}(i)
	}
	wg.Wait()
	if tab.Sites() != 800 {
		t.Fatalf("sites %d", tab.Sites())
	}
	var buf bytes.Buffer
	if err := tab.Write(&buf); err != nil {
		t.Fatal(err)
	}
	again, err := ReadTable(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if id := again.AddSite(Site{Kind: KindArray, Type: "int[]"}); id != 801 {
		t.Errorf("continued table must not reuse IDs: got %d", id)
	}
	s2, _ := Parse("org.lib,net.new")
	ids := again.Merge(s2)
	if ids[1] != 2 || ids[2] != 3 {
		t.Errorf("merge ids %v: org.lib keeps 2, net.new gets 3", ids)
	}
	if _, err := ReadTable(strings.NewReader("# heapledger table 1\naccount\t0\t<unaccounted>\nsite\tx\n")); err == nil {
		t.Error("bad line accepted")
	}
}

// Include keeps the IDs of a table classes were rewritten with: the same IDs given the same
// sites (a table and its continuation) are taken once, and different ones are refused without
// touching the table.
func TestTableInclude(t *testing.T) {
	s, _ := Parse("com.a")
	first := NewTable(s)
	first.Config = map[string]string{"liveness": "all"}
	first.AddSite(Site{Kind: KindObject, Type: "java.lang.String", Method: "com.a.X.m()V", Offset: 4, Line: 7})
	var buf bytes.Buffer
	if err := first.Write(&buf); err != nil {
		t.Fatal(err)
	}
	later, err := ReadTable(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := Parse("com.b")
	later.Merge(s2)
	later.AddSite(Site{Kind: KindArray, Type: "int[]", Method: "com.b.Y.n()V", Offset: 1, Line: -1})

	t2 := NewTable(nil)
	for _, o := range []*Table{first, later, first, t2} { // t2 itself: no deadlock, no change
		if err := t2.Include(o); err != nil {
			t.Fatalf("include: %v", err)
		}
	}
	if t2.Sites() != 2 || len(t2.accounts) != 3 || t2.accounts[2] != "com.b" || t2.Config["liveness"] != "all" {
		t.Errorf("merged table: %d sites, accounts %v, config %v", t2.Sites(), t2.accounts, t2.Config)
	}
	if id := t2.AddSite(Site{Kind: KindObject, Type: "a.Z"}); id != 3 {
		t.Errorf("next site %d, want 3", id)
	}

	// Rewritten apart, another table gives site 1 and account 1 to other things.
	other := NewTable(s2)
	other.AddSite(Site{Kind: KindObject, Type: "java.util.ArrayList", Method: "com.b.Y.n()V", Offset: 0, Line: 3})
	before := t2.Sites()
	if err := t2.Include(other); err == nil || !strings.Contains(err.Error(), "account 1") {
		t.Errorf("clashing accounts taken: %v", err)
	}
	other.accounts[1] = "com.a"
	if err := t2.Include(other); err == nil || !strings.Contains(err.Error(), "site 1 is object java.util.ArrayList in com.b.Y.n()V @0 there") {
		t.Errorf("clashing sites taken: %v", err)
	}
	if t2.Sites() != before || len(t2.accounts) != 3 {
		t.Errorf("a refused table changed the table: %d sites, accounts %v", t2.Sites(), t2.accounts)
	}
}
