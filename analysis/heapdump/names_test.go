package heapdump

import (
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/heapledger/heapledger/analysis/hprof"
	"github.com/heapledger/heapledger/analysis/hprof/hproftest"
	"github.com/heapledger/heapledger/fixtures/heapdumps"
)

// Each segment's id range, noted by pass 1, must hold every object record of the segment and be
// no wider than they are: EdgeNames reads only the segments whose range holds an object it names.
func TestSegmentIDRanges(t *testing.T) {
	d, err := Load(heapdumps.Dump(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.segIDs) < 2 {
		t.Fatalf("%d segments noted; the test needs a dump of several", len(d.segIDs))
	}
	f, err := os.Open(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for k, s := range d.segIDs {
		r := hprof.NewSegmentReader(f, d.hdr, s.seg, buf)
		r.SkipPrimitiveData = true
		lo, hi := ^uint64(0), uint64(0)
		hproftest.Records(t, r, func(rec *hprof.Record) {
			switch rec.Tag {
			case hprof.TagInstanceDump, hprof.TagObjArrayDump, hprof.TagPrimArrayDump, hprof.TagClassDump:
				lo, hi = min(lo, rec.ID), max(hi, rec.ID)
			}
		})
		if lo != s.lo || hi != s.hi {
			t.Errorf("segment %d at offset %d: ids %#x..%#x noted, %#x..%#x in it", k, s.seg.Offset, s.lo, s.hi, lo, hi)
		}
	}
}

// Naming references by the segments that hold their objects gives the names a read of the whole
// file gives.
func TestEdgeNamesBySegmentsMatchWholeFile(t *testing.T) {
	d, err := Load(heapdumps.Dump(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := d.Graph
	rnd := rand.New(rand.NewSource(1))
	var refs []EdgeRef
	for len(refs) < 300 {
		v := uint32(1 + rnd.Intn(g.N()-1))
		if n := len(g.Successors(v)); n > 0 {
			refs = append(refs, EdgeRef{v, rnd.Intn(n)})
		}
	}
	sameEdgeNames(t, d, refs, "by segments and from the whole file", func() { d.segIDs = nil })
}

// sameEdgeNames checks that change, made to d between two namings of refs, changes no name.
func sameEdgeNames(t *testing.T, d *Dump, refs []EdgeRef, what string, change func()) {
	t.Helper()
	before, err := d.EdgeNames(refs)
	if err != nil {
		t.Fatal(err)
	}
	change()
	after, err := d.EdgeNames(refs)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before, after) {
		t.Errorf("names %s differ:\n%v\n%v", what, before, after)
	}
}

// A dump cut short is read in order, after the indexed pass gives up part-way: naming references
// must then read the file in order too, not the segments the indexed pass had noted.
func TestEdgeNamesOfPartialDump(t *testing.T) {
	data, err := os.ReadFile(heapdumps.Dump(t))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cut.hprof")
	if err := os.WriteFile(p, data[:len(data)*3/4], 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := Load(p, Options{AllowPartial: true})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Partial {
		t.Fatal("the cut dump loaded as whole")
	}
	g := d.Graph
	var refs []EdgeRef
	for v := uint32(1); v < uint32(g.N()) && len(refs) < 50; v++ {
		if d.Kind[v] != KindClass && len(g.Successors(v)) > 0 {
			refs = append(refs, EdgeRef{v, 0})
		}
	}
	names, err := d.EdgeNames(refs)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		if n == "" {
			t.Errorf("edge %d of %s has no name", refs[i].Index, d.Describe(refs[i].From))
		}
	}
}
