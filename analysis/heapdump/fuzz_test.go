package heapdump

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/heapledger/heapledger/analysis/hprof"
	"github.com/heapledger/heapledger/analysis/hprof/hproftest"
)

// FuzzLoad feeds corrupt dumps to the loader: it must return an error or a consistent graph,
// never panic or hang.
func FuzzLoad(f *testing.F) {
	for _, idSize := range []int{4, 8} {
		b := hproftest.New(idSize)
		b.Chain(0x100, 0x20)
		f.Add(b.Bytes())
	}
	b := hproftest.New(8)
	b.LoadClass(0x10, "java/lang/Object")
	b.LoadClass(0x30, "java/lang/ref/Reference")
	b.StartSegment(false)
	b.Class(0x10, 0, "", nil, nil)
	b.Class(0x30, 0x10, "", []hproftest.Field{{Name: "referent", Type: hprof.TypeObject}}, map[string]uint64{"s": 0x200})
	b.Instance(0x100, 0x30, 0x200)
	b.ObjArray(0x200, 0x10, 0x100, 0x100, 0)
	b.PrimArray(0x300, hprof.TypeChar, 2)
	b.Root(hprof.TagRootThreadObj, 0x100)
	b.EndSegment()
	f.Add(b.Bytes())
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "f.hprof")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, keep := range []bool{false, true} {
			d, err := Load(p, Options{KeepUnreachable: keep, AllowPartial: true})
			if err != nil {
				continue
			}
			g := d.Graph
			if int(g.Off[g.N()]) != len(g.Succ) || len(d.ObjectIDs()) != g.N() || len(d.ClassOf) != g.N() {
				t.Fatalf("inconsistent graph: N %d, %d edges, Off end %d", g.N(), len(g.Succ), g.Off[g.N()])
			}
			for _, s := range g.Succ {
				if int(s) >= g.N() {
					t.Fatalf("successor %d of %d nodes", s, g.N())
				}
			}
			for n := 1; n < g.N(); n++ {
				if int(d.ClassOf[n]) >= len(d.Classes) {
					t.Fatalf("node %d has class %d of %d", n, d.ClassOf[n], len(d.Classes))
				}
				_ = d.Describe(uint32(n))
			}
			var refs []EdgeRef
			for i := range g.Successors(0) {
				refs = append(refs, EdgeRef{0, i})
			}
			d.EdgeNames(refs)
		}
	})
}

// FuzzIndexedMatchesInOrder loads every input twice: as a file, which an intact dump lets the
// loader index and read by segments on every core, and gzip-compressed, which it reads in
// order. Whenever both load they must give the same graph.
func FuzzIndexedMatchesInOrder(f *testing.F) {
	for _, idSize := range []int{4, 8} {
		b := hproftest.New(idSize)
		b.Chain(0x100, 0x20)
		f.Add(b.Bytes())
	}
	f.Add(hproftest.EmptyLastDump())
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		plain, zipped := filepath.Join(dir, "f.hprof"), filepath.Join(dir, "f.hprof.gz")
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write(data)
		w.Close()
		if os.WriteFile(plain, data, 0o644) != nil || os.WriteFile(zipped, z.Bytes(), 0o644) != nil {
			t.Fatal("cannot write the inputs")
		}
		a, errA := Load(plain, Options{})
		b, errB := Load(zipped, Options{})
		// And with the far half of the file read by a second shard (see scanPass1).
		undo := farShardForced()
		c, errC := Load(plain, Options{})
		undo()
		if errA != nil || errB != nil || errC != nil {
			if (errA == nil) != (errB == nil) || (errA == nil) != (errC == nil) {
				t.Fatalf("indexed: %v; in order: %v; in two shards: %v", errA, errB, errC)
			}
			return
		}
		if !reflect.DeepEqual(a, c) {
			t.Fatalf("indexed in two shards differs from indexed in one:\n%+v\n%+v", c, a)
		}
		same := func(what string, x, y any) {
			if !reflect.DeepEqual(x, y) {
				t.Fatalf("%s differ: indexed %v, in order %v", what, x, y)
			}
		}
		same("dumps", [2]int{a.Dumps, a.DumpIndex}, [2]int{b.Dumps, b.DumpIndex})
		same("object ids", a.ObjectIDs(), b.ObjectIDs())
		same("edge offsets", a.Graph.Off, b.Graph.Off)
		same("edges", a.Graph.Succ, b.Graph.Succ)
		same("sizes", a.Graph.Size, b.Graph.Size)
		same("classes of nodes", a.ClassOf, b.ClassOf)
		same("kinds", a.Kind, b.Kind)
		same("roots", a.Roots, b.Roots)
		same("weak edges", a.Weak, b.Weak)
		same("unreachable", a.Unreachable, b.Unreachable)
		same("unreachable kept, and roots taken", [2]any{a.UnreachableKept, a.UnreachableRoots}, [2]any{b.UnreachableKept, b.UnreachableRoots})
		same("bytes of HPROF data", a.Bytes, b.Bytes)
	})
}
