package heapdump

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/analysis/hprof"
	"github.com/heapledger/heapledger/analysis/hprof/hproftest"
)

func write(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.hprof")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeGzip writes data gzip-compressed to a temporary file, which pass 1 reads in order.
func writeGzip(t *testing.T, data []byte) string {
	t.Helper()
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(data)
	w.Close()
	return write(t, z.Bytes())
}

func idsOf(d *Dump, nodes []uint32) []uint64 {
	var out []uint64
	for _, n := range nodes {
		out = append(out, d.ObjectID(n))
	}
	slices.Sort(out)
	return out
}

func TestThesisRootRule(t *testing.T) {
	for _, idSize := range []int{4, 8} {
		b := hproftest.New(idSize)
		b.Chain()
		d, err := Load(write(t, b.Bytes()), Options{})
		if err != nil {
			t.Fatal(err)
		}
		// No GC roots: A and F have no referrers, D is the lowest id of the unreferenced cycle.
		got := idsOf(d, d.Graph.Successors(0))
		if !slices.Equal(got, []uint64{0x100, 0x118, 0x128}) {
			t.Errorf("id size %d: super root successors %x, want A, D, F", idSize, got)
		}
		if d.Graph.N() != 9 || d.Unreachable.Objects != 8 {
			t.Errorf("id size %d: %d nodes, %d unreachable", idSize, d.Graph.N(), d.Unreachable.Objects)
		}
		// Kept without being asked: there was nothing else to analyse.
		if !d.UnreachableKept || d.UnreachableRoots != 3 {
			t.Errorf("id size %d: kept %v, %d roots taken, want true and 3", idSize, d.UnreachableKept, d.UnreachableRoots)
		}
		if len(d.Warnings) == 0 || !strings.Contains(strings.Join(d.Warnings, "\n"), "no GC-root records") {
			t.Errorf("warnings %v", d.Warnings)
		}
		if idSize == 4 && (d.Model.RefSize != 4 || d.Model.Header != 8) {
			t.Errorf("4-byte ids: model %+v", d.Model)
		}
	}
}

// chainLoader writes the dump of hproftest's Chain from 0x100 and 0x20 and returns a loader of
// it, not yet started, and its path.
func chainLoader(t *testing.T) (*Loader, string) {
	t.Helper()
	b := hproftest.New(8)
	b.Chain(0x100, 0x20)
	p := write(t, b.Bytes())
	x, err := NewLoader(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return x, p
}

func TestUnreachableDroppedOrKept(t *testing.T) {
	x, p := chainLoader(t)
	for _, step := range []func() error{x.Read, x.Index, x.References} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	// As building starts the nodes are all there, the unreachable ones too: the super root and
	// 8 objects.
	var building []int
	d := x.Build(func(nodes int) { building = append(building, nodes) })
	if !slices.Equal(building, []int{9}) {
		t.Errorf("building told %v, want once 9 nodes", building)
	}
	// A, B, C and both classes are reachable; D, E, F are not.
	if got := idsOf(d, allNodes(d)); !slices.Equal(got, []uint64{0x10, 0x20, 0x100, 0x108, 0x110}) {
		t.Errorf("kept %x", got)
	}
	if d.Unreachable.Objects != 3 || d.Unreachable.Bytes != 3*16 || d.UnreachableKept || d.UnreachableRoots != 0 {
		t.Errorf("unreachable %+v, kept %v, %d roots taken", d.Unreachable, d.UnreachableKept, d.UnreachableRoots)
	}
	a, _ := d.Node(0x100)
	bn, _ := d.Node(0x108)
	if !slices.Contains(d.Graph.Successors(a), bn) {
		t.Error("A→B lost in renumbering")
	}
	k, err := Load(p, Options{KeepUnreachable: true})
	if err != nil {
		t.Fatal(err)
	}
	if k.Graph.N() != 9 || k.Unreachable.Objects != 3 || !k.UnreachableKept || k.UnreachableRoots != 2 {
		t.Errorf("keep: %d nodes, %+v unreachable, kept %v, %d roots taken (want D and F)", k.Graph.N(), k.Unreachable, k.UnreachableKept, k.UnreachableRoots)
	}
	if got := idsOf(k, k.Graph.Successors(0)); !slices.Equal(got, []uint64{0x20, 0x100, 0x118, 0x128}) {
		t.Errorf("keep: super root successors %x", got)
	}
	f, _ := k.Node(0x128)
	if rs := k.RootsOf(f); len(rs) != 1 || rs[0].Kind != RootUnreachable {
		t.Errorf("F's roots %+v", rs)
	}
	// The rule's roots are named as such on a path, the GC roots by their kind.
	names := map[uint64]string{}
	for i, v := range k.Graph.Successors(0) {
		name, err := k.EdgeName(0, i)
		if err != nil {
			t.Fatal(err)
		}
		names[k.ObjectID(v)] = name
	}
	want := map[uint64]string{0x20: "<GC root: JNI global>", 0x100: "<GC root: JNI global>",
		0x118: "<unreachable: a root by the thesis's rule>", 0x128: "<unreachable: a root by the thesis's rule>"}
	if !maps.Equal(names, want) {
		t.Errorf("the super root's edges are named %v, want %v", names, want)
	}
}

func allNodes(d *Dump) []uint32 {
	var out []uint32
	for n := 1; n < d.Graph.N(); n++ {
		out = append(out, uint32(n))
	}
	return out
}

// threeDumps is a file of three dumps: the chain, then twice only F, rooted.
func threeDumps() []byte {
	b := hproftest.New(8)
	b.Chain(0x100)
	for range 2 {
		b.StartSegment(true)
		b.Class(0x20, 0x10, "", []hproftest.Field{{Name: "next", Type: hprof.TypeObject}}, nil)
		b.Class(0x10, 0, "", nil, nil)
		b.Instance(0x128, 0x20, 0)
		b.Root(hprof.TagRootStickyClass, 0x128)
		b.EndSegment()
	}
	return b.Bytes()
}

func TestSeveralDumps(t *testing.T) {
	p := write(t, threeDumps())
	last, err := Load(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if last.Dumps != 3 || last.DumpIndex != 3 || last.Graph.N() != 4 {
		t.Errorf("last dump: %d of %d, %d nodes", last.DumpIndex, last.Dumps, last.Graph.N())
	}
	first, err := Load(p, Options{Dump: 1})
	if err != nil {
		t.Fatal(err)
	}
	if first.DumpIndex != 1 || first.Dumps != 3 || first.Graph.N() != 6 {
		t.Errorf("first dump: %d of %d, %d nodes", first.DumpIndex, first.Dumps, first.Graph.N())
	}
	if _, err := Load(p, Options{Dump: 4}); err == nil || !strings.Contains(err.Error(), "3 heap dump") {
		t.Errorf("dump 4 of 3: %v", err)
	}
	// A negative number once read no dump at all and gave an empty analysis of "dump -1 of 3".
	if _, err := Load(p, Options{Dump: -1}); err == nil || !strings.Contains(err.Error(), "numbered from 1") {
		t.Errorf("dump -1: %v", err)
	}
}

// Every dump of an intact file is read by segments (pass1Indexed), the last one too, which the
// scan finds only by starting again once the walk has met a second dump; and nothing of the
// first dump stays behind when it does.
func TestSeveralDumpsReadBySegments(t *testing.T) {
	p := write(t, threeDumps())
	for _, c := range []struct{ dump, index, segs, records int }{{0, 3, 1, 3}, {1, 1, 2, 8}, {2, 2, 1, 3}, {3, 3, 1, 3}} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		l := newLoader(p, st.Size(), Options{Dump: c.dump})
		ok, err := l.pass1Indexed()
		if !ok || err != nil {
			t.Fatalf("dump %d: not read by segments (%v)", c.dump, err)
		}
		if l.d.DumpIndex != c.index || l.d.Dumps != 3 || len(l.segs) != c.segs || l.segs[0].Dump != c.index || len(l.segFirst) != c.segs || len(l.ids)-1 != c.records {
			t.Errorf("dump %d: read dump %d of %d, %d segments, %d records", c.dump, l.d.DumpIndex, l.d.Dumps, len(l.segs), len(l.ids)-1)
		}
	}
}

func TestTruncatedPartial(t *testing.T) {
	b := hproftest.New(8)
	b.Chain(0x100)
	data := b.Bytes()
	p := write(t, data[:len(data)-40])
	if _, err := Load(p, Options{}); err == nil || !strings.Contains(err.Error(), "offset") {
		t.Fatalf("truncated: %v", err)
	}
	d, err := Load(p, Options{AllowPartial: true})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Partial || d.Graph.N() < 2 {
		t.Errorf("partial %v, %d nodes", d.Partial, d.Graph.N())
	}
}

func TestWeakReferent(t *testing.T) {
	b := hproftest.New(8)
	b.StartSegment(false)
	referenceClasses(b, "referent", "queue")
	b.Class(0x40, 0x10, "app/Holder", []hproftest.Field{{Name: "referent", Type: hprof.TypeObject}}, nil)
	b.Instance(0x100, 0x38, 0x200, 0x200) // WeakReference: referent and queue both → 0x200
	b.Instance(0x108, 0x40, 0x200)        // a field merely named referent, not a Reference
	b.Instance(0x200, 0x10)
	b.Root(hprof.TagRootUnknown, 0x100)
	b.Root(hprof.TagRootUnknown, 0x108)
	b.EndSegment()
	d, err := Load(write(t, b.Bytes()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := d.Node(0x100)
	h, _ := d.Node(0x108)
	weak := 0
	for e := d.Graph.Off[w]; e < d.Graph.Off[w+1]; e++ {
		if d.IsWeak(e) {
			weak++
			n, _ := d.EdgeName(w, int(e-d.Graph.Off[w]))
			if n != "referent" {
				t.Errorf("weak edge named %q", n)
			}
		}
	}
	for e := d.Graph.Off[h]; e < d.Graph.Off[h+1]; e++ {
		if d.IsWeak(e) {
			t.Error("Holder.referent marked weak")
		}
	}
	if weak != 1 {
		t.Errorf("%d weak edges out of the WeakReference, want 1", weak)
	}
	if d.Classes[d.ClassOf[w]].Ref != RefWeak {
		t.Errorf("WeakReference classified %v", d.Classes[d.ClassOf[w]].Ref)
	}
}

// An unreached object referenced only from an unreached cycle is not a root, even when its id is
// lower than the cycle's: the cycle's lowest id is.
func TestThesisRuleSkipsObjectsHangingOffCycles(t *testing.T) {
	b := hproftest.New(8)
	b.LoadClass(0x10, "java/lang/Object")
	b.LoadClass(0x20, "app/Node")
	b.StartSegment(false)
	b.Class(0x10, 0, "", nil, nil)
	b.Class(0x20, 0x10, "", []hproftest.Field{{Name: "next", Type: hprof.TypeObject}, {Name: "other", Type: hprof.TypeObject}}, nil)
	b.Instance(0x100, 0x20, 0)            // X: referenced only by D
	b.Instance(0x118, 0x20, 0x120, 0x100) // D → E, D → X
	b.Instance(0x120, 0x20, 0x118)        // E → D
	b.Instance(0x200, 0x20, 0x200)        // a self-loop
	b.Root(hprof.TagRootStickyClass, 0x20)
	b.EndSegment()
	d, err := Load(write(t, b.Bytes()), Options{KeepUnreachable: true})
	if err != nil {
		t.Fatal(err)
	}
	got := idsOf(d, d.Graph.Successors(0))
	if !slices.Equal(got, []uint64{0x20, 0x118, 0x200}) {
		t.Errorf("super root successors %x, want the class, D and the self-loop", got)
	}
}

// A last dump whose segments hold no record is the one loaded, empty, whether the file is read
// by segments (indexed) or in order (gzip): not the dump before it.
func TestEmptyLastDump(t *testing.T) {
	data := hproftest.EmptyLastDump()
	for _, p := range []string{write(t, data), writeGzip(t, data)} {
		d, err := Load(p, Options{})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if d.Dumps != 2 || d.DumpIndex != 2 || d.Graph.N() != 1 {
			t.Errorf("%s: dump %d of %d with %d nodes; want the empty dump 2 of 2 (the super root alone)", filepath.Base(p), d.DumpIndex, d.Dumps, d.Graph.N())
		}
		// The first dump, asked for by number: its instance, its class and the super root.
		d, err = Load(p, Options{Dump: 1})
		if err != nil {
			t.Fatalf("%s, dump 1: %v", p, err)
		}
		if d.Dumps != 2 || d.DumpIndex != 1 || d.Graph.N() != 3 {
			t.Errorf("%s: dump %d of %d with %d nodes; want dump 1 of 2 with 3", filepath.Base(p), d.DumpIndex, d.Dumps, d.Graph.N())
		}
	}
}

// References to ids absent from the dump leave pad slots that the drop of unreachable objects
// takes out as it moves the edges; weak bits stay on their edges, and keeping the unreachable
// objects (squeeze instead) gives the kept objects the same edges.
func TestDanglingReferencesAndDroppedObjects(t *testing.T) {
	b := hproftest.New(8)
	b.StartSegment(false)
	referenceClasses(b, "queue", "referent") // the weak edge after a pad
	b.Class(0x20, 0x10, "app/Node", []hproftest.Field{{Name: "next", Type: hprof.TypeObject}, {Name: "other", Type: hprof.TypeObject}}, nil)
	b.Instance(0x100, 0x20, 0x999, 0x108)  // next: absent
	b.Instance(0x108, 0x38, 0xdead, 0x110) // queue: absent; referent → 0x110, weak
	b.Instance(0x110, 0x10)
	b.Instance(0x118, 0x20, 0x100, 0x777) // unreachable, with an absent reference too
	b.Root(hprof.TagRootUnknown, 0x100)
	b.EndSegment()
	p := write(t, b.Bytes())
	for _, keep := range []bool{false, true} {
		d, err := Load(p, Options{KeepUnreachable: keep})
		if err != nil {
			t.Fatal(err)
		}
		if !keep && (d.Unreachable.Objects != 1 || d.Graph.N() != 8) { // the super root, 4 classes, 3 objects
			t.Errorf("dropped %+v, %d nodes left", d.Unreachable, d.Graph.N())
		}
		n, _ := d.Node(0x100)
		if got := idsOf(d, d.Graph.Successors(n)); !slices.Equal(got, []uint64{0x20, 0x108}) {
			t.Errorf("keep %v: 0x100 → %x, want 0x108 and its class", keep, got)
		}
		w, _ := d.Node(0x108)
		var weak []uint64
		for e := d.Graph.Off[w]; e < d.Graph.Off[w+1]; e++ {
			if d.Graph.Succ[e] == pad {
				t.Fatalf("keep %v: a pad slot is left", keep)
			}
			if d.IsWeak(e) {
				weak = append(weak, d.ObjectID(d.Graph.Succ[e]))
			}
		}
		if got := idsOf(d, d.Graph.Successors(w)); !slices.Equal(got, []uint64{0x38, 0x110}) || !slices.Equal(weak, []uint64{0x110}) {
			t.Errorf("keep %v: 0x108 → %x, weak %x; want 0x110 (weak) and its class", keep, got, weak)
		}
		if w := strings.Join(d.Warnings, " "); !strings.Contains(w, "3 reference(s) to object ids absent") || strings.Contains(w, "of them") || strings.Contains(w, "class-data sharing") {
			t.Errorf("keep %v: want the absent ids counted, one per record, and no reason given: %v", keep, d.Warnings)
		}
	}
}

// Most absent ids from one object array are what a JVM with a class-data sharing archive
// shows: its array of roots refers to the Class objects of archived classes never loaded,
// which HotSpot leaves out (a real JDK 17 dump: 686 of 686 from one array, none with
// -Xshare:off). The warning says so, and where they are.
func TestAbsentIDsFromOneArray(t *testing.T) {
	b := hproftest.New(8)
	b.StartSegment(false)
	b.Class(0x10, 0, "java/lang/Object", nil, nil)
	b.Class(0x20, 0x10, "app/Node", []hproftest.Field{{Name: "next", Type: hprof.TypeObject}}, nil)
	b.Class(0x28, 0x10, "[Ljava/lang/Object;", nil, nil)
	b.Instance(0x100, 0x20, 0x999)
	b.ObjArray(0x200, 0x28, 0x100, 0xa00, 0, 0xa08, 0xa10)
	b.Root(hprof.TagRootUnknown, 0x200)
	b.EndSegment()
	d, err := Load(write(t, b.Bytes()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(d.Warnings, " ")
	for _, want := range []string{"4 reference(s) to object ids absent from the dump were dropped (first: 0x999 from INSTANCE DUMP at offset ", "; 3 of them from OBJECT ARRAY DUMP at offset ", "class-data sharing archive"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning lacks %q: %s", want, w)
		}
	}
}

// referenceClasses writes, in the open segment, java.lang.Object (0x10), java.lang.ref.Reference
// (0x30) with the named reference fields in that order, and java.lang.ref.WeakReference (0x38).
func referenceClasses(b *hproftest.Builder, fields ...string) {
	var fs []hproftest.Field
	for _, f := range fields {
		fs = append(fs, hproftest.Field{Name: f, Type: hprof.TypeObject})
	}
	b.Class(0x10, 0, "java/lang/Object", nil, nil)
	b.Class(0x30, 0x10, "java/lang/ref/Reference", fs, nil)
	b.Class(0x38, 0x30, "java/lang/ref/WeakReference", nil, nil)
}

// Instances of a hundred classes of different layouts, in turns (more classes than pass 1
// remembers at once, so that they evict each other), each get exactly their non-null
// references as edges, besides their class.
func TestManyClassesInTurns(t *testing.T) {
	b := hproftest.New(8)
	b.LoadClass(0x10, "java/lang/Object")
	const classes = 100
	fieldsOf := func(c int) []hproftest.Field {
		fields := []hproftest.Field{{Name: "n", Type: hprof.TypeInt}, {Name: "a", Type: hprof.TypeObject}}
		for range c % 7 {
			fields = append(fields, hproftest.Field{Name: "pad", Type: hprof.TypeLong})
		}
		return append(fields, hproftest.Field{Name: "b", Type: hprof.TypeObject})
	}
	classID := func(c int) uint64 { return uint64(0x1000 + 40*c + 8*(c*c%5)) } // irregular gaps
	for c := range classes {
		id := classID(c)
		b.LoadClass(id, fmt.Sprintf("app/C%d", c))
		b.Declare(id, 0x10, fieldsOf(c))
	}
	b.StartSegment(false)
	b.Class(0x10, 0, "", nil, nil)
	for c := range classes {
		id := classID(c)
		b.Class(id, 0x10, "", fieldsOf(c), nil)
		b.Root(hprof.TagRootStickyClass, id)
	}
	const objects = 3000
	obj := func(i int) uint64 { return uint64(0x100000 + 32*i) }
	want := map[uint64][]uint64{}
	for i := range objects {
		c := (i * 37) % classes
		var a, bb uint64
		if i%3 != 0 {
			a = obj((i + 1) % objects)
		}
		if i%5 != 0 {
			bb = obj((i * 7) % objects)
		}
		values := []uint64{uint64(i), a}
		for range c % 7 {
			values = append(values, 0x7fffffff) // not an object: read as a reference, a warning
		}
		values = append(values, bb)
		b.Instance(obj(i), classID(c), values...)
		b.Root(hprof.TagRootJNIGlobal, obj(i))
		for _, r := range []uint64{a, bb} {
			if r != 0 {
				want[obj(i)] = append(want[obj(i)], r)
			}
		}
	}
	b.EndSegment()
	b.EndDump()
	d, err := Load(write(t, b.Bytes()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Warnings) > 0 {
		t.Fatalf("warnings: %q", d.Warnings)
	}
	for i := range objects {
		v, ok := d.Node(obj(i))
		if !ok {
			t.Fatalf("object %d has no node", i)
		}
		var got []uint64
		for _, w := range d.Graph.Succ[d.Graph.Off[v]:d.Graph.Off[v+1]] {
			if d.Kind[w] != KindClass {
				got = append(got, d.ObjectID(w))
			}
		}
		if !slices.Equal(got, want[obj(i)]) {
			t.Fatalf("object %d (class C%d): references %x, want %x", i, (i*37)%classes, got, want[obj(i)])
		}
	}
}

// farHalfDump is a dump of five segments of about the same size, so that the last three lie in
// the far half of the file that a second shard reads (see scanPass1): a class dumped only
// there, instances of a class whose dump comes after them, a primitive array type and object
// arrays first met there, roots, and the arrays whose address gaps choose the size model; then,
// with another=true, a second dump after it.
func farHalfDump(another bool) []byte {
	b := hproftest.New(8)
	b.LoadClass(0x10, "java/lang/Object")
	b.LoadClass(0x20, "app/Node")
	b.LoadClass(0x30, "app/Far")
	b.LoadClass(0x40, "app/Late")
	b.LoadClass(0x50, "app/Node[]")
	node := []hproftest.Field{{Name: "next", Type: hprof.TypeObject}}
	pad := func(id uint64) { b.PrimArray(id, hprof.TypeLong, 2000) } // 16 KB a segment
	b.StartSegment(false)
	b.Class(0x10, 0, "", nil, nil)
	b.Class(0x20, 0x10, "", node, nil)
	b.Instance(0x1000, 0x20, 0x1008)
	b.Instance(0x1008, 0x20, 0x3000)
	pad(0x1010)
	b.EndSegment()
	b.StartSegment(false)
	b.Instance(0x2000, 0x20, 0x4000)
	b.PrimArray(0x2008, hprof.TypeInt, 4)
	pad(0x2010)
	b.EndSegment()
	b.StartSegment(false)
	b.Class(0x30, 0x10, "", []hproftest.Field{{Name: "a", Type: hprof.TypeObject}, {Name: "b", Type: hprof.TypeObject}}, map[string]uint64{"s": 0x1000})
	b.Instance(0x3000, 0x30, 0x2000, 0x5000)
	b.Instance(0x3008, 0x20, 0x3000)
	b.ObjArray(0x3010, 0x50, 0x1000, 0x3000, 0, 0x5008)
	b.PrimArray(0x3018, hprof.TypeByte, 7)
	b.Root(hprof.TagRootJNIGlobal, 0x3010)
	pad(0x3020)
	b.EndSegment()
	b.StartSegment(false)
	b.Instance(0x4000, 0x40, 0x3008, 0x1008)
	b.Instance(0x4008, 0x40, 0, 0x4000)
	b.Root(hprof.TagRootJNIGlobal, 0x4008)
	pad(0x4010)
	// Arrays side by side, as HotSpot lays them out with compressed references: only their
	// address gaps, all in the far half, choose the size model.
	m := hprof.ModelFor(8, true)
	for i, id := 0, uint64(0x8000); i < 40; i++ {
		n := i%8 + 1
		b.PrimArray(id, hprof.TypeByte, n)
		id += m.ArraySize(1, uint32(n))
	}
	b.EndSegment()
	b.StartSegment(false)
	b.Class(0x40, 0x10, "", []hproftest.Field{{Name: "x", Type: hprof.TypeObject}, {Name: "y", Type: hprof.TypeObject}}, nil)
	b.Class(0x50, 0x10, "", nil, nil)
	b.Instance(0x5000, 0x20, 0)
	b.Instance(0x5008, 0x40, 0x5000, 0x1000)
	b.Root(hprof.TagRootJNIGlobal, 0x1000)
	pad(0x5010)
	b.EndSegment()
	b.EndDump()
	if another {
		b.OneObjectDump(0x10, 0x9000, hprof.TagRootJNIGlobal)
	}
	return b.Bytes()
}

// The far half of a file read by a second shard gives the dump that one shard, and the
// sequential reading of the same file compressed, give.
func TestFarShardMatchesOneShard(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("the far shard runs only with two cores or more")
	}
	for _, another := range []bool{false, true} {
		data := farHalfDump(another)
		p, pz := write(t, data), writeGzip(t, data)
		for _, dump := range []int{0, 1} {
			opt := Options{Dump: dump}
			one, err := Load(p, opt)
			if err != nil {
				t.Fatal(err)
			}
			inOrder, err := Load(pz, opt)
			if err != nil {
				t.Fatal(err)
			}
			undo := farShardForced()
			merged := 0
			testMerged = func(segs int) { merged += segs }
			two, err := Load(p, opt)
			undo()
			testMerged = nil
			if err != nil {
				t.Fatal(err)
			}
			if wantFar := !another || dump == 1; wantFar != (merged > 0) {
				t.Fatalf("another dump %v, dump %d: the far shard read %d segments", another, dump, merged)
			}
			if wantFar := !another || dump == 1; wantFar && !strings.Contains(two.ModelFrom, "address gaps") {
				t.Fatalf("another dump %v, dump %d: size model %s", another, dump, two.ModelFrom)
			}
			if !reflect.DeepEqual(one, two) {
				t.Errorf("another dump %v, dump %d: two shards differ from one:\n%+v\n%+v", another, dump, two, one)
			}
			if !reflect.DeepEqual(inOrder.Graph, two.Graph) || !slices.Equal(inOrder.ClassOf, two.ClassOf) || !reflect.DeepEqual(inOrder.Classes, two.Classes) ||
				!slices.Equal(inOrder.ObjectIDs(), two.ObjectIDs()) || !slices.Equal(inOrder.Roots, two.Roots) {
				t.Errorf("another dump %v, dump %d: two shards differ from the sequential reading", another, dump)
			}
		}
	}
}

// Damage inside a segment of a dump other than the one read does not stop the reading, plain
// (by segments, which never looks inside it) or compressed (in order, through both passes); in
// the dump read, it does.
func TestDamageInAnotherDump(t *testing.T) {
	for _, second := range []bool{true, false} {
		data := hproftest.DamagedFirstDump(second, 0)
		p, pz := write(t, data), writeGzip(t, data)
		for _, dump := range []int{0, 1, 2} {
			if dump == 2 && !second {
				continue
			}
			plain, errPlain := Load(p, Options{Dump: dump})
			zipped, errZipped := Load(pz, Options{Dump: dump})
			if fails := dump == 1 || !second; (errPlain != nil) != fails || (errZipped != nil) != fails {
				t.Fatalf("second dump %v, dump %d: plain: %v; compressed: %v", second, dump, errPlain, errZipped)
			}
			if errPlain == nil && (!slices.Equal(plain.ObjectIDs(), []uint64{0, 0x10, 0x900}) || !reflect.DeepEqual(plain.Graph, zipped.Graph)) {
				t.Errorf("dump %d: objects %#x plain, %#x compressed", dump, plain.ObjectIDs(), zipped.ObjectIDs())
			}
		}
	}
}

// Asked for the last dump, pass 1 reads the first while the walk looks for others, and meets
// the damage in it long before the walk meets the second dump. The second is read all the same,
// by segments, as when the walk wins that race: the damage waits for the walk's end. (It used to
// stop the walk, and the pass fell back to reading the file in order, which loses the segments'
// index that naming references reads by: a fuzzing input found it, failing under load only.)
func TestDamageInAnEarlierDumpKeepsTheIndex(t *testing.T) {
	p := write(t, hproftest.DamagedFirstDump(true, 50_000))
	for _, far := range []bool{false, true} {
		undo := func() {}
		if far {
			undo = farShardForced()
		}
		d, err := Load(p, Options{})
		undo()
		if err != nil {
			t.Fatal(err)
		}
		if d.hdr == nil || len(d.segIDs) == 0 || d.DumpIndex != 2 || !slices.Equal(d.ObjectIDs(), []uint64{0, 0x10, 0x900}) {
			t.Errorf("far shard %v: dump %d, objects %#x, read by segments: %v", far, d.DumpIndex, d.ObjectIDs(), d.hdr != nil)
		}
	}
}

// Pass 1 reads the far half of the file on a second core only when the page cache holds the
// file's end: read from disk, two streams at once were slower than one. Either way the dump is
// the same.
func TestFarShardOnlyFromPageCache(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("the far shard needs two cores")
	}
	p := write(t, farHalfDump(false))
	defer func(m int64, c func(*os.File, int64) bool) { farShardMin, fileCached, testMerged = m, c, nil }(farShardMin, fileCached)
	farShardMin = 1
	var dumps []*Dump
	for _, cached := range []bool{true, false} {
		fileCached = func(*os.File, int64) bool { return cached }
		merged := 0
		testMerged = func(segs int) { merged += segs }
		d, err := Load(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if (merged > 0) != cached {
			t.Errorf("file cached %v: the far shard merged %d segments", cached, merged)
		}
		dumps = append(dumps, d)
	}
	if !reflect.DeepEqual(dumps[0].Graph, dumps[1].Graph) || !reflect.DeepEqual(dumps[0].Classes, dumps[1].Classes) {
		t.Error("the dump read in two shards differs from the one read in one")
	}
}

// A dump of more objects than the steps that split their work between two cores take on one:
// a list of 70,000 nodes, the class dumps first (as HotSpot writes them), and unreachable
// objects among the list's, must load into the list, every edge leading to the next node.
func TestLongListLoads(t *testing.T) {
	const n = 70_000
	b := hproftest.New(8)
	b.LoadClass(0x10, "java/lang/Object")
	b.LoadClass(0x20, "app/Node")
	b.StartSegment(false)
	b.Class(0x10, 0, "", nil, nil)
	b.Class(0x20, 0x10, "", []hproftest.Field{{Name: "next", Type: hprof.TypeObject}}, nil)
	id := func(i int) uint64 { return 0x1000 + 16*uint64(i) }
	for i := range n {
		next := uint64(0)
		if i+1 < n {
			next = id(i + 1)
		}
		b.Instance(id(i), 0x20, next)
		if i%9999 == 0 {
			b.Instance(id(i)+8, 0x20, id(i)) // unreachable, between two of the list's
		}
	}
	b.Root(hprof.TagRootJNIGlobal, id(0))
	b.Root(hprof.TagRootStickyClass, 0x20)
	b.EndSegment()
	b.EndDump()
	d, err := Load(write(t, b.Bytes()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Unreachable.Objects != 8 {
		t.Errorf("%d unreachable objects, want 8", d.Unreachable.Objects)
	}
	cls, _ := d.Node(0x20)
	for i := range n {
		v, ok := d.Node(id(i))
		if !ok {
			t.Fatalf("node %d (id %x) not found", i, id(i))
		}
		want := []uint32{cls}
		if i+1 < n {
			w, _ := d.Node(id(i + 1))
			want = []uint32{w, cls}
		}
		if got := d.Graph.Successors(v); !slices.Equal(got, want) {
			t.Fatalf("node %d: successors %v, want %v", i, got, want)
		}
	}
	if c := d.Classes[d.ClassOf[mustNode(t, d, id(5))]]; c.Instances != n || c.Name != "app.Node" {
		t.Errorf("class %s: %d instances, want app.Node with %d", c.Name, c.Instances, n)
	}
}

func mustNode(t *testing.T, d *Dump, id uint64) uint32 {
	t.Helper()
	v, ok := d.Node(id)
	if !ok {
		t.Fatalf("no node with id %x", id)
	}
	return v
}

// The graph's 32-bit numbering never wraps: a dump with more objects or references than it holds
// is refused, naming the limit, before its references are read. The limits are lowered to this
// small dump's counts: at a count it loads, one above it is refused; kept unreachable objects
// count an edge each from the super root.
func TestCountLimits(t *testing.T) {
	x, p := chainLoader(t)
	if err := errors.Join(x.Read(), x.Index()); err != nil {
		t.Fatal(err)
	}
	g := x.l.d.Graph
	nodes, edges := g.N(), uint64(g.Off[g.N()]) // the references pass 2 has room for
	if nodes != 9 {
		t.Fatalf("%d nodes, want the super root and 8 objects", nodes)
	}
	defer func(n int, e uint64) { maxNodes, maxEdges = n, e }(maxNodes, maxEdges)
	for _, c := range []struct {
		nodes  int
		edges  uint64
		keep   bool
		loaded int // nodes in the graph: D, E and F are unreachable
		refuse string
	}{
		{nodes, edges, false, 6, ""},
		{nodes - 1, edges, false, 0, "8 objects: more than the 7 "},
		{nodes, edges - 1, false, 0, fmt.Sprintf("more than %d references", edges-1)},
		{nodes, edges + 8, true, 9, ""},
		{nodes, edges + 7, true, 0, fmt.Sprintf("more than %d references", edges+7)},
	} {
		maxNodes, maxEdges = c.nodes, c.edges
		d, err := Load(p, Options{KeepUnreachable: c.keep})
		switch {
		case c.refuse == "" && err != nil:
			t.Errorf("limits %d nodes, %d edges (keep %v): %v", c.nodes, c.edges, c.keep, err)
		case c.refuse == "" && d.Graph.N() != c.loaded:
			t.Errorf("limits %d nodes, %d edges (keep %v): %d nodes loaded", c.nodes, c.edges, c.keep, d.Graph.N())
		case c.refuse != "" && (err == nil || !strings.Contains(err.Error(), c.refuse)):
			t.Errorf("limits %d nodes, %d edges (keep %v): error %v, want one saying %q", c.nodes, c.edges, c.keep, err, c.refuse)
		}
	}
}
