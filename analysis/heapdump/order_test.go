package heapdump

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// Class records set apart from a sorted heap (at the front, as HotSpot writes them, or anywhere)
// are merged into id order with every record whole: the same records, ids ascending, and pass 2's
// counting (mainInOrder) kept.
func TestMergeClasses(t *testing.T) {
	type rec struct {
		id            uint64
		cls, aux, deg uint32
		kind          Kind
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		n := 1 + rng.IntN(80)
		var main, classes []rec
		id := uint64(0x100)
		for i := range n {
			id += uint64(8 * rng.IntN(3)) // equal ids now and then, as in a corrupt dump
			main = append(main, rec{id, uint32(i), uint32(i * 3), uint32(i * 5), KindInstance})
		}
		for i := range rng.IntN(n/4 + 1) { // more than a quarter would be sorted in full
			cid := uint64(0x100 + 8*rng.IntN(3*n+4))
			if i == 0 && round%3 == 0 {
				cid = main[rng.IntN(n)].id // the id of a non-class record
			}
			classes = append(classes, rec{cid, uint32(1000 + i), uint32(7 * i), uint32(11 * i), KindClass})
		}
		// The file order: classes first, or classes scattered among the others.
		var file []rec
		if round%2 == 0 {
			file = append(slices.Clone(classes), main...)
		} else {
			file = slices.Clone(main)
			for _, c := range classes {
				at := rng.IntN(len(file) + 1)
				file = slices.Insert(file, at, c)
			}
		}
		l := &loader{}
		l.ids, l.cls, l.aux, l.deg, l.kind = []uint64{0}, []uint32{0}, []uint32{0}, []uint32{0}, []Kind{KindSuperRoot}
		for _, r := range file {
			l.ids, l.cls, l.aux, l.deg, l.kind = append(l.ids, r.id), append(l.cls, r.cls), append(l.aux, r.aux), append(l.deg, r.deg), append(l.kind, r.kind)
		}
		l.order()
		if !l.mainInOrder || l.inv != nil {
			t.Fatalf("round %d: classes apart from a sorted heap were sorted in full", round)
		}
		var got []rec
		for i := 1; i < len(l.ids); i++ {
			got = append(got, rec{l.ids[i], l.cls[i], l.aux[i], l.deg[i], l.kind[i]})
		}
		for i := 1; i < len(got); i++ {
			a, b := got[i-1], got[i]
			if a.id > b.id {
				t.Fatalf("round %d: out of order at %d: %+v then %+v", round, i, a, b)
			}
		}
		key := func(a, b rec) int { return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.cls, b.cls)) }
		want := slices.Clone(file)
		slices.SortFunc(want, key)
		slices.SortFunc(got, key)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: records changed:\n got %+v\nwant %+v", round, got, want)
		}
		if l.ids[0] != 0 || l.kind[0] != KindSuperRoot {
			t.Fatalf("round %d: the super root moved", round)
		}
	}
}
