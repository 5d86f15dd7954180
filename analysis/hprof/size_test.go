package hprof

import (
	"slices"
	"testing"
)

// The expected sizes are what HotSpot 17 reports (jcmd GC.class_histogram) for these shapes with
// compressed references; the fixture test in analysis/histogram checks the same against a live VM.
func TestInstanceLayout(t *testing.T) {
	m := ModelFor(8, true)
	f := func(ts ...Type) []Field {
		var fs []Field
		for _, t := range ts {
			fs = append(fs, Field{Type: t})
		}
		return fs
	}
	root := m.RootLayout()
	cases := []struct {
		name  string
		super []Field
		own   []Field
		want  uint64
	}{
		{"Object", nil, nil, 16},
		{"OnlyLong", nil, f(TypeLong), 24},
		{"LongIntByte", nil, f(TypeLong, TypeInt, TypeByte), 32},
		{"ByteSub", f(TypeByte), f(TypeByte), 16},
		{"RefsAndShorts", nil, f(TypeObject, TypeObject, TypeShort, TypeChar, TypeBoolean), 32},
		{"String", nil, f(TypeObject, TypeByte, TypeInt, TypeBoolean), 24},
		{"HashMap$Node", nil, f(TypeInt, TypeObject, TypeObject, TypeObject), 32},
		// References go one at a time, the first into the gap before the superclass's long
		// (HotSpot 17 and 25: a@12, b@24, c@28), not together after it (40 bytes).
		{"RefsAfterLong", f(TypeLong), f(TypeObject, TypeObject, TypeObject), 32},
		// The int takes that gap, then the references follow the long (i@12, a..d@24..36).
		{"IntRefsAfterLong", f(TypeLong), f(TypeObject, TypeObject, TypeObject, TypeObject, TypeInt), 40},
	}
	for _, c := range cases {
		l := m.Extend(m.Extend(root, c.super), c.own)
		if got := m.InstanceSize(l); got != c.want {
			t.Errorf("%s: %d bytes, want %d (layout %+v)", c.name, got, c.want, l)
		}
	}
	u := ModelFor(8, false)
	if got := u.InstanceSize(u.Extend(u.RootLayout(), f(TypeObject, TypeInt))); got != 32 {
		t.Errorf("uncompressed ref+int: %d, want 32", got)
	}
}

func TestArraySizes(t *testing.T) {
	c, u, w := ModelFor(8, true), ModelFor(8, false), ModelFor(4, false)
	for _, x := range []struct {
		m    Model
		t    Type
		n    uint32
		want uint64
	}{
		{c, TypeByte, 0, 16}, {c, TypeByte, 1, 24}, {c, TypeByte, 1000, 1016}, {c, TypeInt, 4, 32},
		{c, TypeLong, 3, 40}, {u, TypeByte, 0, 24}, {u, TypeLong, 1, 32}, {w, TypeInt, 1, 16}, {w, TypeLong, 1, 24},
	} {
		if got := x.m.PrimArraySize(x.t, x.n); got != x.want {
			t.Errorf("%v: %s of %d: %d, want %d", x.m, x.t.ArrayName(), x.n, got, x.want)
		}
	}
	if got := c.ObjArraySize(3); got != 32 {
		t.Errorf("compressed Object[3]: %d, want 32", got)
	}
	if got := u.ObjArraySize(3); got != 48 {
		t.Errorf("uncompressed Object[3]: %d, want 48", got)
	}
}

func TestInferCompressed(t *testing.T) {
	if !InferCompressed(8, 0x7f0000000, 0x7f0000000+1<<30) {
		t.Error("a 1 GB span should mean compressed references")
	}
	if InferCompressed(8, 0x10000000000, 0x10000000000+40<<30) {
		t.Error("a 40 GB span cannot use compressed references")
	}
	if InferCompressed(4, 0, 100) {
		t.Error("4-byte ids are a 32-bit VM")
	}
}

func TestJavaName(t *testing.T) {
	for in, want := range map[string]string{
		"java/lang/String": "java.lang.String", "[I": "int[]", "[[Ljava/lang/Object;": "java.lang.Object[][]",
		"[Ljava.lang.String;": "java.lang.String[]", "[B": "byte[]", "app.Foo": "app.Foo",
	} {
		if got := JavaName(in); got != want {
			t.Errorf("JavaName(%q) = %q, want %q", in, got, want)
		}
	}
}

// Layouts gives what extending each superclass's layout in turn gives, for every class asked in
// any order: over a forest of classes
// with random fields, some of whose class dumps are missing (so are their subclasses' layouts),
// and a cycle of superclasses, which has none.
func TestLayoutsMatchLayout(t *testing.T) {
	s := NewSchema(8)
	const n = 300
	x := uint64(1)
	rnd := func(k uint64) uint64 {
		x = x*6364136223846793005 + 1442695040888963407
		return (x >> 33) % k
	}
	types := []Type{TypeObject, TypeBoolean, TypeChar, TypeFloat, TypeDouble, TypeByte, TypeShort, TypeInt, TypeLong}
	for id := uint64(1); id <= n; id++ {
		var super uint64
		if id > 1 && rnd(4) > 0 {
			super = 1 + rnd(id-1) // an earlier class
		}
		var fs []Field
		for range rnd(5) {
			fs = append(fs, Field{Type: types[rnd(uint64(len(types)))]})
		}
		if rnd(20) == 0 {
			s.class(id) // a LOAD CLASS without a CLASS DUMP
			continue
		}
		s.AddClassDump(&ClassDump{ID: id, Super: super, Fields: fs})
	}
	s.AddClassDump(&ClassDump{ID: n + 1, Super: n + 2})
	s.AddClassDump(&ClassDump{ID: n + 2, Super: n + 1})
	for _, m := range []Model{ModelFor(8, true), ModelFor(8, false)} {
		layout := s.Layouts(m)
		// The obvious way: up the chain, then each class's fields extend its superclass's layout.
		chainLayout := func(id uint64) (Layout, bool) {
			var chain []*ClassDump
			for cur := id; cur != 0; {
				c := s.Classes[cur]
				if c == nil || c.Dump == nil || len(chain) > len(s.Classes) {
					return Layout{}, false
				}
				chain = append(chain, c.Dump)
				cur = c.Dump.Super
			}
			l := m.RootLayout()
			for i := len(chain) - 1; i >= 0; i-- {
				l = m.Extend(l, chain[i].Fields)
			}
			return l, true
		}
		check := func(id uint64) {
			got, gotOK := layout(id)
			want, wantOK := chainLayout(id)
			if gotOK != wantOK || m.InstanceSize(got) != m.InstanceSize(want) || !slices.Equal(got.Gaps, want.Gaps) {
				t.Fatalf("class %d: Layouts gives %+v, %v; the chain %+v, %v", id, got, gotOK, want, wantOK)
			}
		}
		for _, id := range []uint64{n + 2, 17, n, 5, n + 1, n + 3, 1, 2, 3} {
			check(id)
		}
		for id := uint64(n + 2); id >= 1; id-- {
			check(id)
		}
	}
}
