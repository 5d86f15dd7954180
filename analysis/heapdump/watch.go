package heapdump

import (
	"cmp"
	"fmt"
	"slices"

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

// watchLayouts works out, for each class key, the Watch that applies (nil for none): pass 2
// keeps the fields of its instances. Classes number thousands: looking each one's superclasses
// up by name here costs nothing that matters.
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

// keptFields is what one filler kept of the instances of one Watch: their ids and, flattened,
// the values of the Watch's fields in each.
type keptFields struct {
	ids  []uint64
	vals []uint64
}

// keep notes the watched fields of the instance id whose field data is data.
func (fl *filler) keep(at *watchAt, id uint64, data []byte) {
	if fl.kept == nil {
		fl.kept = make([]keptFields, len(fl.l.opt.Watch))
	}
	k := &fl.kept[at.w]
	k.ids = append(k.ids, id)
	for _, f := range at.fields {
		v := uint64(0)
		if f.size > 0 && int(f.off+f.size) <= len(data) {
			for _, b := range data[f.off : f.off+f.size] {
				v = v<<8 | uint64(b)
			}
		}
		k.vals = append(k.vals, v)
	}
}

// gatherWatched merges what the fillers kept, per Watch, in id order (the fillers read the
// segments in whatever order they got them).
func (l *loader) gatherWatched(fills []*filler) {
	if len(l.opt.Watch) == 0 {
		return
	}
	l.kept = make([]keptFields, len(l.opt.Watch))
	for w := range l.opt.Watch {
		nf := len(l.opt.Watch[w].Fields)
		var all keptFields
		for _, fl := range fills {
			if fl.kept != nil {
				all.ids = append(all.ids, fl.kept[w].ids...)
				all.vals = append(all.vals, fl.kept[w].vals...)
			}
		}
		order := make([]int, len(all.ids))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(all.ids[a], all.ids[b]) })
		k := &l.kept[w]
		for _, i := range order {
			k.ids = append(k.ids, all.ids[i])
			k.vals = append(k.vals, all.vals[i*nf:(i+1)*nf]...)
		}
	}
	for _, fl := range fills {
		fl.kept = nil
	}
}

// resolveWatched turns the kept ids into nodes, once the graph is final (unreachable objects may
// have been dropped and the rest renumbered), leaving out instances the graph no longer holds.
func (l *loader) resolveWatched() {
	d := l.d
	if len(l.opt.Watch) == 0 {
		return
	}
	d.Watched = make([]Watched, len(l.opt.Watch))
	for w, k := range l.kept {
		nf := len(l.opt.Watch[w].Fields)
		out := &d.Watched[w]
		out.Values = make([][]uint64, nf)
		for i, id := range k.ids {
			n, ok := d.Node(id)
			if !ok || d.Kind[n] != KindInstance {
				continue
			}
			out.Nodes = append(out.Nodes, n)
			for f := range nf {
				out.Values[f] = append(out.Values[f], k.vals[i*nf+f])
			}
		}
	}
	l.kept = nil
}

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
