package classfile

import (
	"fmt"
	"testing"
)

// TestPoolDeduplication checks that Add* finds the lowest equal constant whether it scans the
// pool (the first lookups) or uses the full index (after many), including constants the class
// file holds twice and strings whose modified UTF-8 differs from UTF-8.
func TestPoolDeduplication(t *testing.T) {
	p := &Pool{Entries: []Constant{{}, {Tag: TagUtf8, Bytes: []byte("a/B")}, {Tag: TagUtf8, Bytes: []byte("a/B")},
		{Tag: TagClass, A: 2}, {Tag: TagClass, A: 1}, {Tag: TagUtf8, Bytes: EncodeModifiedUTF8("nul\x00 and \U0001F600")}}}
	check := func(when string) {
		t.Helper()
		if i, _ := p.AddUtf8("a/B"); i != 1 {
			t.Errorf("%s: Utf8 a/B at %d, want 1 (the lowest of two)", when, i)
		}
		if i, _ := p.AddClass("a/B"); i != 4 {
			t.Errorf("%s: Class a/B at %d, want 4 (the one naming Utf8 1)", when, i)
		}
		if i, _ := p.AddUtf8("nul\x00 and \U0001F600"); i != 5 {
			t.Errorf("%s: modified UTF-8 string at %d, want 5", when, i)
		}
	}
	check("scanning")
	added := map[uint16]string{}
	for k := 0; k < 3*poolScans; k++ {
		s := fmt.Sprintf("s%d", k)
		i, err := p.AddString(s)
		if err != nil {
			t.Fatal(err)
		}
		if j, _ := p.AddString(s); j != i {
			t.Fatalf("String %q added at %d, found again at %d", s, i, j)
		}
		added[i] = s
		if k == poolScans/2 {
			check("half way")
		}
	}
	if p.index == nil {
		t.Fatalf("no full index after %d distinct constants", 3*poolScans)
	}
	check("indexed")
	for i, s := range added {
		if j, _ := p.AddString(s); j != i {
			t.Errorf("indexed: String %q at %d, want %d", s, j, i)
		}
	}
	n := len(p.Entries)
	if i, _ := p.AddLong(7); i != uint16(n) || len(p.Entries) != n+2 || p.Entries[n+1].Tag != 0 {
		t.Errorf("Long added at %d of %d entries, want two slots at %d", i, len(p.Entries), n)
	}
	if i, _ := p.AddLong(7); i != uint16(n) {
		t.Errorf("Long found at %d, want %d", i, n)
	}
}

func TestIsClassNamed(t *testing.T) {
	p := &Pool{Entries: []Constant{{}}}
	plain, _ := p.AddClass("a/B")
	odd, _ := p.AddClass("a/\u00e9\x00")
	str, _ := p.AddString("a/B")
	for _, c := range []struct {
		i    uint16
		name string
		want bool
	}{{plain, "a/B", true}, {plain, "a/C", false}, {odd, "a/\u00e9\x00", true}, {odd, "a/\u00e9", false}, {str, "a/B", false}, {0, "", false}, {99, "a/B", false}} {
		if got := p.IsClassNamed(c.i, c.name); got != c.want {
			t.Errorf("IsClassNamed(%d, %q) = %v, want %v", c.i, c.name, got, c.want)
		}
	}
}
