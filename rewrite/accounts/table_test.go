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
