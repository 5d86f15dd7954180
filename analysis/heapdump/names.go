package heapdump

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/heapledger/heapledger/analysis/hprof"
)

// EdgeNames names each requested edge (see EdgeName). Edges out of the super root and out of
// class objects are named from memory; edges out of instances and arrays need the object's
// record, so the file is read once for all of them. Of the graph it reads only the edge
// offsets: a caller may have dropped the successors, the sizes and the weak edges.
func (d *Dump) EdgeNames(edges []EdgeRef) ([]string, error) {
	out := make([]string, len(edges))
	want := map[uint64][]int{} // object id → positions in edges
	for i, e := range edges {
		if int(e.From) >= len(d.Kind) || e.Index < 0 || e.Index >= int(d.Graph.Off[e.From+1]-d.Graph.Off[e.From]) {
			return nil, fmt.Errorf("%s: no edge %d out of node %d", d.Path, e.Index, e.From)
		}
		switch d.Kind[e.From] {
		case KindSuperRoot:
			t := d.rootEdges[e.Index]
			var kinds []string
			chosen := false
			for _, r := range d.RootsOf(t) {
				kinds = append(kinds, r.Kind.String())
				chosen = chosen || r.Kind == RootUnreachable
			}
			out[i] = "<GC root: " + strings.Join(dedupe(kinds), ", ") + ">"
			if chosen {
				// No GC root reaches it, so it has no other kind; "<GC root: unreachable>"
				// contradicted itself.
				out[i] = RuleRootEdge
			}
		case KindClass:
			names := d.classEdgeNames(e.From)
			if e.Index < len(names) {
				out[i] = names[e.Index]
			}
		default:
			want[d.ObjectID(e.From)] = append(want[d.ObjectID(e.From)], i)
		}
	}
	if len(want) == 0 {
		return out, nil
	}
	ids := make(map[uint64]bool, len(want))
	for id := range want {
		ids[id] = true
	}
	err := d.records(ids, true, func(rec *hprof.Record) { d.nameRefs(rec, want[rec.ID], edges, out) })
	if err != nil {
		return nil, err
	}
	for i, s := range out {
		if s == "" {
			return nil, fmt.Errorf("%s: cannot name edge %d of %s: its record was not found again", d.Path, edges[i].Index, d.Describe(edges[i].From))
		}
	}
	return out, nil
}

// records reads the records of the objects whose ids are in want (instances and arrays of the
// chosen dump) again from the file and calls fn with each, taking it out of want. Only the
// segments whose ids may hold one are read, when the load noted them, else the file from its
// start until all are found. skipPrim leaves primitive arrays' elements out of the records.
func (d *Dump) records(want map[uint64]bool, skipPrim bool, fn func(rec *hprof.Record)) error {
	f, err := os.Open(d.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	var segs []segmentIDs
	for _, s := range d.segIDs {
		for id := range want {
			if s.lo <= id && id <= s.hi {
				segs = append(segs, s)
				break
			}
		}
	}
	if d.hdr == nil {
		segs = nil // noted by an indexed pass that gave up (Load clears them then)
	}
	var buf []byte
	for _, s := range segs {
		if len(want) == 0 {
			break
		}
		if buf == nil {
			buf = make([]byte, 256<<10)
		}
		r := hprof.NewSegmentReader(f, d.hdr, s.seg, buf)
		r.SkipPrimitiveData = skipPrim
		if err := d.readWanted(r, want, fn); err != nil {
			return err
		}
	}
	if len(want) > 0 {
		r, err := hprof.NewReader(f)
		if err != nil {
			return fmt.Errorf("%s: %w", d.Path, err)
		}
		r.SkipPrimitiveData = skipPrim
		if err := d.readWanted(r, want, fn); err != nil {
			return err
		}
	}
	return nil
}

// readWanted reads r's records of the dump up to its end or until want is empty, calling fn with
// each object record whose id is in want and taking the id out.
func (d *Dump) readWanted(r *hprof.Reader, want map[uint64]bool, fn func(rec *hprof.Record)) error {
	for len(want) > 0 {
		rec, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: reading objects again: %w", d.Path, err)
		}
		if rec.Dump != d.DumpIndex || (rec.Tag != hprof.TagInstanceDump && rec.Tag != hprof.TagObjArrayDump && rec.Tag != hprof.TagPrimArrayDump) {
			continue
		}
		if !want[rec.ID] {
			continue
		}
		delete(want, rec.ID)
		fn(rec)
	}
	return nil
}

// nameRefs names the references of the instance or object array rec for the edges at positions
// pos of edges, into out.
func (d *Dump) nameRefs(rec *hprof.Record, pos []int, edges []EdgeRef, out []string) {
	var names []string
	add := func(name string, id uint64) {
		if _, ok := d.Node(id); ok && id != 0 {
			names = append(names, name)
		}
	}
	switch rec.Tag {
	case hprof.TagInstanceDump:
		refs, _, _ := d.schema.InstanceRefs(rec.Class)
		for _, fr := range refs {
			if int(fr.Offset)+d.IDSize > len(rec.Data) {
				break
			}
			add(d.schema.FieldName(fr.NameID), readID(rec.Data[fr.Offset:], d.IDSize))
		}
	case hprof.TagObjArrayDump:
		for p, j := 0, 0; p+d.IDSize <= len(rec.Data); p, j = p+d.IDSize, j+1 {
			if id := readID(rec.Data[p:], d.IDSize); id != 0 {
				add(fmt.Sprintf("[%d]", j), id)
			}
		}
	}
	names = append(names, "<class>")
	for _, i := range pos {
		if edges[i].Index < len(names) {
			out[i] = names[edges[i].Index]
		}
	}
}

// segmentIDs is a segment of the dump with the smallest and largest object id in it.
type segmentIDs struct {
	seg    hprof.Segment
	lo, hi uint64
}

func newSegmentIDs(seg hprof.Segment, ids []uint64) segmentIDs {
	s := segmentIDs{seg: seg, lo: ^uint64(0)}
	for _, id := range ids {
		s.lo, s.hi = min(s.lo, id), max(s.hi, id)
	}
	return s
}

func (d *Dump) classEdgeNames(n uint32) []string {
	k := d.ClassOfClassObject(n)
	var names []string
	if d.Classes[d.ClassOf[n]].Node != 0 {
		names = append(names, "<class>")
	}
	if k < 0 {
		return names
	}
	sc := d.schema.Classes[d.Classes[k].ID]
	if sc == nil || sc.Dump == nil {
		return names
	}
	classEdges(d.schema, sc.Dump, func(name string, id uint64) {
		if _, ok := d.Node(id); ok {
			names = append(names, name)
		}
	})
	return names
}

func dedupe(s []string) []string {
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}
