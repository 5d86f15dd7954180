package heapdump

import (
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/analysis/histogram"
	"github.com/heapledger/heapledger/analysis/hprof"
	"github.com/heapledger/heapledger/analysis/hprof/hproftest"
	"github.com/heapledger/heapledger/fixtures"
	"github.com/heapledger/heapledger/fixtures/heapdumps"
	"github.com/heapledger/heapledger/internal/testenv"
)

func classIndex(t *testing.T, d *Dump, name string) int {
	t.Helper()
	for k, c := range d.Classes {
		if c.Name == name {
			return k
		}
	}
	t.Fatalf("class %s not in the dump", name)
	return -1
}

func nodesOf(d *Dump, k int) []uint32 {
	var out []uint32
	for n := 1; n < len(d.ClassOf); n++ {
		if int(d.ClassOf[n]) == k && d.Kind[n] != KindClass {
			out = append(out, uint32(n))
		}
	}
	return out
}

func TestFixtureGraph(t *testing.T) {
	dump := heapdumps.Dump(t)
	d, err := Load(dump, Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := d.Graph
	if g.N() != len(d.ObjectIDs()) || len(g.Size) != g.N() || len(d.Kind) != g.N() || int(g.Off[g.N()]) != len(g.Succ) {
		t.Fatalf("inconsistent lengths: N %d ids %d sizes %d kinds %d edges %d/%d", g.N(), len(d.ObjectIDs()), len(g.Size), len(d.Kind), g.Off[g.N()], len(g.Succ))
	}
	if !slices.IsSorted(d.ObjectIDs()[1:]) {
		t.Error("nodes are not in object-id order")
	}
	t.Logf("%d nodes, %d edges, %d roots, %d unreachable (%d bytes), warnings %v", g.N(), len(g.Succ), len(d.Roots), d.Unreachable.Objects, d.Unreachable.Bytes, d.Warnings)

	// Exact counts of what the program built; same bytes as the one-pass histogram.
	want, err := heapdumps.Expected(dump)
	if err != nil {
		t.Fatal(err)
	}
	var classes []string
	for class, n := range want {
		if c := d.Classes[classIndex(t, d, class)]; c.Instances != n {
			t.Errorf("%s: %d instances in the graph, the program built %d", class, c.Instances, n)
		}
		classes = append(classes, class)
	}
	matchesHistogram(t, d, dump, classes)

	// Every node reachable from the super root.
	seen := newBitset(g.N())
	stack := []uint32{0}
	seen.set(0)
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, w := range g.Successors(v) {
			if !seen.has(w) {
				seen.set(w)
				stack = append(stack, w)
			}
		}
	}
	if seen.count() != g.N() {
		t.Errorf("%d of %d nodes reachable from the super root", seen.count(), g.N())
	}

	// Objects held only by a thread's stack are Java-frame roots.
	held := 0
	for _, n := range nodesOf(d, classIndex(t, d, "heapfixture.HeapFixture$FrameHeld")) {
		for _, r := range d.RootsOf(n) {
			if r.Kind == RootJavaFrame {
				held++
				break
			}
		}
	}
	if held != 3 {
		t.Errorf("%d FrameHeld objects are Java-frame roots, want 3", held)
	}

	// The WeakReference's referent edge is weak; the static strongTarget edge is not.
	target := nodesOf(d, classIndex(t, d, "heapfixture.HeapFixture$WeakTarget"))
	if len(target) != 1 {
		t.Fatalf("%d WeakTarget nodes", len(target))
	}
	weakIn, strongIn := 0, 0
	for v := 0; v < g.N(); v++ {
		for e := g.Off[v]; e < g.Off[v+1]; e++ {
			if g.Succ[e] == target[0] {
				if d.IsWeak(e) {
					weakIn++
					if d.ClassName(uint32(v)) != "java.lang.ref.WeakReference" {
						t.Errorf("weak edge from %s", d.Describe(uint32(v)))
					}
				} else {
					strongIn++
				}
			}
		}
	}
	if weakIn != 1 || strongIn != 1 {
		t.Errorf("WeakTarget: %d weak and %d strong referrers, want 1 and 1", weakIn, strongIn)
	}

	// Edge names: a list node's fields; the fixture class's static LEAK.
	ln := nodesOf(d, classIndex(t, d, "heapfixture.HeapFixture$ListNode"))[1]
	var refs []EdgeRef
	for i := range g.Successors(ln) {
		refs = append(refs, EdgeRef{ln, i})
	}
	holder := d.Classes[classIndex(t, d, heapdumps.LeakHolder)].Node
	for i := range g.Successors(holder) {
		refs = append(refs, EdgeRef{holder, i})
	}
	names, err := d.EdgeNames(refs)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(names, ",")
	for _, w := range []string{"next", "prev", "data", "<class>", "LEAK", "treeRoot", "<super>"} {
		if !slices.Contains(names, w) {
			t.Errorf("edge names %s lack %q", got, w)
		}
	}
	for i, r := range refs {
		if names[i] == "LEAK" && d.ClassName(g.Successors(r.From)[r.Index]) != "java.util.ArrayList" {
			t.Errorf("LEAK edge leads to %s", d.Describe(g.Successors(r.From)[r.Index]))
		}
	}
	one, err := d.EdgeName(0, 0)
	if err != nil || !strings.HasPrefix(one, "<GC root: ") {
		t.Errorf("super root edge name %q, %v", one, err)
	}

	// Naming reads only the graph's edge offsets: with the edges, sizes and weak edges dropped,
	// as heap analyze drops them, every edge is named as before, those out of the super root
	// included.
	all := slices.Clone(refs)
	for i := range g.Successors(0) {
		all = append(all, EdgeRef{0, i})
	}
	sameEdgeNames(t, d, all, "with and without the edges", func() { g.Succ, g.Size, d.Weak = nil, nil, nil })
}

// The graph's successors of every object must be exactly the references an independent, slow
// reading of the dump finds (a map from id to referenced ids), as multisets.
func TestGraphMatchesSlowReading(t *testing.T) {
	dump := heapdumps.Dump(t)
	d, err := Load(dump, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(dump)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := hprof.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	type obj struct {
		class uint64
		data  []byte
		kind  hprof.Tag
		n     uint32
	}
	objs := map[uint64]obj{}
	classes := map[uint64]*hprof.ClassDump{}
	names := map[uint64]string{}
	strs := map[uint64]string{}
	var primClass = map[hprof.Type]uint64{}
	hproftest.Records(t, r, func(rec *hprof.Record) {
		switch rec.Tag {
		case hprof.TagUTF8:
			strs[rec.ID] = string(rec.Data)
		case hprof.TagLoadClass:
			names[rec.ID] = strs[rec.NameID]
		case hprof.TagClassDump:
			cd, err := r.ClassDump(rec)
			if err != nil {
				t.Fatal(err)
			}
			classes[rec.ID] = cd
			objs[rec.ID] = obj{kind: rec.Tag}
		case hprof.TagInstanceDump, hprof.TagObjArrayDump:
			objs[rec.ID] = obj{class: rec.Class, data: append([]byte(nil), rec.Data...), kind: rec.Tag}
		case hprof.TagPrimArrayDump:
			objs[rec.ID] = obj{kind: rec.Tag, n: uint32(rec.Elem)}
		}
	})
	for id, n := range names {
		if len(n) == 2 && n[0] == '[' {
			primClass[map[byte]hprof.Type{'Z': 4, 'C': 5, 'F': 6, 'D': 7, 'B': 8, 'S': 9, 'I': 10, 'J': 11}[n[1]]] = id
		}
	}
	var classClass uint64
	for id, n := range names {
		if n == "java/lang/Class" {
			classClass = id
		}
	}
	exists := func(id uint64) bool { _, ok := objs[id]; return ok && id != 0 }
	refsOf := func(id uint64) []uint64 {
		o := objs[id]
		var out []uint64
		add := func(v uint64) {
			if exists(v) {
				out = append(out, v)
			}
		}
		switch o.kind {
		case hprof.TagInstanceDump:
			off := 0
			for c := o.class; c != 0; c = classes[c].Super {
				for _, fl := range classes[c].Fields {
					if fl.Type == hprof.TypeObject {
						add(r.ReadID(o.data[off:]))
					}
					off += fl.Type.Size(r.IDSize)
				}
			}
			add(o.class)
		case hprof.TagObjArrayDump:
			for p := 0; p < len(o.data); p += r.IDSize {
				add(r.ReadID(o.data[p:]))
			}
			add(o.class)
		case hprof.TagPrimArrayDump:
			add(primClass[hprof.Type(o.n)])
		case hprof.TagClassDump:
			cd := classes[id]
			add(classClass)
			for _, v := range []uint64{cd.Super, cd.Loader, cd.Signers, cd.ProtectionDomain} {
				add(v)
			}
			for _, s := range cd.Statics {
				if s.Value.Type == hprof.TypeObject {
					add(s.Value.Bits)
				}
			}
			for _, c := range cd.Constants {
				if c.Type == hprof.TypeObject {
					add(c.Bits)
				}
			}
		}
		slices.Sort(out)
		return out
	}
	checked := 0
	for n := 1; n < d.Graph.N(); n++ {
		id := d.ObjectID(uint32(n))
		var got []uint64
		for _, s := range d.Graph.Successors(uint32(n)) {
			got = append(got, d.ObjectID(s))
		}
		slices.Sort(got)
		want := refsOf(id)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: successors %x, the dump says %x", d.Describe(uint32(n)), got, want)
		}
		checked++
	}
	if checked+int(d.Unreachable.Objects) != len(objs) {
		t.Errorf("graph has %d objects + %d unreachable, the dump %d", checked, d.Unreachable.Objects, len(objs))
	}
}

// forceFarShard has pass 1 read the far half of any file on a second core (see scanPass1),
// whether the page cache holds it or not, until the test ends.
func forceFarShard(t testing.TB) {
	t.Cleanup(farShardForced())
}

// farShardForced is forceFarShard for code outside a test's end; it returns what undoes it.
func farShardForced() (undo func()) {
	oldMin, oldCached := farShardMin, fileCached
	farShardMin = 1
	fileCached = func(*os.File, int64) bool { return true }
	return func() { farShardMin, fileCached = oldMin, oldCached }
}

// Reading the segments on several cores (pass 1 in two shards, pass 2 in batches) must give
// exactly the dump one core gives, down to class numbering, root order, warnings and the id
// ranges of the segments.
func TestParallelLoadMatchesOneCore(t *testing.T) {
	forceFarShard(t)
	dump := heapdumps.Dump(t)
	load := func(procs int) *Dump {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		d, err := Load(dump, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	one := load(1)
	for _, procs := range []int{2, 3, 7} {
		d := load(procs)
		if !reflect.DeepEqual(one.Graph, d.Graph) || !slices.Equal(one.ObjectIDs(), d.ObjectIDs()) || !slices.Equal(one.ClassOf, d.ClassOf) ||
			!slices.Equal(one.Kind, d.Kind) || !reflect.DeepEqual(one.Classes, d.Classes) || !slices.Equal(one.Roots, d.Roots) ||
			!slices.Equal(one.Weak, d.Weak) || !slices.Equal(one.Warnings, d.Warnings) || one.Unreachable != d.Unreachable ||
			!reflect.DeepEqual(one.segIDs, d.segIDs) || one.Model != d.Model {
			t.Fatalf("%d cores: the dump differs from one core's", procs)
		}
	}
}

// A dump of a VM with compact object headers: the graph must size objects as the histogram does
// (which matches HotSpot's own class histogram there), from the layout found in the dump.
func TestCompactHeadersGraphMatchesHistogram(t *testing.T) {
	jdk := fixtures.JDK25Home()
	testenv.File(t, jdk+"/bin/java")
	dump := heapdumps.DumpWith(t, jdk, "-XX:+UseCompactObjectHeaders")
	d, err := Load(dump, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Model.Header != 8 || d.Model.ArrayHeader != 12 || !strings.Contains(d.ModelFrom, "address gaps") {
		t.Fatalf("model %+v (%s): compact object headers from the address gaps", d.Model, d.ModelFrom)
	}
	want, err := heapdumps.Expected(dump)
	if err != nil {
		t.Fatal(err)
	}
	var classes []string
	for class := range want {
		classes = append(classes, class)
	}
	matchesHistogram(t, d, dump, classes)
}

// matchesHistogram checks that d sizes objects as the one-pass histogram of dump does: every
// object is in the graph or counted as unreachable, with the histogram's total bytes, and each
// of classes has the histogram's bytes.
func matchesHistogram(t *testing.T, d *Dump, dump string, classes []string) {
	t.Helper()
	h, err := histogram.Read(dump, histogram.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hb := map[string]histogram.Entry{}
	for _, e := range h.Entries {
		hb[e.Class] = e
	}
	for _, class := range classes {
		if c := d.Classes[classIndex(t, d, class)]; c.Bytes != hb[class].Bytes {
			t.Errorf("%s: %d bytes in the graph, %d in the histogram", class, c.Bytes, hb[class].Bytes)
		}
	}
	var objs, bytes uint64
	for _, c := range d.Classes {
		objs += c.Instances
		bytes += c.Bytes
	}
	if objs+d.Unreachable.Objects != h.Instances || bytes+d.Unreachable.Bytes != h.Bytes {
		t.Errorf("graph %d objects %d bytes + unreachable %+v; histogram %d objects %d bytes",
			objs, bytes, d.Unreachable, h.Instances, h.Bytes)
	}
}
