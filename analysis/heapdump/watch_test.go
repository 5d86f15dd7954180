package heapdump

import (
	"slices"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/analysis/hprof"
	"github.com/heapledger/heapledger/analysis/hprof/hproftest"
)

// watchDump is a dump of weak references of two classes, one derived from the other, whose
// fields (their own and java.lang.ref.Reference's) the tests watch, and a class with a primitive
// static and a byte[] static.
func watchDump(idSize int) []byte {
	b := hproftest.New(idSize)
	b.StartSegment(false)
	b.Class(0x10, 0, "java/lang/Object", nil, nil)
	b.Class(0x18, 0x10, "java/lang/ref/Reference", []hproftest.Field{{Name: "referent", Type: hprof.TypeObject}, {Name: "queue", Type: hprof.TypeObject}}, nil)
	b.Class(0x20, 0x18, "java/lang/ref/WeakReference", nil, nil)
	b.Class(0x30, 0x20, "app/Tracked", []hproftest.Field{{Name: "key", Type: hprof.TypeLong}, {Name: "prev", Type: hprof.TypeObject}}, nil)
	// A field of the subclass shadows nothing it is not asked for; "key" stays the superclass's.
	b.Class(0x38, 0x30, "app/TrackedArray", []hproftest.Field{{Name: "count", Type: hprof.TypeLong}}, nil)
	b.Class(0x48, 0x10, "app/Obj", nil, nil)
	b.ClassWithStatics(0x40, 0x10, "app/Holder", nil, []hproftest.Static{
		{Name: "RATE", Type: hprof.TypeInt, Bits: 8},
		{Name: "TABLE", Type: hprof.TypeObject, Bits: 0x900},
	})
	b.Root(hprof.TagRootStickyClass, 0x40)
	b.Instance(0x100, 0x48)
	// Tracked: key, prev, then Reference's referent and queue.
	b.Instance(0x200, 0x30, 0x0000000100000006, 0, 0x100, 0)
	// TrackedArray: count, then Tracked's key and prev, then referent and queue.
	b.Instance(0x208, 0x38, 3, 0x00000002fffffffe, 0, 0x200, 0)
	b.Instance(0x210, 0x30, 7, 0, 0x100, 0) // unreachable: the graph drops it
	b.PrimArrayData(0x900, hprof.TypeByte, []byte("table\tbytes"))
	b.Root(hprof.TagRootJNIGlobal, 0x200)
	b.Root(hprof.TagRootJNIGlobal, 0x208)
	b.EndSegment()
	b.EndDump()
	return b.Bytes()
}

// TestWatchKeepsFields: the watched fields of the instances of a class and of its subclass are
// kept, from the class's own fields and its superclasses', a field no class declares reads 0,
// and an instance the graph dropped is left out; the same whether pass 2 reads the segments in
// parallel (a plain file) or in order (gzip).
func TestWatchKeepsFields(t *testing.T) {
	for _, idSize := range []int{4, 8} {
		data := watchDump(idSize)
		for _, path := range []string{write(t, data), writeGzip(t, data)} {
			d, err := Load(path, Options{Watch: []Watch{
				{Class: "app.Obj", Fields: []string{"nothing"}},
				{Class: "app.Tracked", Fields: []string{"key", "referent", "count", "nothing"}},
				{Class: "no.such.Class", Fields: []string{"x"}},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Watched) != 3 {
				t.Fatalf("%d watched, want 3", len(d.Watched))
			}
			if none := d.Watched[2]; len(none.Nodes) != 0 || len(none.Values) != 1 || len(none.Values[0]) != 0 {
				t.Errorf("a class the dump does not have: %+v", none)
			}
			obj, tr := d.Watched[0], d.Watched[1]
			if len(obj.Nodes) != 1 || d.ObjectID(obj.Nodes[0]) != 0x100 || !slices.Equal(obj.Values[0], []uint64{0}) {
				t.Errorf("id size %d: app.Obj watched %v %v", idSize, idsOf(d, obj.Nodes), obj.Values)
			}
			if got := []uint64{d.ObjectID(tr.Nodes[0]), d.ObjectID(tr.Nodes[1])}; len(tr.Nodes) != 2 || !slices.Equal(got, []uint64{0x200, 0x208}) {
				t.Fatalf("id size %d: tracked instances %x, want 0x200 and 0x208 (0x210 is unreachable)", idSize, idsOf(d, tr.Nodes))
			}
			want := [][]uint64{{0x0000000100000006, 0x00000002fffffffe}, {0x100, 0x200}, {0, 3}, {0, 0}}
			if !slices.EqualFunc(tr.Values, want, slices.Equal) {
				t.Errorf("id size %d: values %x, want %x", idSize, tr.Values, want)
			}
		}
	}
}

// TestStaticAndArrayData: a class's primitive and reference statics are read from its CLASS
// DUMP, and a primitive array's elements from its record, read again from the file.
func TestStaticAndArrayData(t *testing.T) {
	for _, idSize := range []int{4, 8} {
		for _, path := range []string{write(t, watchDump(idSize)), writeGzip(t, watchDump(idSize))} {
			// Watching only a class the dump does not have costs nothing and finds nothing.
			d, err := Load(path, Options{Watch: []Watch{{Class: "no.such.Class", Fields: []string{"x", "y"}}}})
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Watched) != 1 || len(d.Watched[0].Nodes) != 0 || len(d.Watched[0].Values) != 2 {
				t.Errorf("watched %+v", d.Watched)
			}
			if v, ok := d.Static("app.Holder", "RATE"); !ok || v.Type != hprof.TypeInt || v.Bits != 8 {
				t.Errorf("RATE: %+v %v", v, ok)
			}
			if _, ok := d.Static("app.Holder", "NONE"); ok {
				t.Error("a static the class does not have was found")
			}
			v, ok := d.Static("app.Holder", "TABLE")
			if !ok || v.Type != hprof.TypeObject {
				t.Fatalf("TABLE: %+v %v", v, ok)
			}
			n, ok := d.Node(v.Bits)
			if !ok {
				t.Fatal("the table's array is not in the graph")
			}
			data, elem, err := d.ArrayData(n)
			if err != nil || elem != hprof.TypeByte || string(data) != "table\tbytes" {
				t.Errorf("ArrayData: %q %v %v", data, elem, err)
			}
			root := d.Graph.Successors(0)[0]
			if _, _, err := d.ArrayData(root); err == nil || !strings.Contains(err.Error(), "not a primitive array") {
				t.Errorf("ArrayData of %s: %v", d.Describe(root), err)
			}
		}
	}
}
