package tracked

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/analysis/heapdump"
	"github.com/heapledger/heapledger/analysis/hprof"
	"github.com/heapledger/heapledger/analysis/hprof/hproftest"
)

const testTable = "# heapledger table 1\naccount\t0\t<unaccounted>\naccount\t1\tapp\n" +
	"site\t100\tobject\tapp.Item\tapp.Main.fill()V\t7\t12\nsite\t101\tarray\tbyte[]\tapp.Item.<init>()V\t3\t-1\n"

// Object ids of the synthetic dump.
const (
	objClass, refClass, weakClass, trackedClass, trackedArrayClass = 0x10, 0x18, 0x20, 0x28, 0x30
	liveClass, snapsClass, headsClass, holderClass, itemClass      = 0x38, 0x40, 0x48, 0x50, 0x58
	objArrayClass                                                  = 0x60
	heads, table, list                                             = 0x1000, 0x1008, 0x1010
	itemBase, payloadBase, trackBase                               = 0x2000, 0x4000, 0x6000
)

// runtimeDump writes a dump of a small application — a class whose static list holds items, each
// with a byte[] payload — run by heapledger's runtime with the given liveness MODE and RATE: a
// tracking reference per item (account 1, site 100) and per payload (site 101, an array's),
// linked both ways from Live.HEADS, and, when withTable, the table in Snapshots.heapDumpTable.
// MODE 0 (off) tracks nothing, and MODE -1 leaves the Live class out, as a runtime that never
// loaded it.
func runtimeDump(t *testing.T, items, mode, rate int, withTable bool) string {
	t.Helper()
	b := hproftest.New(8)
	b.StartSegment(false)
	obj := hprof.TypeObject
	b.Class(objClass, 0, "java/lang/Object", nil, nil)
	b.Class(refClass, objClass, "java/lang/ref/Reference", []hproftest.Field{{Name: "referent", Type: obj}, {Name: "queue", Type: obj}}, nil)
	b.Class(weakClass, refClass, "java/lang/ref/WeakReference", nil, nil)
	b.Class(trackedClass, weakClass, "heapledger/rt/Live$Tracked", []hproftest.Field{
		{Name: "key", Type: hprof.TypeLong}, {Name: "bornStripe", Type: hprof.TypeInt}, {Name: "prev", Type: obj}, {Name: "next", Type: obj}}, nil)
	b.Class(trackedArrayClass, trackedClass, "heapledger/rt/Live$TrackedArray", []hproftest.Field{{Name: "count", Type: hprof.TypeLong}}, nil)
	b.Class(headsClass, objClass, "[Lheapledger/rt/Live$Tracked;", nil, nil)
	b.Class(objArrayClass, objClass, "[Ljava/lang/Object;", nil, nil)
	if mode >= 0 {
		b.ClassWithStatics(liveClass, objClass, "heapledger/rt/Live", nil, []hproftest.Static{
			{Name: "MODE", Type: hprof.TypeInt, Bits: uint64(mode)}, {Name: "RATE", Type: hprof.TypeInt, Bits: uint64(rate)},
			{Name: "HEADS", Type: obj, Bits: heads}})
	}
	tableRef := uint64(0)
	if withTable {
		tableRef = table
		b.PrimArrayData(table, hprof.TypeByte, []byte(testTable))
	}
	b.ClassWithStatics(snapsClass, objClass, "heapledger/rt/Snapshots", nil, []hproftest.Static{{Name: TableField, Type: obj, Bits: tableRef}})
	b.Class(holderClass, objClass, "app/Holder", nil, map[string]uint64{"LIST": list})
	b.Class(itemClass, objClass, "app/Item", []hproftest.Field{{Name: "payload", Type: obj}}, nil)
	var elems []uint64
	for i := range uint64(items) {
		item, payload := itemBase+8*i, payloadBase+8*i
		elems = append(elems, item)
		b.Instance(item, itemClass, payload)
		b.PrimArray(payload, hprof.TypeByte, 40)
	}
	b.ObjArray(list, objArrayClass, elems...)
	// Tracking references, every rate-th item and payload, linked in one list.
	var refs []uint64
	for i := range uint64(items) {
		if mode > 0 && (i+1)%uint64(rate) == 0 {
			refs = append(refs, itemBase+8*i, payloadBase+8*i)
		}
	}
	for k, o := range refs {
		prev, next := uint64(0), uint64(0)
		if k > 0 {
			prev = trackBase + 8*uint64(k-1)
		}
		if k < len(refs)-1 {
			next = trackBase + 8*uint64(k+1)
		}
		id := trackBase + 8*uint64(k)
		if o >= payloadBase {
			b.Instance(id, trackedArrayClass, 1, 1<<32|101<<1, 0, prev, next, o, 0)
		} else {
			b.Instance(id, trackedClass, 1<<32|100<<1, 0, prev, next, o, 0)
		}
	}
	if mode > 0 {
		b.ObjArray(heads, headsClass, trackBase)
	}
	// The JVM's classes are sticky roots; the application's and heapledger's hang off theirs.
	for _, c := range []uint64{objClass, refClass, weakClass, objArrayClass, liveClass, snapsClass, holderClass} {
		if c != liveClass || mode >= 0 {
			b.Root(hprof.TagRootStickyClass, c)
		}
	}
	b.EndSegment()
	b.EndDump()
	p := filepath.Join(t.TempDir(), "rt.hprof")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func loadRuntime(t *testing.T, path string) (*heapdump.Dump, *Runtime) {
	t.Helper()
	d, err := heapdump.Load(path, heapdump.Options{Watch: []heapdump.Watch{Watch}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Find(d, d.Watched[0])
	if err != nil {
		t.Fatal(err)
	}
	return d, r
}

// TestFindReadsTheRuntime: the tracking references of both classes with their objects and keys,
// the liveness setting and the table the runtime held.
func TestFindReadsTheRuntime(t *testing.T) {
	const items = 20
	d, r := loadRuntime(t, runtimeDump(t, items, 1, 1, true))
	if !r.Present || r.Liveness != "all" || r.Rate != 1 || len(r.Refs.Nodes) != 2*items || r.Cleared != 0 {
		t.Fatalf("runtime %+v", r)
	}
	for i, o := range r.Refs.Objects {
		id, key := d.ObjectID(o), r.Refs.Keys[i]
		want := 100
		if id >= payloadBase {
			want = 101
		}
		if Account(key) != 1 || Site(key) != want || Part(key) != 0 {
			t.Errorf("reference to 0x%x: key %x (account %d, site %d), want account 1, site %d", id, key, Account(key), Site(key), want)
		}
	}
	if string(r.Table) != testTable {
		t.Errorf("table %q", r.Table)
	}
	n, err := TableNames(bytes.NewReader(r.Table), "the dump's table")
	if err != nil {
		t.Fatal(err)
	}
	if n.Account(1) != "app" || n.Site(100) != "app.Main.fill()V line 12 @7 app.Item" || n.Site(7) != "site#7" || n.Account(9) != "account-9" {
		t.Errorf("names: %q %q %q %q", n.Account(1), n.Site(100), n.Site(7), n.Account(9))
	}

	_, r = loadRuntime(t, runtimeDump(t, items, 2, 8, false))
	if r.Liveness != "sample:8" || r.Rate != 8 || len(r.Refs.Nodes) != 2*(items/8) || r.Table != nil {
		t.Errorf("sampled runtime without a table: %+v", r)
	}
	for _, mode := range []int{0, -1} {
		_, r = loadRuntime(t, runtimeDump(t, items, mode, 1, true))
		if !r.Present || r.Liveness != "off" || len(r.Refs.Nodes) != 0 {
			t.Errorf("liveness off (mode %d): %+v", mode, r)
		}
	}
}

// TestSetApartAndLabels: heapledger's objects (its classes' instances and class objects, the heads
// array, the table's bytes) are set apart, every edge touching them skipped, and the
// application's are not; the labels put each tracked object in its account, site and pair.
func TestSetApartAndLabels(t *testing.T) {
	const items = 16
	d, r := loadRuntime(t, runtimeDump(t, items, 1, 1, true))
	r.SetApart(d)
	ownIDs := map[uint64]bool{liveClass: true, snapsClass: true, trackedClass: true, trackedArrayClass: true, headsClass: true, heads: true, table: true}
	for k := range uint64(2 * items) {
		ownIDs[trackBase+8*k] = true
	}
	var wantBytes uint64
	for v := range uint32(d.Graph.N()) {
		id := d.ObjectID(v)
		if r.Own.Has(v) != ownIDs[id] {
			t.Errorf("%s: set apart %v, want %v", d.Describe(v), r.Own.Has(v), ownIDs[id])
		}
		if ownIDs[id] {
			wantBytes += d.Graph.SizeOf(v)
		}
		for e := d.Graph.Off[v]; e < d.Graph.Off[v+1]; e++ {
			touches := r.Own.Has(v) || r.Own.Has(d.Graph.Succ[e])
			if touches && !d.IsWeak(e) {
				t.Errorf("edge %s → %s touches heapledger's objects and is not skipped", d.Describe(v), d.Describe(d.Graph.Succ[e]))
			}
		}
	}
	if r.OwnObjects != uint64(len(ownIDs)) || r.OwnBytes != wantBytes {
		t.Errorf("%d objects, %d bytes apart; want %d, %d", r.OwnObjects, r.OwnBytes, len(ownIDs), wantBytes)
	}
	l, gr := r.Labels(d.Graph.N())
	if len(l.Nodes) != 2*items || l.Rate != 1 || !slices.Equal(l.Count, []int{1, 2, 2}) || len(gr.Accounts) != 1 || len(gr.Sites) != 2 || len(gr.Pairs) != 2 {
		t.Fatalf("labels: %d nodes, rate %d, counts %v, groups %+v", len(l.Nodes), l.Rate, l.Count, gr)
	}
	for i, v := range l.Nodes {
		keys := l.Keys[l.Off[i]:l.Off[i+1]]
		site := 100
		if d.ObjectID(v) >= payloadBase {
			site = 101
		}
		if i > 0 && v <= l.Nodes[i-1] {
			t.Errorf("labelled nodes out of order at %d", i)
		}
		if len(keys) != 1 || gr.Accounts[l.Groups[DimAccount][keys[0]]] != 1 || gr.Sites[l.Groups[DimSite][keys[0]]] != site || gr.Pairs[l.Groups[DimPair][keys[0]]] != [2]int{1, site} {
			t.Errorf("%s: labels %v", d.Describe(v), keys)
		}
	}
}

// TestLabelsOfObjectsTrackedTwice: an object with two tracking references of one pair (the parts
// of a multianewarray) has its label once; one with references of two pairs has both.
func TestLabelsOfObjectsTrackedTwice(t *testing.T) {
	r := &Runtime{Rate: 1, Refs: Refs{
		Nodes:   []uint32{10, 11, 12, 13, 14},
		Objects: []uint32{7, 3, 7, 3, 0},
		Keys:    []uint64{1<<32 | 5<<1, 1<<32 | 5<<1 | 1, 1<<32 | 5<<1 | 1, 2<<32 | 6<<1, 1<<32 | 9<<1},
	}}
	l, gr := r.Labels(16)
	if !slices.Equal(l.Nodes, []uint32{3, 7}) || !slices.Equal(l.Off, []uint32{0, 2, 3}) {
		t.Fatalf("nodes %v, offsets %v: want 3 (two pairs) and 7 (one pair, twice); the cleared reference left out", l.Nodes, l.Off)
	}
	if len(gr.Pairs) != 2 || gr.Pairs[l.Keys[2]] != [2]int{1, 5} || !slices.Equal(l.Count, []int{2, 2, 2}) {
		t.Errorf("labels %v, pairs %v, counts %v", l.Keys, gr.Pairs, l.Count)
	}
}

// TestNamesFromTablesAndSnapshots: a table file and a snapshot name accounts and sites; names the
// first source gives win, and the differences are counted; a bad table is an error naming it.
func TestNamesFromTablesAndSnapshots(t *testing.T) {
	dir := t.TempDir()
	tab := filepath.Join(dir, "t.tsv")
	os.WriteFile(tab, []byte(testTable), 0o644)
	snap := filepath.Join(dir, "s.snapshot")
	os.WriteFile(snap, []byte("# heapledger snapshot 2\nreason\texit\naccount\t1\tother\naccount\t2\tlib\n"+
		"site\t102\tobject\tlib.X\tlib.Y.z()V\t4\t9\nend\n"), 0o644)
	n, err := TableFile(tab)
	if err != nil {
		t.Fatal(err)
	}
	s, err := SnapshotNames(snap)
	if err != nil {
		t.Fatal(err)
	}
	if differ := n.Add(s); differ != 1 {
		t.Errorf("%d names differ, want 1 (account 1)", differ)
	}
	if n.Account(1) != "app" || n.Account(2) != "lib" || n.Site(102) != "lib.Y.z()V line 9 @4 lib.X" || len(n.From) != 2 {
		t.Errorf("merged names: %q %q %q, from %v", n.Account(1), n.Account(2), n.Site(102), n.From)
	}
	os.WriteFile(tab, []byte("# heapledger table 1\nsite\tx\n"), 0o644)
	if _, err := TableFile(tab); err == nil || !strings.Contains(err.Error(), tab) {
		t.Errorf("a bad table: %v", err)
	}
}
