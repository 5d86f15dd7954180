package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestLeaksListsHookRowsApart: Conns leak at a new site and, beside it, others made where no
// site names the class (deserialized, say); the hook's row of Conn is ranked by the latter only.
func TestLeaksListsHookRowsApart(t *testing.T) {
	var texts []string
	for i := 1; i <= 4; i++ {
		atNew, elsewhere := int64(10*i), int64(5*i)
		texts = append(texts, fmt.Sprintf("# heapledger snapshot 2\nreason\tinterval\npid\t9\nuptime_ms\t%d\nliveness\tall\n"+
			"account\t1\tcom.acme\nsite\t1\tobject\tcom.acme.Conn\tcom.acme.Pool.open()V\t4\t17\n"+
			"site\t2\tinit\tcom.acme.Conn\t<Object.<init>>\t-1\t-1\n"+
			"alloc\t1\t1\t0\t%d\t0\t%d\t%d\t%d\t0\t0\t0\t%d\n"+
			"alloc\t1\t2\t0\t%d\t0\t%d\t%d\t%d\t0\t0\t0\t%d\nend\n",
			1000*i, atNew, 32*atNew, atNew, 32*atNew, i, atNew+elsewhere, 32*(atNew+elsewhere), atNew+elsewhere, 32*(atNew+elsewhere), i))
	}
	paths := writeSnapshots(t, texts...)
	out, _, err := runCLI(t, append([]string{"leaks"}, paths...)...)
	if err != nil {
		t.Fatal(err)
	}
	site := strings.Index(out, "com.acme.Pool.open()V line 17")
	hook := strings.Index(out, "Object.<init> hook (--object-init): live objects")
	for _, want := range []string{"1 growing allocation sites and 1 growing classes seen by the Object.<init> hook in 4 snapshots",
		"10→40", "5→20", "<Object.<init>>, not at a site naming the class"} {
		if !strings.Contains(out, want) {
			t.Errorf("leaks output lacks %q:\n%s", want, out)
		}
	}
	if site < 0 || hook < 0 || site > hook {
		t.Errorf("the site's leak first, the hook's apart below it:\n%s", out)
	}
	var v struct {
		Leaks []struct {
			Type string
			Live []int64
			Hook bool `json:"object_init_hook"`
		}
	}
	if js := cliJSON(t, &v, append([]string{"leaks", "--json"}, paths...)...); len(v.Leaks) != 2 || v.Leaks[0].Hook || !v.Leaks[1].Hook || fmt.Sprint(v.Leaks[1].Live) != "[5 10 15 20]" {
		t.Errorf("json: %s", js)
	}
}
