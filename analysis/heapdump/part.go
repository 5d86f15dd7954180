package heapdump

import (
	"fmt"

	"github.com/heapledger/heapledger/analysis/hprof"
)

// part holds what pass 1 reads from one run of segments while the loader reads an earlier run:
// the same per-node facts, but with class ids rather than class keys, since keys are numbered in
// file order and an earlier run may not have been read yet. The loader's schema is not touched
// either: class dumps are kept and handed to it, in order, by merge. For the same reason an
// instance's reference count is left to prepare (unresolved), which counts its class's reference
// fields; slots for null references are squeezed out after pass 2, so the graph is the same.
type part struct {
	idSize    int
	ids       []uint64
	class     []uint64 // class object id; the element type for primitive arrays
	kind      []Kind
	aux       []uint64 // array length
	deg       []uint32
	roots     []rawRoot
	classes   []partClass
	mainCount uint32
}

// partClass is a CLASS DUMP met in a part, with the position of its node.
type partClass struct {
	node int
	rec  hprof.Record
}

func newPart(segs []hprof.Segment, idSize int) *part {
	var n int64
	for _, s := range segs {
		n += s.Len
	}
	// As for the loader's arrays (see reserve): room for as many objects as the bytes can hold,
	// of which only the pages used become resident.
	est := int(n/minObjectRecord) + 1
	return &part{idSize: idSize, ids: make([]uint64, 0, est), class: make([]uint64, 0, est),
		kind: make([]Kind, 0, est), aux: make([]uint64, 0, est), deg: make([]uint32, 0, est)}
}

func (p *part) add(id, class uint64, k Kind, aux uint64, deg uint32) {
	p.ids = append(p.ids, id)
	p.class = append(p.class, class)
	p.kind = append(p.kind, k)
	p.aux = append(p.aux, aux)
	p.deg = append(p.deg, deg)
	if k != KindClass {
		p.mainCount++
	}
}

// record is loader.record for a part.
func (p *part) record(rec *hprof.Record, r *hprof.Reader) error {
	idSize := p.idSize
	switch {
	case rec.Tag.IsRoot():
		p.roots = append(p.roots, rawRoot{id: rec.ID, kind: rootKinds[rec.Tag], thread: rec.Serial, frame: rec.Frame})
	case rec.Tag == hprof.TagClassDump:
		c := *rec
		c.Data = append([]byte(nil), rec.Data...)
		p.classes = append(p.classes, partClass{node: len(p.ids), rec: c})
		p.add(rec.ID, rec.ID, KindClass, 0, 0)
	case rec.Tag == hprof.TagInstanceDump:
		p.add(rec.ID, rec.Class, KindInstance, 0, unresolved)
	case rec.Tag == hprof.TagObjArrayDump:
		deg := uint32(1)
		for q := 0; q+idSize <= len(rec.Data); q += idSize {
			if r.ReadID(rec.Data[q:]) != 0 {
				deg++
			}
		}
		p.add(rec.ID, rec.Class, KindObjArray, uint64(rec.Length), deg)
	case rec.Tag == hprof.TagPrimArrayDump:
		p.add(rec.ID, uint64(rec.Elem), KindPrimArray, uint64(rec.Length), 1)
	}
	return nil
}

// merge appends part p, read from segments a..b-1, after what the loader holds: class dumps go
// to the schema and class keys are given in file order, as loader.record gives them.
func (l *loader) merge(p *part, a, b int) error {
	base, main := uint32(len(l.ids)-1), l.mainCount
	for i := a; i < b; i++ {
		l.segFirst[i] += base
		l.segMain[i] += main
	}
	next := 0
	for i := range p.ids {
		switch p.kind[i] {
		case KindClass:
			c := &p.classes[next].rec
			next++
			if err := l.schema.Add(c); err != nil {
				return fmt.Errorf("%s: %w", l.path, err)
			}
			n := uint32(1)
			classEdges(l.schema, l.schema.Classes[c.ID].Dump, func(string, uint64) { n++ })
			l.add(c.ID, l.key(c.ID), KindClass, 0, n)
		case KindPrimArray:
			l.add(p.ids[i], l.primClassKey(hprof.Type(p.class[i])), KindPrimArray, p.aux[i], 1)
		default:
			l.add(p.ids[i], l.key(p.class[i]), p.kind[i], p.aux[i], p.deg[i])
		}
	}
	l.roots = append(l.roots, p.roots...)
	return nil
}

// splitSegments cuts segs into up to n runs of about equal bytes and returns the cut points:
// run k is segs[cuts[k]:cuts[k+1]].
func splitSegments(segs []hprof.Segment, n int) []int {
	var total int64
	for _, s := range segs {
		total += s.Len
	}
	cuts := []int{0}
	var done int64
	for i, s := range segs {
		done += s.Len
		if len(cuts) < n && done >= total*int64(len(cuts))/int64(n) && i+1 < len(segs) {
			cuts = append(cuts, i+1)
		}
	}
	return append(cuts, len(segs))
}
