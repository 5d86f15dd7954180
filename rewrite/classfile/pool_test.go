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

// ConstantOffsets must point at every constant of real classes, Longs and Doubles included, so
// that a constant patched through it is the one Parse reads back.
func TestConstantOffsets(t *testing.T) {
	for _, e := range jarClasses(t, "ecj.jar")[:300] {
		offs, err := ConstantOffsets(e.data)
		if err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		cf, err := Parse(e.data)
		if err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		if len(offs) != len(cf.Pool.Entries) {
			t.Fatalf("%s: %d offsets for %d constants", e.name, len(offs), len(cf.Pool.Entries))
		}
		for i, c := range cf.Pool.Entries {
			if c.Tag == 0 {
				if offs[i] != 0 {
					t.Fatalf("%s: unusable slot %d has offset %d", e.name, i, offs[i])
				}
				continue
			}
			if got := e.data[offs[i]]; got != c.Tag {
				t.Fatalf("%s: constant %d: tag %d at offset %d, want %d", e.name, i, got, offs[i], c.Tag)
			}
			if c.Tag == TagInteger && string(e.data[offs[i]+1:offs[i]+5]) != string(c.Bytes) {
				t.Fatalf("%s: constant %d: the integer's bytes are not after its tag", e.name, i)
			}
		}
	}
	if _, err := ConstantOffsets([]byte{0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 52, 0, 3, TagUtf8, 0, 9}); err == nil {
		t.Error("a pool cut short gave no error")
	}
}
