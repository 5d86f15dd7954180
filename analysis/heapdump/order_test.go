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

// mergeLeading, the one-pass merge for class records that lead the file, leaves every column
// exactly as the general merge does, ties between a class's id and other records' included.
func TestMergeLeadingMatchesGeneral(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for round := range 300 {
		n := 1 + rng.IntN(200)
		k := rng.IntN(n/4 + 1)
		mk := func() *loader {
			r := rand.New(rand.NewPCG(uint64(round), 9))
			l := &loader{}
			l.ids, l.cls, l.aux, l.deg, l.kind = []uint64{0}, []uint32{0}, []uint32{0}, []uint32{0}, []Kind{KindSuperRoot}
			var main []uint64
			id := uint64(0x100)
			for range n {
				id += uint64(8 * r.IntN(3))
				main = append(main, id)
			}
			for i := range k {
				cid := uint64(0x100 + 8*r.IntN(3*n+4))
				if i%2 == 0 {
					cid = main[r.IntN(n)] // a tie with another record
				}
				l.ids, l.cls, l.aux, l.deg, l.kind = append(l.ids, cid), append(l.cls, uint32(1000+i)), append(l.aux, uint32(i)), append(l.deg, uint32(2*i)), append(l.kind, KindClass)
			}
			for i, id := range main {
				l.ids, l.cls, l.aux, l.deg, l.kind = append(l.ids, id), append(l.cls, uint32(i)), append(l.aux, uint32(3*i)), append(l.deg, uint32(5*i)), append(l.kind, KindInstance)
			}
			return l
		}
		fast, general := mk(), mk()
		fast.order()
		mergeLeadingOn = false
		general.order()
		mergeLeadingOn = true
		if !slices.Equal(fast.ids, general.ids) || !slices.Equal(fast.cls, general.cls) || !slices.Equal(fast.aux, general.aux) ||
			!slices.Equal(fast.deg, general.deg) || !slices.Equal(fast.kind, general.kind) || fast.mainInOrder != general.mainInOrder {
			t.Fatalf("round %d (n=%d, %d classes): one-pass merge\n ids %v cls %v\nwant\n ids %v cls %v", round, n, k, fast.ids, fast.cls, general.ids, general.cls)
		}
	}
}

// The two halves that order scans apart must still see a descent between them: records out of
// order only across the middle are sorted in full.
func TestOrderSeesDescentAtMiddle(t *testing.T) {
	for n := 3; n < 40; n++ {
		l := &loader{}
		l.ids, l.cls, l.aux, l.deg, l.kind = []uint64{0}, []uint32{0}, []uint32{0}, []uint32{0}, []Kind{KindSuperRoot}
		for i := 1; i < n; i++ {
			l.ids, l.cls, l.aux, l.deg, l.kind = append(l.ids, uint64(8*i)), append(l.cls, uint32(i)), append(l.aux, 0), append(l.deg, 0), append(l.kind, KindInstance)
		}
		mid := n / 2
		l.ids[mid-1], l.ids[mid] = l.ids[mid], l.ids[mid-1] // the only descent, across the halves
		if mid-1 < 1 {
			continue
		}
		l.order()
		if !slices.IsSorted(l.ids[1:]) {
			t.Fatalf("n=%d: ids left out of order: %v", n, l.ids)
		}
	}
}
