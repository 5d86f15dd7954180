package heapdump

import (
	"slices"
	"testing"

	"github.com/heapledger/heapledger/analysis/hprof"
	"github.com/heapledger/heapledger/analysis/hprof/hproftest"
	"github.com/heapledger/heapledger/fixtures/heapdumps"
)

// Parking moves the ids, their index and the kinds to temporary files; what comes back must be
// what went out, and the class-object test must not need them meanwhile. The Java fixture's ids
// are found through ranks; a dump of a few objects gigabytes apart, through the coarse table.
func TestParkRoundTrips(t *testing.T) {
	b := hproftest.New(8)
	b.LoadClass(0x10, "java/lang/Object")
	b.StartSegment(false)
	b.Class(0x10, 0, "", nil, nil)
	for i := uint64(1); i <= 3; i++ {
		b.Instance(i<<33, 0x10)
		b.Root(hprof.TagRootJNIGlobal, i<<33)
	}
	b.EndSegment()
	b.EndDump()
	for _, c := range []struct {
		path  string
		ranks bool
	}{{heapdumps.Dump(t), true}, {write(t, b.Bytes()), false}} {
		for _, views := range []bool{false, true} {
			d, err := Load(c.path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if (d.ids.ranks.dir != nil) != c.ranks || (d.ids.bucket != nil) == c.ranks {
				t.Fatalf("%s: found through ranks %v, want %v", c.path, d.ids.ranks.dir != nil, c.ranks)
			}
			parkRoundTrips(t, d, views)
		}
	}
}

// parkRoundTrips parks d and brings it back, as views of the files with views.
func parkRoundTrips(t *testing.T, d *Dump, views bool) {
	unpark := d.Unpark
	if views {
		unpark = d.UnparkViews
	}
	ids, kinds := d.ObjectIDs(), slices.Clone(d.Kind)
	var names []string
	for n := range kinds {
		names = append(names, d.Describe(uint32(n)))
	}
	d.Park()
	d.Park() // a second call changes nothing
	if d.Kind != nil || d.ids.low != nil || d.ids.full != nil || d.ids.bucket != nil || d.ids.ranks.dir != nil || d.ids.ranks.words != nil {
		t.Fatal("Park left the columns in memory")
	}
	for n, k := range kinds {
		if d.IsClassObject(uint32(n)) != (k == KindClass) {
			t.Fatalf("IsClassObject(%d) = %v while parked, kind %v", n, d.IsClassObject(uint32(n)), k)
		}
	}
	if err := unpark(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.ObjectIDs(), ids) || !slices.Equal(d.Kind, kinds) {
		t.Fatal("ids or kinds came back changed")
	}
	// Found through the ranks, the nodes' ids come from them: the low bits stay out.
	if d.ids.ranks.dir != nil && d.ids.low != nil {
		t.Fatal("the low bits came back, where the ranks give the ids")
	}
	for n, want := range names {
		if got := d.Describe(uint32(n)); got != want {
			t.Fatalf("node %d is %q after Unpark, was %q", n, got, want)
		}
		if id := ids[n]; n > 0 {
			if m, ok := d.Node(id); !ok || d.ObjectID(m) != id {
				t.Fatalf("id 0x%x is not found again after Unpark", id)
			}
		}
	}
	if err := unpark(); err != nil {
		t.Fatalf("a second Unpark: %v", err)
	}
}
