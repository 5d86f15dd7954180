package heapdump

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/hprof"
)

// Watch names instance fields whose values Load keeps: the fields Fields of every instance of
// the class named Class (Java form) or of a class derived from it. A field is looked up in the
// instance's class first, then in each superclass, as Java resolves it; a field no class of the
// chain declares reads as 0. The graph keeps no field values, which a caller that knows what the
// objects of a class mean wants for a few classes: heapledger's tracking references carry their
// allocation's account and site in a long field (see package tracked).
type Watch struct {
	Class  string
	Fields []string
}

// Watched is what Load kept for one Watch: the instances the graph holds, in node order, and for
// each field of the Watch the value in each of them (Values[f][i] is field f of Nodes[i]): a
// primitive's bits, zero-extended; a reference's object id.
type Watched struct {
	Nodes  []uint32
	Values [][]uint64
}

// watchAt says where, in the instance data of one class, the fields of the Watch w that applies
// to it sit.
type watchAt struct {
	w      int
	fields []fieldAt
}

// fieldAt is a field's offset in instance data and its size in bytes (0: no class declares it).
type fieldAt struct {
	off, size int32
}

// watchSlots finds where pass 2 puts what it keeps: for each Watch, a bit per node marks its
// instances, and rank counts the bits before each word, so that an instance's values go straight
// to their place in Dump.Watched, allocated once at its final size. Kept in growing lists, with
// their ids to sort them by, a run's tracking references took pass 2 several times the memory
// and the time.
type watchSlots struct {
	bits []heapgraph.EdgeSet
	rank [][]uint32
}

// watchLayouts works out, for each class key, the Watch that applies (nil for none), and makes
// Dump.Watched ready for pass 2 to fill. Classes number thousands: looking each one's
// superclasses up by name here costs nothing that matters.
func (l *loader) watchLayouts() []*watchAt {
	if len(l.opt.Watch) == 0 {
		return nil
	}
	d := l.d
	out := make([]*watchAt, len(d.Classes))
	for k, c := range d.Classes {
		if c.ID == 0 {
			continue
		}
		for w, watch := range l.opt.Watch {
			if !d.derives(int32(k), watch.Class) {
				continue
			}
			at := &watchAt{w: w, fields: make([]fieldAt, len(watch.Fields))}
			for i, name := range watch.Fields {
				at.fields[i] = l.fieldOffset(c.ID, name)
			}
			out[k] = at
			break
		}
	}
	d.Watched = make([]Watched, len(l.opt.Watch))
	for w, watch := range l.opt.Watch {
		d.Watched[w].Values = make([][]uint64, len(watch.Fields))
	}
	if !slices.ContainsFunc(out, func(at *watchAt) bool { return at != nil }) {
		return nil // no class of the dump is watched: a dump of a JVM heapledger did not run, say
	}
	n := len(d.Kind)
	l.slots.bits = make([]heapgraph.EdgeSet, len(l.opt.Watch))
	l.slots.rank = make([][]uint32, len(l.opt.Watch))
	for w := range l.opt.Watch {
		l.slots.bits[w] = heapgraph.NewEdgeSet(n)
	}
	for v := 1; v < n; v++ {
		if at := out[d.ClassOf[v]]; at != nil && d.Kind[v] == KindInstance {
			l.slots.bits[at.w].Add(uint32(v))
		}
	}
	for w, watch := range l.opt.Watch {
		set := l.slots.bits[w]
		rank := make([]uint32, len(set)+1)
		for i, word := range set {
			rank[i+1] = rank[i] + uint32(popcount(word))
		}
		l.slots.rank[w] = rank
		count := int(rank[len(set)])
		nodes := make([]uint32, 0, count)
		for i, word := range set {
			for ; word != 0; word &= word - 1 {
				nodes = append(nodes, uint32(i<<6|bits.TrailingZeros64(word)))
			}
		}
		d.Watched[w].Nodes = nodes
		for f := range watch.Fields {
			d.Watched[w].Values[f] = make([]uint64, count)
		}
	}
	return out
}

// derives reports whether class k is the class named name or derives from it.
func (d *Dump) derives(k int32, name string) bool {
	for steps := 0; k >= 0 && steps <= len(d.Classes); k, steps = d.Classes[k].Super, steps+1 {
		if d.Classes[k].Name == name {
			return true
		}
	}
	return false
}

// fieldOffset finds the field name of instances of class id: its own fields come first in an
// instance's data, then each superclass's, as InstanceRefs lays them out.
func (l *loader) fieldOffset(id uint64, name string) fieldAt {
	s := l.schema
	off := int32(0)
	for cur, steps := s.Classes[id], 0; cur != nil && cur.Dump != nil && steps <= len(s.Classes); steps++ {
		for _, f := range cur.Dump.Fields {
			size := int32(f.Type.Size(s.IDSize))
			if s.FieldName(f.NameID) == name {
				return fieldAt{off: off, size: size}
			}
			off += size
		}
		if cur.Dump.Super == 0 {
			break
		}
		cur = s.Classes[cur.Dump.Super]
	}
	return fieldAt{}
}

// keep puts the watched fields of node's instance, whose field data is data, in its slot. Fillers
// write disjoint slots.
func (fl *filler) keep(at *watchAt, node uint32, data []byte) {
	sl := &fl.l.slots
	set := sl.bits[at.w]
	i := int(sl.rank[at.w][node>>6]) + popcount(set[node>>6]&(1<<(node&63)-1))
	values := fl.d.Watched[at.w].Values
	for f, fa := range at.fields {
		v := uint64(0)
		if fa.size > 0 && int(fa.off+fa.size) <= len(data) {
			for _, b := range data[fa.off : fa.off+fa.size] {
				v = v<<8 | uint64(b)
			}
		}
		values[f][i] = v
	}
}

// remapWatched follows dropUnreachable: the watched instances that stay take their new numbers
// (newIdx keeps the order), the others go with their values.
func (l *loader) remapWatched(seen bitset, newIdx func(uint32) uint32) {
	l.slots = watchSlots{}
	for w := range l.d.Watched {
		wd := &l.d.Watched[w]
		k := 0
		for i, v := range wd.Nodes {
			if !seen.has(v) {
				continue
			}
			wd.Nodes[k] = newIdx(v)
			for f := range wd.Values {
				wd.Values[f][k] = wd.Values[f][i]
			}
			k++
		}
		wd.Nodes = wd.Nodes[:k]
		for f := range wd.Values {
			wd.Values[f] = wd.Values[f][:k]
		}
	}
}

func popcount(w uint64) int { return bits.OnesCount64(w) }

// Static returns the value of the static field field of the class named class (Java form), as
// the dump's CLASS DUMP holds it.
func (d *Dump) Static(class, field string) (hprof.Value, bool) {
	for _, c := range d.Classes {
		if c.Name != class || c.ID == 0 {
			continue
		}
		sc := d.schema.Classes[c.ID]
		if sc == nil || sc.Dump == nil {
			continue
		}
		for _, st := range sc.Dump.Statics {
			if d.schema.FieldName(st.NameID) == field {
				return st.Value, true
			}
		}
	}
	return hprof.Value{}, false
}

// ArrayData returns the elements of primitive array n as the dump stores them (big-endian) and
// their type. The graph keeps no array contents: the array's record is read again from the file.
func (d *Dump) ArrayData(n uint32) ([]byte, hprof.Type, error) {
	if int(n) >= len(d.Kind) || d.Kind[n] != KindPrimArray {
		return nil, 0, fmt.Errorf("%s: %s is not a primitive array", d.Path, d.Describe(n))
	}
	var data []byte
	var elem hprof.Type
	found := false
	err := d.records(map[uint64]bool{d.ObjectID(n): true}, false, func(rec *hprof.Record) {
		data, elem, found = slices.Clone(rec.Data), rec.Elem, true
	})
	if err != nil {
		return nil, 0, err
	}
	if !found {
		return nil, 0, fmt.Errorf("%s: the record of %s was not found again", d.Path, d.Describe(n))
	}
	return data, elem, nil
}
